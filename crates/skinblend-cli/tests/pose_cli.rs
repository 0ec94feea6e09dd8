//! `skinblend rigs`, and `pose` beyond one time: `--rest`, frames (`--fps`, `--frames`,
//! `{frame}`), the summary and `--json`, and the Khronos validator on the rigs and their poses.
//! Where every command writes (never over its input): output_guard_cli.rs.

mod support;

use skinblend_testkit::{file_names, glb_chunks, models_dir, ScratchDir, SAMPLES};
use support::{arg, assert_usage, skinblend, stderr, write_rigs};

use std::path::{Path, PathBuf};

fn rigs_writes_every_built_in_rig_as_an_animated_glb() {
    let dir = ScratchDir::new("cli-rigs");
    write_rigs(&dir);
    assert_eq!(
        file_names(&dir),
        [
            "bend_coarse.glb",
            "bend_fine.glb",
            "shear_cap.glb",
            "twist_coarse.glb",
            "twist_fine.glb"
        ]
    );
    let info = skinblend(&["info", arg(&dir.join("twist_fine.glb")), "--json"]);
    assert!(info.status.success(), "{}", stderr(&info));
    let value: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(value["skins"][0]["joints"], 2);
    assert_eq!(value["animations"][0]["name"], "sweep");
    // Plurals in the text: one channel, one influence set; two joints.
    let info = skinblend(&["info", arg(&dir.join("twist_fine.glb"))]);
    let text = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(
        text.contains(", 1 channel,") && text.contains("1 influence set,"),
        "{text}"
    );
    assert!(
        text.contains("2 joints,") && text.contains("at most 2 influences"),
        "{text}"
    );
    assert!(
        !text.contains(" 1 channels") && !text.contains(" 1 influence sets"),
        "{text}"
    );
    // And in centers' line: one primitive.
    let run = skinblend(&[
        "centers",
        arg(&dir.join("twist_fine.glb")),
        "-o",
        arg(&dir.join("centers.glb")),
    ]);
    assert!(stderr(&run).contains("of 1 primitive,"), "{}", stderr(&run));
}

/// A copy of `model` in `dir` with its animations removed from the JSON (buffers kept).
fn without_animations(model: &Path, dir: &Path) -> PathBuf {
    let bytes = std::fs::read(model).unwrap();
    let name = model.file_name().unwrap().to_string_lossy().into_owned();
    let copy = dir.join(format!("still-{name}"));
    if bytes.starts_with(b"glTF") {
        let (json, bin) = glb_chunks(&bytes).expect("a GLB");
        let mut json: serde_json::Value = serde_json::from_slice(json).unwrap();
        assert!(json.as_object_mut().unwrap().remove("animations").is_some());
        std::fs::write(
            &copy,
            skinblend_testkit::glb_bytes(&serde_json::to_vec(&json).unwrap(), bin),
        )
        .unwrap();
    } else {
        let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert!(json.as_object_mut().unwrap().remove("animations").is_some());
        for buffer in json["buffers"].as_array().unwrap() {
            if let Some(uri) = buffer["uri"].as_str() {
                assert!(uri.starts_with("data:"), "{name}: external buffer {uri}");
            }
        }
        std::fs::write(&copy, serde_json::to_vec(&json).unwrap()).unwrap();
    }
    copy
}

fn rest_equals_posing_a_copy_without_animations_on_every_sample_model_and_rig() {
    let out = ScratchDir::new("cli-rest");
    let mut models: Vec<PathBuf> = Vec::new();
    write_rigs(&out);
    models.push(out.join("twist_coarse.glb"));
    models.push(out.join("shear_cap.glb"));
    if let Some(dir) = models_dir() {
        models.extend(SAMPLES.iter().map(|name| dir.join(name)));
    }
    for model in &models {
        let name = model.file_name().unwrap().to_string_lossy().into_owned();
        let still = without_animations(model, &out);
        for method in ["linear", "dq"] {
            // OBJ holds only the posed geometry, so the two files must be equal byte for byte.
            let rest = out.join(format!("{name}-{method}-rest.obj"));
            let run = skinblend(&[
                "pose",
                arg(model),
                "--rest",
                "--method",
                method,
                "-o",
                arg(&rest),
            ]);
            assert!(run.status.success(), "{name}: {}", stderr(&run));
            assert!(stderr(&run).contains("the rest pose"), "{}", stderr(&run));
            let reference = out.join(format!("{name}-{method}-still.obj"));
            let run = skinblend(&[
                "pose",
                arg(&still),
                "--method",
                method,
                "-o",
                arg(&reference),
            ]);
            assert!(run.status.success(), "{name}: {}", stderr(&run));
            assert!(
                std::fs::read(&rest).unwrap() == std::fs::read(&reference).unwrap(),
                "{name} {method}: --rest differs from the copy without animations"
            );
            // And the animation does move it: time 1 s is another pose (shows the test can
            // tell poses apart).
            let animated = out.join(format!("{name}-{method}-animated.obj"));
            let run = skinblend(&["pose", arg(model), "--time", "1", "-o", arg(&animated)]);
            assert!(run.status.success(), "{name}: {}", stderr(&run));
            if method == "linear" {
                assert!(
                    std::fs::read(&animated).unwrap() != std::fs::read(&rest).unwrap(),
                    "{name}: time 1 s equals the rest pose"
                );
            }
        }
    }
}

fn rest_is_bad_usage_with_animation_or_time() {
    let out = ScratchDir::new("cli-rest-usage");
    let rig = write_rigs(&out);
    let target = out.join("x.glb");
    for extra in [
        &["--animation", "0"][..],
        &["--time", "1"][..],
        &["--fps", "24"][..],
    ] {
        let mut args = vec!["pose", arg(&rig), "--rest", "-o", arg(&target)];
        args.extend_from_slice(extra);
        let run = skinblend(&args);
        assert_eq!(run.status.code(), Some(2), "{extra:?}: {}", stderr(&run));
        assert!(!target.exists());
    }
}

fn frames_write_one_file_per_frame_each_equal_to_a_single_pose_at_its_time() {
    let out = ScratchDir::new("cli-frames");
    let rig = write_rigs(&out);
    let frames = out.join("frames");
    std::fs::create_dir_all(&frames).unwrap();
    let template = frames.join("twist_{frame}.glb");
    // The twist sweeps 180° in 2 s: at 4 fps frames 0..8.
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--fps",
        "4",
        "--method",
        "dq",
        "--json",
        "-o",
        arg(&template),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(stderr(&run).contains("9 frames (0..8)"), "{}", stderr(&run));
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = (0..=8).map(|f| format!("twist_{f:04}.glb")).collect();
    assert_eq!(names, expected);
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let poses = summary["poses"].as_array().unwrap();
    assert_eq!(poses.len(), 9);
    for pose in poses {
        let frame = pose["frame"].as_u64().unwrap();
        let time = pose["time_s"].as_f64().unwrap();
        assert!((time - frame as f64 / 4.0).abs() < 1e-6, "{pose}");
        let single = out.join(format!("single_{frame}.glb"));
        let run = skinblend(&[
            "pose",
            arg(&rig),
            "--time",
            &pose["time_s"].to_string(),
            "--method",
            "dq",
            "-o",
            arg(&single),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let file = PathBuf::from(pose["output"].as_str().unwrap());
        assert!(
            std::fs::read(&file).unwrap() == std::fs::read(&single).unwrap(),
            "frame {frame}: differs from pose --time {time}"
        );
    }
    // Frames 0 and 8 differ (the sweep moves), so the byte comparison can fail.
    assert!(
        std::fs::read(frames.join("twist_0000.glb")).unwrap()
            != std::fs::read(frames.join("twist_0008.glb")).unwrap()
    );
    // CoR: the centers computed once for all frames give the files a single pose gives.
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--frames",
        "3..4",
        "--fps",
        "4",
        "--method",
        "cor",
        "-o",
        arg(&frames.join("cor_{frame}.glb")),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let single = out.join("single_cor.glb");
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--time",
        "1",
        "--method",
        "cor",
        "-o",
        arg(&single),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        std::fs::read(frames.join("cor_0004.glb")).unwrap() == std::fs::read(&single).unwrap(),
        "CoR frame 4 differs from pose --time 1"
    );
    // --frames alone: 24 fps, only those frames.
    let some = out.join("some");
    std::fs::create_dir_all(&some).unwrap();
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--frames",
        "46..48",
        "-o",
        arg(&some.join("t{frame}.obj")),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let mut names: Vec<String> = std::fs::read_dir(&some)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["t0046.obj", "t0047.obj", "t0048.obj"]);
    // Past the end (2 s at 24 fps is frame 48): an error naming the range, nothing written.
    let past = out.join("past");
    std::fs::create_dir_all(&past).unwrap();
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--frames",
        "40..60",
        "-o",
        arg(&past.join("t{frame}.glb")),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("0..48"), "{}", stderr(&run));
    assert_eq!(std::fs::read_dir(&past).unwrap().count(), 0);
}

fn bad_frame_templates_are_refused() {
    let out = ScratchDir::new("cli-templates");
    let rig = write_rigs(&out);
    let cases: &[(&[&str], &str)] = &[
        (&["--fps", "24", "-o", "OUT/plain.glb"], "{frame}"),
        (&["-o", "OUT/t_{frame}.glb"], "needs --fps or --frames"),
        (
            &["--fps", "24", "-o", "OUT/t_{frames}.glb"],
            "only placeholder",
        ),
        (
            &["--fps", "24", "-o", "OUT/t_{frame}_{}.glb"],
            "only placeholder",
        ),
        (
            &["--fps", "24", "-o", "OUT/{frame}/t.glb"],
            "not in the folder",
        ),
        (&["--frames", "5..2", "-o", "OUT/t_{frame}.glb"], "A..B"),
        (&["--frames", "x", "-o", "OUT/t_{frame}.glb"], "A..B"),
        (&["--fps", "0", "-o", "OUT/t_{frame}.glb"], "0"),
        (
            &["--fps", "24", "--time", "1", "-o", "OUT/t_{frame}.glb"],
            "--time",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["pose".to_owned(), arg(&rig).to_owned()];
        args.extend(extra.iter().map(|a| a.replace("OUT", arg(&out))));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = skinblend(&refs);
        assert_usage(&run, needle);
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            5,
            "{extra:?}: only the rigs are there"
        );
    }
    // An unknown extension is bad usage (exit 2), as for a single file.
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--fps",
        "24",
        "-o",
        arg(&out.join("t_{frame}.png")),
    ]);
    assert_usage(&run, "extension");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 5);
}

fn pose_prints_a_summary_and_json_diagnostics() {
    let out = ScratchDir::new("cli-summary");
    let rig = write_rigs(&out);
    let posed = out.join("posed.glb");
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--time",
        "2",
        "--method",
        "linear",
        "-o",
        arg(&posed),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let line = stderr(&run);
    assert_eq!(line.lines().count(), 1, "{line}");
    // The 180° twist under LBS collapses the joint ring: 12 singular normal matrices, as the
    // evidence table says.
    assert!(
        line.contains("animation 0 \"sweep\" at 2 s")
            && line.contains("1 skinned node,")
            && line.contains("60 vertices")
            && line.contains("12 singular normal matrices"),
        "{line}"
    );
    assert!(run.stdout.is_empty(), "the summary goes to stderr");
    let run = skinblend(&[
        "pose",
        arg(&rig),
        "--time",
        "2",
        "--json",
        "-o",
        arg(&posed),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let value: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(value["method"], "linear");
    assert_eq!(value["animation_name"], "sweep");
    let pose = &value["poses"][0];
    assert_eq!(pose["time_s"], 2.0);
    assert_eq!(pose["diagnostics"]["singular_normal_matrices"], 12);
    assert_eq!(pose["nodes"][0]["primitives"][0]["vertices"], 60);
}

/// The rigs as written, and their rest pose, frames and centers, pass the Khronos
/// glTF-Validator (tools/validate-gltf.mjs) with no error and no warning; under CI=true the
/// validator must be installed (`.ci/run` does it).
fn rigs_and_their_poses_pass_the_khronos_validator() {
    let Some(script) = skinblend_testkit::gltf_validator() else {
        return;
    };
    let out = ScratchDir::new("cli-validate");
    write_rigs(&out);
    let posed = out.join("posed");
    std::fs::create_dir_all(&posed).unwrap();
    for name in ["twist_coarse", "shear_cap"] {
        let rig = out.join(format!("{name}.glb"));
        let rest = posed.join(format!("{name}-rest.glb"));
        let frames = posed.join(format!("{name}-{{frame}}.gltf"));
        for args in [
            vec!["pose", arg(&rig), "--rest", "-o", arg(&rest)],
            vec![
                "pose",
                arg(&rig),
                "--frames",
                "0..1",
                "--method",
                "dq",
                "-o",
                arg(&frames),
            ],
        ] {
            let run = skinblend(&args);
            assert!(run.status.success(), "{}", stderr(&run));
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .chain(std::fs::read_dir(&posed).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert_eq!(files.len(), 5 + 2 * 3, "{files:?}");
    let report = skinblend_testkit::validator_report(&script, &files);
    assert_eq!(
        report.matches(": 0 errors, 0 warnings").count(),
        files.len(),
        "{report}"
    );
}

skinblend_testkit::test_main!(
    rigs_writes_every_built_in_rig_as_an_animated_glb,
    rest_equals_posing_a_copy_without_animations_on_every_sample_model_and_rig,
    rest_is_bad_usage_with_animation_or_time,
    frames_write_one_file_per_frame_each_equal_to_a_single_pose_at_its_time,
    bad_frame_templates_are_refused,
    pose_prints_a_summary_and_json_diagnostics,
    rigs_and_their_poses_pass_the_khronos_validator,
);
