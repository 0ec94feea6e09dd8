//! The one rule that keeps writers off their inputs (`export::refuse_input`): an output that is
//! an input file, reached by the same path, through `..`, a symbolic link or a hard link, or
//! the external `.bin` of a `.gltf`, is refused with `GltfError::OutputIsInput` before anything
//! is written; the input keeps its bytes.

mod common;

use std::path::{Path, PathBuf};

use serde_json::json;
use skinblend::SkinOptions;
use skinblend_gltf::export::{self, is_same_file, refuse_input};
use skinblend_gltf::{GltfError, Model};
use skinblend_testkit::ScratchDir;

/// A small skinned `.glb` at `dir/name`; returns its path.
fn write_glb(dir: &Path, name: &str) -> PathBuf {
    let (b, ..) = common::strip(3);
    let path = dir.join(name);
    std::fs::write(&path, b.glb()).unwrap();
    path
}

/// The same model as `copy.gltf` with its buffer in `copy.bin`; returns both paths.
fn write_gltf_with_bin(dir: &Path) -> (PathBuf, PathBuf) {
    let (b, ..) = common::strip(3);
    let mut document = b.json.clone();
    document["buffers"] = json!([{ "byteLength": b.bin.len(), "uri": "copy.bin" }]);
    let gltf = dir.join("copy.gltf");
    let bin = dir.join("copy.bin");
    std::fs::write(&gltf, serde_json::to_vec(&document).unwrap()).unwrap();
    std::fs::write(&bin, &b.bin).unwrap();
    (gltf, bin)
}

/// Asserts that every writer of `model` refuses `output` as input `input`, leaving every file
/// of `files` as it was.
fn assert_every_writer_refuses(model: &Model, output: &Path, input: &Path, files: &[PathBuf]) {
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let pose = model.rest_pose();
    let posed = model.skin_scene(&pose, &SkinOptions::default()).unwrap();
    let results = [
        ("write", export::write(model, &pose, &posed, output)),
        (
            "write_skinning_attributes",
            export::write_skinning_attributes(model, output),
        ),
        ("write_derived", export::write_derived(model, output, b"x")),
    ];
    for (writer, result) in results {
        match result {
            Err(GltfError::OutputIsInput {
                output: named_output,
                input: named_input,
            }) => {
                assert_eq!(named_output, output, "{writer}");
                assert!(
                    is_same_file(&named_input, input),
                    "{writer}: {named_input:?}"
                );
            }
            other => panic!("{writer} onto {}: {other:?}", output.display()),
        }
    }
    for (file, bytes) in files.iter().zip(&before) {
        assert_eq!(&std::fs::read(file).unwrap(), bytes, "{}", file.display());
    }
    let leftovers: Vec<_> = std::fs::read_dir(input.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn same_file_by_path_dot_dot_and_links() {
    let dir = ScratchDir::new("guard-rule");
    let input = write_glb(&dir, "x.glb");
    std::fs::create_dir(dir.join("sub")).unwrap();
    assert!(is_same_file(&input, &input));
    assert!(is_same_file(&input, &dir.join("sub/../x.glb")));
    assert!(is_same_file(&input, &dir.join("./sub/.././x.glb")));
    assert!(!is_same_file(&input, &dir.join("y.glb")), "a new file");
    assert!(!is_same_file(&input, &dir.join("missing/x.glb")));
    // Writers create missing folders: `missing/../x.glb` is `x.glb` once `missing` exists.
    assert!(is_same_file(&input, &dir.join("missing/../x.glb")));
    assert!(is_same_file(
        &input,
        &dir.join("missing/deeper/../../x.glb")
    ));
    let other = write_glb(&dir, "other.glb");
    assert!(!is_same_file(&input, &other), "another file");
    #[cfg(unix)]
    {
        let link = dir.join("link.glb");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert!(is_same_file(&input, &link) && is_same_file(&link, &input));
        let hard = dir.join("hard.glb");
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(is_same_file(&input, &hard) && is_same_file(&hard, &input));
    }
    let error = refuse_input(&[&other, &input], &dir.join("sub/../x.glb")).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("the output is the input file")
            && message.contains("sub/../x.glb")
            && message.contains(&*input.to_string_lossy()),
        "{message}"
    );
    refuse_input(&[&input], &dir.join("y.glb")).unwrap();
    refuse_input::<PathBuf>(&[], &input).unwrap();
}

#[test]
fn a_model_refuses_to_write_over_its_glb() {
    let dir = ScratchDir::new("guard-glb");
    let input = write_glb(&dir, "copy.glb");
    std::fs::create_dir(dir.join("sub")).unwrap();
    let model = Model::open(&input).unwrap();
    assert_eq!(model.input_files(), [std::path::absolute(&input).unwrap()]);
    let files = [input.clone()];
    assert_every_writer_refuses(&model, &input, &input, &files);
    assert_every_writer_refuses(&model, &dir.join("sub/../copy.glb"), &input, &files);
    assert_every_writer_refuses(&model, &dir.join("missing/../copy.glb"), &input, &files);
    assert!(
        !dir.join("missing").exists(),
        "a refused write creates no folder"
    );
    #[cfg(unix)]
    {
        let link = dir.join("link.glb");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        assert_every_writer_refuses(&model, &link, &input, &files);
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let hard = dir.join("hard.glb");
        std::fs::hard_link(&input, &hard).unwrap();
        assert_every_writer_refuses(&model, &hard, &input, &files);
    }
    // Another file is written as before.
    let pose = model.rest_pose();
    let posed = model.skin_scene(&pose, &SkinOptions::default()).unwrap();
    export::write(&model, &pose, &posed, dir.join("posed.glb")).unwrap();
    Model::open(dir.join("posed.glb")).unwrap();
}

#[test]
fn a_model_refuses_to_write_over_the_bin_of_its_gltf() {
    let dir = ScratchDir::new("guard-bin");
    let (gltf, bin) = write_gltf_with_bin(&dir);
    let model = Model::open(&gltf).unwrap();
    assert_eq!(
        model.input_files(),
        [
            std::path::absolute(&gltf).unwrap(),
            std::path::absolute(&bin).unwrap()
        ]
    );
    let files = [gltf.clone(), bin.clone()];
    assert_every_writer_refuses(&model, &gltf, &gltf, &files);
    // Refused as the input, before the extension is looked at.
    assert_every_writer_refuses(&model, &bin, &bin, &files);
    assert_every_writer_refuses(&model, &dir.join("./copy.bin"), &bin, &files);
    // From bytes with the folder: the buffer file is an input; without a folder, none.
    let bytes = std::fs::read(&gltf).unwrap();
    let from_bytes = Model::from_bytes(&bytes, Some(&dir)).unwrap();
    assert_eq!(
        from_bytes.input_files(),
        [std::path::absolute(&bin).unwrap()]
    );
    assert_every_writer_refuses(&from_bytes, &bin, &bin, &files);
    let glb = common::strip(3).0.glb();
    assert!(Model::from_bytes(&glb, None)
        .unwrap()
        .input_files()
        .is_empty());
}
