//! Where every command that writes writes: never over its input (by any name, a frame of a
//! template or a report folder included), in an output folder it creates, and only with an
//! extension it writes. The guard reaches the files a `.gltf` reads too: an output that is its
//! external buffer is refused by the glTF crate's writers (`GltfError::OutputIsInput`), which
//! the CLI reports as bad usage (exit 2), the buffer unchanged.

mod support;

use std::path::{Path, PathBuf};

use skinblend_testkit::{glb_chunks, ScratchDir};
use support::{arg, assert_usage, skinblend, stderr, write_rigs};

/// The built-in twist rig as `dir/copy.gltf` with its buffer in `dir/data.glb` (an output
/// extension the commands accept); returns both paths.
fn gltf_with_external_buffer(dir: &Path) -> (PathBuf, PathBuf) {
    let glb = std::fs::read(write_rigs(&dir.join("rigs"))).unwrap();
    let (json, bin) = glb_chunks(&glb).expect("a GLB");
    let mut document: serde_json::Value = serde_json::from_slice(json).unwrap();
    let length = document["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
    let bin = &bin[..length];
    document["buffers"][0]["uri"] = serde_json::json!("data.glb");
    let gltf = dir.join("copy.gltf");
    let buffer = dir.join("data.glb");
    std::fs::write(&gltf, serde_json::to_vec(&document).unwrap()).unwrap();
    std::fs::write(&buffer, bin).unwrap();
    (gltf, buffer)
}

#[test]
fn writing_over_the_external_buffer_of_a_gltf_is_bad_usage() {
    let dir = ScratchDir::new("cli-guard-buffer");
    let (gltf, buffer) = gltf_with_external_buffer(&dir);
    std::fs::create_dir(dir.join("sub")).unwrap();
    let before = std::fs::read(&buffer).unwrap();
    let through_dot_dot = dir.join("sub/../data.glb");
    let runs = [
        vec!["pose", arg(&gltf), "-o", arg(&buffer)],
        vec!["pose", arg(&gltf), "-o", arg(&through_dot_dot)],
        vec!["pose", arg(&gltf), "--rest", "-o", arg(&buffer)],
        vec!["centers", arg(&gltf), "-o", arg(&buffer)],
    ];
    for args in runs {
        let run = skinblend(&args);
        let text = stderr(&run);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {text}");
        assert!(
            text.contains("the output is the input file") && text.contains("data.glb"),
            "{args:?}: {text}"
        );
        assert_eq!(std::fs::read(&buffer).unwrap(), before, "{args:?}");
    }
    // Another output is written.
    let run = skinblend(&["pose", arg(&gltf), "-o", arg(&dir.join("posed.glb"))]);
    assert!(run.status.success(), "{}", stderr(&run));
}

/// A frame template one of whose frames is the `.gltf`'s external buffer is refused before
/// any frame is written.
#[test]
fn a_frame_that_would_replace_the_external_buffer_is_refused_before_any_frame() {
    let dir = ScratchDir::new("cli-guard-frames");
    let (gltf, buffer) = gltf_with_external_buffer(&dir);
    let mut document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&gltf).unwrap()).unwrap();
    document["buffers"][0]["uri"] = serde_json::json!("frame_0002.glb");
    std::fs::write(&gltf, serde_json::to_vec(&document).unwrap()).unwrap();
    let frame_buffer = dir.join("frame_0002.glb");
    std::fs::rename(&buffer, &frame_buffer).unwrap();
    let before = std::fs::read(&frame_buffer).unwrap();
    let template = dir.join("frame_{frame}.glb");
    let run = skinblend(&["pose", arg(&gltf), "--fps", "4", "-o", arg(&template)]);
    let text = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{text}");
    assert!(text.contains("the output is the input file"), "{text}");
    assert_eq!(std::fs::read(&frame_buffer).unwrap(), before);
    assert!(
        !dir.join("frame_0000.glb").exists(),
        "no frame written before the refusal"
    );
}

/// Every command that writes refuses an output that is its input, by any name (the path, a
/// `..` path, a symbolic and a hard link, a frame of a template), and a report folder that is
/// the input or holds it; the input is left untouched.
#[test]
fn every_command_that_writes_refuses_to_write_over_its_input() {
    let out = ScratchDir::new("cli-same");
    let rig = write_rigs(&out);
    let original = std::fs::read(&rig).unwrap();
    let sub = out.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let dotted = sub.join("..").join("twist_coarse.glb");
    let link = out.join("link.glb");
    let hard = out.join("hard.glb");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&rig, &link).unwrap();
        std::fs::hard_link(&rig, &hard).unwrap();
    }
    let mut aliases = vec![rig.clone(), dotted];
    if cfg!(unix) {
        aliases.push(link.clone());
        aliases.push(hard.clone());
    }
    for target in &aliases {
        for args in [
            vec!["pose", arg(&rig), "-o", arg(target)],
            vec!["pose", arg(&rig), "--rest", "--output", arg(target)],
            vec!["centers", arg(&rig), "--out", arg(target)],
        ] {
            let run = skinblend(&args);
            assert_usage(&run, "the output is the input file");
            assert_eq!(stderr(&run).lines().count(), 1, "{}", stderr(&run));
        }
    }
    // The input through the link, the output the real file.
    if cfg!(unix) {
        let run = skinblend(&["pose", arg(&link), "-o", arg(&rig)]);
        assert_usage(&run, "the output is the input file");
    }
    // A frame template whose frame 0 is the input.
    let framed = out.join("frame_0000.glb");
    std::fs::copy(&rig, &framed).unwrap();
    let run = skinblend(&[
        "pose",
        arg(&framed),
        "--frames",
        "0..1",
        "-o",
        arg(&out.join("frame_{frame}.glb")),
    ]);
    assert_usage(&run, "the output is the input file");
    assert!(!out.join("frame_0001.glb").exists(), "nothing written");
    // A report folder that is the input file.
    let run = skinblend(&["compare", arg(&rig), "--frames", "2", "-o", arg(&rig)]);
    assert_usage(&run, "the report folder is the input file");
    assert!(std::fs::read(&rig).unwrap() == original, "input untouched");
    // A new file beside the input is fine.
    let run = skinblend(&["pose", arg(&rig), "-o", arg(&out.join("posed.glb"))]);
    assert!(run.status.success(), "{}", stderr(&run));
    // A report folder that holds the input (and other files) is not a report: it is refused
    // whole (a report replaces only an earlier report or an empty folder), the input untouched.
    let bend = out.join("bend_fine.glb");
    let bend_bytes = std::fs::read(&bend).unwrap();
    let run = skinblend(&["compare", arg(&bend), "--frames", "2", "-o", arg(&out)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("no skinblend report"),
        "{}",
        stderr(&run)
    );
    assert!(!out.join("index.html").exists());
    assert!(
        std::fs::read(&bend).unwrap() == bend_bytes,
        "input untouched"
    );
    assert!(
        std::fs::read(&rig).unwrap() == original,
        "other files untouched"
    );
}

/// Every command that writes creates its output's folder when it is missing (`pose` to one
/// file and to frames, `centers`, the reports, `rigs`, `shaders`); an error about the output
/// names the output's path, not the input's.
#[test]
fn every_command_creates_the_output_folder_and_names_the_output_in_its_errors() {
    let out = ScratchDir::new("cli-folders");
    let rig = write_rigs(&out.join("rigs"));
    for (args, written) in [
        (
            vec!["pose", arg(&rig), "-o", "a/b/posed.glb"],
            "a/b/posed.glb",
        ),
        (
            vec!["pose", arg(&rig), "--rest", "-o", "c/d/rest.obj"],
            "c/d/rest.obj",
        ),
        (
            vec![
                "pose",
                arg(&rig),
                "--frames",
                "0..1",
                "-o",
                "e/f/x_{frame}.gltf",
            ],
            "e/f/x_0001.gltf",
        ),
        (vec!["centers", arg(&rig), "-o", "g/h/c.glb"], "g/h/c.glb"),
        (
            vec!["compare", arg(&rig), "--frames", "2", "-o", "i/j"],
            "i/j/index.html",
        ),
        (vec!["rigs", "-o", "k/l"], "k/l/twist_fine.glb"),
    ] {
        let run = support::command()
            .args(&args)
            .current_dir(&out)
            .output()
            .unwrap();
        assert!(run.status.success(), "{args:?}: {}", stderr(&run));
        assert!(out.join(written).is_file(), "{args:?}: no {written}");
    }
    // A folder that cannot be created (a file is in the way): the error names the output's
    // folder, and not the input in front of it.
    std::fs::write(out.join("blocker"), b"a file").unwrap();
    for args in [
        vec!["pose", arg(&rig), "-o", "blocker/sub/out.glb"],
        vec!["centers", arg(&rig), "-o", "blocker/sub/out.glb"],
        vec![
            "pose",
            arg(&rig),
            "--frames",
            "0..1",
            "-o",
            "blocker/sub/x_{frame}.glb",
        ],
    ] {
        let run = support::command()
            .args(&args)
            .current_dir(&out)
            .output()
            .unwrap();
        let text = stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {text}");
        assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
        assert!(
            text.starts_with("skinblend: blocker/sub: "),
            "{args:?}: {text}"
        );
        assert!(!text.contains("twist_coarse"), "{args:?}: {text}");
    }
}

/// An output extension no command writes (`.fbx`, none, `.obj` for centers) is bad usage:
/// exit 2, one line naming the path, before the input is read.
#[test]
fn an_unsupported_output_extension_is_bad_usage() {
    let out = ScratchDir::new("cli-extensions");
    let rig = write_rigs(&out);
    let fbx = out.join("out.fbx");
    let bare = out.join("out");
    let obj = out.join("centers.obj");
    let frames = out.join("f_{frame}.fbx");
    for (args, named) in [
        (vec!["pose", arg(&rig), "-o", arg(&fbx)], arg(&fbx)),
        (
            vec!["pose", arg(&rig), "--rest", "-o", arg(&bare)],
            arg(&bare),
        ),
        (
            vec!["pose", arg(&rig), "--frames", "0..1", "-o", arg(&frames)],
            "f_0000.fbx",
        ),
        (vec!["centers", arg(&rig), "-o", arg(&fbx)], arg(&fbx)),
        (vec!["centers", arg(&rig), "-o", arg(&obj)], arg(&obj)),
        // Usage comes before reading: a missing input does not change the answer.
        (vec!["pose", "missing.glb", "-o", arg(&fbx)], arg(&fbx)),
        (vec!["centers", "missing.glb", "-o", arg(&fbx)], arg(&fbx)),
    ] {
        let run = skinblend(&args);
        assert_usage(&run, named);
        assert_eq!(stderr(&run).lines().count(), 1, "{}", stderr(&run));
    }
    assert!(!fbx.exists() && !obj.exists());
}
