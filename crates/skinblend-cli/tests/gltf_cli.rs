//! `skinblend info` and `skinblend pose`: exit codes (0 success, 1 bad input with one line
//! naming the file and the place, 2 bad usage), outputs, and the Khronos validator on the
//! exports of every sample model.

mod support;

use skinblend_testkit::{models_dir, ScratchDir, SAMPLES};
use support::{skinblend, stderr};

use std::path::Path;

fn info_describes_every_sample_model() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let path = dir.join(name);
        let text = skinblend(&["info", path.to_str().unwrap()]);
        assert!(text.status.success(), "{name}: {}", stderr(&text));
        let out = String::from_utf8(text.stdout).unwrap();
        assert!(out.contains("skin 0") && out.contains("joints"), "{out}");
        let json = skinblend(&["info", path.to_str().unwrap(), "--json"]);
        assert!(json.status.success());
        let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert!(value["skins"][0]["joints"].as_u64().unwrap() >= 2);
        assert!(!value["animations"].as_array().unwrap().is_empty());
        assert_eq!(
            value["repairs"]["vertices_renormalized"], 0,
            "{name}: samples need no repair"
        );
    }
}

fn pose_writes_glb_gltf_and_obj_and_the_done_when_command_works() {
    let Some(dir) = models_dir() else { return };
    let out = ScratchDir::new("cli-pose");
    let cesium = dir.join("CesiumMan/CesiumMan.glb");
    let glb = out.join("cm.glb");
    // The "done when" command.
    let run = skinblend(&[
        "pose",
        cesium.to_str().unwrap(),
        "--time",
        "0.5",
        "--method",
        "dq",
        "-o",
        glb.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");
    for (extension, magic) in [("gltf", &b"{"[..]), ("obj", &b"# posed"[..])] {
        let file = out.join(format!("cm.{extension}"));
        let run = skinblend(&[
            "pose",
            cesium.to_str().unwrap(),
            "--animation",
            "0",
            "--time",
            "1",
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        assert!(std::fs::read(&file).unwrap().starts_with(magic));
    }
    // Fox's clips by name.
    let fox = dir.join("Fox/Fox.glb");
    for clip in ["Survey", "Walk", "Run"] {
        let file = out.join(format!("fox-{clip}.glb"));
        let run = skinblend(&[
            "pose",
            fox.to_str().unwrap(),
            "--animation",
            clip,
            "--time",
            "0.3",
            "-o",
            file.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    // No temporary files left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Runs the Khronos glTF-Validator (tools/validate-gltf.mjs) on the export of every sample
/// model; under CI=true the validator must be installed (`.ci/run` does it).
fn exports_of_every_sample_pass_the_khronos_validator() {
    let Some(dir) = models_dir() else { return };
    let Some(script) = skinblend_testkit::gltf_validator() else {
        return;
    };
    let out = ScratchDir::new("cli-validate");
    let mut files = Vec::new();
    for name in SAMPLES {
        for (method, extension) in [("dq", "glb"), ("linear", "gltf")] {
            let stem = Path::new(name)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let file = out.join(format!("{stem}-{method}.{extension}"));
            let run = skinblend(&[
                "pose",
                dir.join(name).to_str().unwrap(),
                "--time",
                "0.5",
                "--method",
                method,
                "-o",
                file.to_str().unwrap(),
            ]);
            assert!(run.status.success(), "{}", stderr(&run));
            files.push(file);
        }
        // The copy with precomputed centers of rotation (`skinblend centers`), and a pose of it.
        let stem = Path::new(name).file_stem().unwrap().to_string_lossy();
        let centers = out.join(format!("{stem}-centers.glb"));
        let run = skinblend(&[
            "centers",
            dir.join(name).to_str().unwrap(),
            "-o",
            centers.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        assert!(stderr(&run).contains("_SKINBLEND_COR"), "{}", stderr(&run));
        let posed = out.join(format!("{stem}-cor.glb"));
        let run = skinblend(&[
            "pose",
            centers.to_str().unwrap(),
            "--method",
            "cor",
            "-o",
            posed.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        files.extend([centers, posed]);
    }
    let report = skinblend_testkit::validator_report(&script, &files);
    eprintln!("{report}");
    assert_eq!(
        report.matches(": 0 errors").count(),
        files.len(),
        "{report}"
    );
}

fn bad_input_exits_1_with_one_line_naming_the_file_and_place() {
    let out = ScratchDir::new("cli-bad");
    let broken = out.join("broken.glb");
    // A GLB header declaring a length under 12 (a known gltf 1.4.1 panic).
    let mut bytes = b"glTF".to_vec();
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend_from_slice(&8u32.to_le_bytes());
    std::fs::write(&broken, &bytes).unwrap();
    let target = out.join("x.glb");
    for args in [
        vec!["info", broken.to_str().unwrap()],
        vec![
            "pose",
            broken.to_str().unwrap(),
            "-o",
            target.to_str().unwrap(),
        ],
    ] {
        let run = skinblend(&args);
        assert_eq!(run.status.code(), Some(1), "{args:?}");
        let message = stderr(&run);
        assert_eq!(message.trim_end().lines().count(), 1, "one line: {message}");
        assert!(
            message.contains("broken.glb") && message.contains("GLB byte 8"),
            "{message}"
        );
        assert!(!message.contains("panicked"), "{message}");
    }
    assert!(!target.exists(), "no output on failure");
    let missing = skinblend(&["info", "/nonexistent/model.glb"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("/nonexistent/model.glb"));
}

fn unknown_animation_exits_1_and_bad_usage_exits_2() {
    let Some(dir) = models_dir() else { return };
    let fox = dir.join("Fox/Fox.glb");
    let out = ScratchDir::new("cli-usage");
    let target = out.join("x.glb");
    let run = skinblend(&[
        "pose",
        fox.to_str().unwrap(),
        "--animation",
        "Dance",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    let message = stderr(&run);
    assert!(
        message.contains("Dance") && message.contains("Survey") && message.contains("Fox.glb"),
        "{message}"
    );
    assert_eq!(message.trim_end().lines().count(), 1);
    let run = skinblend(&[
        "pose",
        fox.to_str().unwrap(),
        "--method",
        "nope",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2), "unknown method is bad usage");
    let run = skinblend(&["pose", fox.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2), "missing -o is bad usage");
    let run = skinblend(&[
        "pose",
        fox.to_str().unwrap(),
        "-o",
        out.join("x.png").to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(2),
        "unknown output extension is bad usage"
    );
    assert!(stderr(&run).contains("x.png"));
}

/// A file that is not glTF at all (a text file, a PNG, skinblend's own .obj output, an empty
/// file) is exit 1 with one line naming the file and saying it is not glTF 2.0, on every
/// command that reads one, instead of the JSON parser's "expected value at line 1 column 1".
fn a_file_that_is_not_gltf_says_so_on_every_command() {
    let out = ScratchDir::new("cli-not-gltf");
    let rigs = skinblend(&["rigs", "-o", out.to_str().unwrap()]);
    assert!(rigs.status.success(), "{}", stderr(&rigs));
    let obj = out.join("posed.obj");
    let pose = skinblend(&[
        "pose",
        out.join("twist_coarse.glb").to_str().unwrap(),
        "-o",
        obj.to_str().unwrap(),
    ]);
    assert!(pose.status.success(), "{}", stderr(&pose));
    let notes = out.join("notes.txt");
    std::fs::write(&notes, "buy milk\n").unwrap();
    let png = out.join("picture.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let empty = out.join("empty.glb");
    std::fs::write(&empty, b"").unwrap();
    for file in [&notes, &png, &obj, &empty] {
        let shown = file.to_str().unwrap();
        let target = out.join("never.glb");
        let report = out.join("never-report");
        for args in [
            vec!["info", shown],
            vec!["pose", shown, "-o", target.to_str().unwrap()],
            vec!["centers", shown, "-o", target.to_str().unwrap()],
            vec!["compare", shown, "-o", report.to_str().unwrap()],
        ] {
            let run = skinblend(&args);
            let text = stderr(&run);
            assert_eq!(run.status.code(), Some(1), "{args:?}: {text}");
            assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
            // `compare` says "comparing methods on FILE: loading: ..." before it.
            assert!(
                text.starts_with("skinblend: ")
                    && text.contains(shown)
                    && text.contains(": not glTF 2.0 (a .gltf JSON file or a .glb): "),
                "{args:?}: {text}"
            );
            assert!(!text.contains("expected value"), "{args:?}: {text}");
        }
        assert!(!out.join("never.glb").exists());
    }
}

skinblend_testkit::test_main!(
    info_describes_every_sample_model,
    pose_writes_glb_gltf_and_obj_and_the_done_when_command_works,
    exports_of_every_sample_pass_the_khronos_validator,
    bad_input_exits_1_with_one_line_naming_the_file_and_place,
    unknown_animation_exits_1_and_bad_usage_exits_2,
    a_file_that_is_not_gltf_says_so_on_every_command,
);
