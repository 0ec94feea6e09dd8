//! The guard against writing over an input reaches the files a `.gltf` reads too: an output
//! that is its external buffer is refused by the glTF crate's writers
//! (`GltfError::OutputIsInput`), which the CLI reports as bad usage (exit 2), the buffer
//! unchanged.

mod support;

use std::path::{Path, PathBuf};

use skinblend_testkit::ScratchDir;
use support::{skinblend, stderr};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The built-in twist rig as `dir/copy.gltf` with its buffer in `dir/data.glb` (an output
/// extension the commands accept); returns both paths.
fn gltf_with_external_buffer(dir: &Path) -> (PathBuf, PathBuf) {
    let rigs = dir.join("rigs");
    let run = skinblend(&["rigs", "-o", s(&rigs)]);
    assert!(run.status.success(), "{}", stderr(&run));
    let glb = std::fs::read(rigs.join("twist_coarse.glb")).unwrap();
    let word = |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    let json_length = word(12);
    let mut document: serde_json::Value =
        serde_json::from_slice(&glb[20..20 + json_length]).unwrap();
    let bin_at = 20 + json_length;
    let length = document["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
    let bin = &glb[bin_at + 8..bin_at + 8 + length];
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
        vec!["pose", s(&gltf), "-o", s(&buffer)],
        vec!["pose", s(&gltf), "-o", s(&through_dot_dot)],
        vec!["pose", s(&gltf), "--rest", "-o", s(&buffer)],
        vec!["centers", s(&gltf), "-o", s(&buffer)],
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
    let run = skinblend(&["pose", s(&gltf), "-o", s(&dir.join("posed.glb"))]);
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
    let run = skinblend(&["pose", s(&gltf), "--fps", "4", "-o", s(&template)]);
    let text = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{text}");
    assert!(text.contains("the output is the input file"), "{text}");
    assert_eq!(std::fs::read(&frame_buffer).unwrap(), before);
    assert!(
        !dir.join("frame_0000.glb").exists(),
        "no frame written before the refusal"
    );
}
