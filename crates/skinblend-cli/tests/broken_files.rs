//! The CLI's error contract on a corpus of broken files built here: exit code 1 with one line
//! naming the file and the place, no panic message or backtrace, and no output written (an
//! existing good output is left as it was, and no temporary file is left behind). Bad usage
//! exits 2.

mod support;

use skinblend_testkit::{file_names, ScratchDir};
use support::command;

/// Runs `skinblend` with backtraces on, so that a panic would show in its stderr.
fn skinblend(args: &[&str]) -> Output {
    command()
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("run skinblend")
}

#[path = "../../skinblend-gltf/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Output;

use common::{strip, Builder};
use serde_json::json;

/// A broken file: its name, its bytes (and an external buffer where it needs one), and text
/// the error must contain to name the place.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    extra: Option<(&'static str, Vec<u8>)>,
    place: &'static str,
}

fn glb_with(edit: impl FnOnce(&mut Builder)) -> Vec<u8> {
    let (mut b, ..) = strip(3);
    edit(&mut b);
    b.glb()
}

fn corpus() -> Vec<Case> {
    let valid = strip(3).0.glb();
    let mut cases = Vec::new();
    for (name, length, place) in [
        ("truncated-header.glb", 7, "GLB byte"),
        ("truncated-json.glb", 40, "GLB byte"),
        ("truncated-bin.glb", valid.len() - 9, "GLB byte"),
    ] {
        cases.push(Case {
            name,
            bytes: valid[..length].to_vec(),
            extra: None,
            place,
        });
    }
    cases.push(Case {
        name: "empty.glb",
        bytes: Vec::new(),
        extra: None,
        place: "not glTF 2.0",
    });
    cases.push(Case {
        name: "garbage.gltf",
        bytes: b"\x00\x01not json at all".to_vec(),
        extra: None,
        place: "not glTF 2.0",
    });
    cases.push(Case {
        name: "bad-view-offset.glb",
        bytes: glb_with(|b| b.json["bufferViews"][0]["byteOffset"] = json!(100_000)),
        extra: None,
        place: "bufferViews[0]",
    });
    cases.push(Case {
        name: "bad-accessor-offset.glb",
        bytes: glb_with(|b| b.json["accessors"][0]["byteOffset"] = json!(4000)),
        extra: None,
        place: "accessors[0].byteOffset",
    });
    cases.push(Case {
        name: "huge-count.glb",
        bytes: glb_with(|b| b.json["accessors"][0]["count"] = json!(4_000_000_000u64)),
        extra: None,
        place: "accessors[0]",
    });
    cases.push(Case {
        name: "accessor-out-of-range.glb",
        bytes: glb_with(|b| b.json["skins"][0]["inverseBindMatrices"] = json!(50)),
        extra: None,
        place: "skins[0].inverseBindMatrices",
    });
    cases.push(Case {
        name: "joint-out-of-range.glb",
        bytes: glb_with(|b| b.json["skins"][0]["joints"] = json!([0, 40])),
        extra: None,
        place: "skins[0].joints[1]",
    });
    cases.push(Case {
        name: "missing-attribute-accessor.glb",
        bytes: glb_with(|b| {
            b.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99)
        }),
        extra: None,
        place: "POSITION",
    });
    cases.push(Case {
        name: "nan-inverse-bind.glb",
        bytes: glb_with(|b| {
            let accessor = b.json["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
            let view = b.json["accessors"][accessor]["bufferView"]
                .as_u64()
                .unwrap() as usize;
            let offset = b.json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
            b.bin[offset..offset + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        }),
        extra: None,
        place: "inverseBindMatrices",
    });
    cases.push(Case {
        name: "cycle.glb",
        bytes: glb_with(|b| {
            b.json["nodes"][1]["children"] = json!([0]);
            b.json["scenes"][0]["nodes"] = json!([2]);
        }),
        extra: None,
        place: "cycle",
    });
    let (b, ..) = strip(3);
    let mut escaping = b.json.clone();
    escaping["buffers"] = json!([{ "byteLength": b.bin.len(), "uri": "../secret.bin" }]);
    cases.push(Case {
        name: "escape.gltf",
        bytes: serde_json::to_vec(&escaping).unwrap(),
        extra: Some(("../secret.bin", b.bin.clone())),
        place: "buffers[0].uri",
    });
    cases
}

const GOOD_OUTPUT: &[u8] = b"a good file from an earlier run";

fn assert_contract(run: &Output, file: &Path, place: &str, what: &str) {
    let message = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{what}: {message}");
    assert_eq!(
        message.trim_end().lines().count(),
        1,
        "{what}: one line: {message}"
    );
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(
        message.contains(name) && message.contains(place),
        "{what}: expected {name:?} and {place:?} in: {message}"
    );
    assert!(
        !message.contains("panicked") && !message.contains("backtrace"),
        "{what}: {message}"
    );
}

#[test]
fn every_broken_file_exits_1_with_one_line_and_writes_nothing() {
    let root = ScratchDir::new("cli-corpus");
    let inputs = root.join("inputs");
    let outputs = root.join("outputs");
    std::fs::create_dir_all(&inputs).unwrap();
    std::fs::create_dir_all(&outputs).unwrap();
    let cases = corpus();
    for case in &cases {
        let file = inputs.join(case.name);
        std::fs::write(&file, &case.bytes).unwrap();
        if let Some((relative, bytes)) = &case.extra {
            std::fs::write(inputs.join(relative), bytes).unwrap();
        }
        let info = skinblend(&["info", file.to_str().unwrap()]);
        assert_contract(&info, &file, case.place, &format!("info {}", case.name));
        for extension in ["glb", "gltf", "obj"] {
            let target = outputs.join(format!("posed.{extension}"));
            std::fs::write(&target, GOOD_OUTPUT).unwrap();
            let pose = skinblend(&[
                "pose",
                file.to_str().unwrap(),
                "-o",
                target.to_str().unwrap(),
            ]);
            assert_contract(&pose, &file, case.place, &format!("pose {}", case.name));
            assert_eq!(
                std::fs::read(&target).unwrap(),
                GOOD_OUTPUT,
                "{}: the good output was replaced",
                case.name
            );
        }
        let report = outputs.join(format!("report-{}", case.name));
        let compare = skinblend(&[
            "compare",
            file.to_str().unwrap(),
            "--frames",
            "2",
            "--out",
            report.to_str().unwrap(),
        ]);
        assert_contract(
            &compare,
            &file,
            case.place,
            &format!("compare {}", case.name),
        );
        assert!(
            !report.exists(),
            "{}: compare created its folder",
            case.name
        );
    }
    assert_eq!(
        file_names(&outputs),
        ["posed.glb", "posed.gltf", "posed.obj"],
        "only the good outputs remain: no temporary files"
    );
    assert!(cases.len() >= 14);
}

#[test]
fn a_failed_write_leaves_no_partial_file() {
    let root = ScratchDir::new("cli-write");
    let input = root.join("strip.glb");
    std::fs::write(&input, strip(3).0.glb()).unwrap();
    // The target is a folder: the rename fails after the temporary file was written.
    let target = root.join("posed.glb");
    std::fs::create_dir_all(&target).unwrap();
    let run = skinblend(&[
        "pose",
        input.to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    let message = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{message}");
    assert!(message.contains("posed.glb"), "{message}");
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert_eq!(
        file_names(&root),
        ["posed.glb", "strip.glb"],
        "no temporary file left"
    );
    // And the good case writes.
    let good = root.join("good.glb");
    let run = skinblend(&[
        "pose",
        input.to_str().unwrap(),
        "-o",
        good.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(std::fs::metadata(&good).unwrap().len() > 100);
}

#[test]
fn bad_usage_exits_2_and_help_exits_0() {
    for args in [
        vec!["no-such-command"],
        vec!["info"],
        vec!["pose", "x.glb"],
        vec!["compare", "x.glb", "--out", "d", "--frames", "0"],
        vec!["compare", "x.glb", "--out", "d", "--frames", "10001"],
        vec!["bench", "--gpu", "--vertices", "1000000000"],
        vec!["bench", "--vertices", "10"],
        vec!["pose", "x.glb", "-o", "y.glb", "--time", "soon"],
    ] {
        let run = skinblend(&args);
        let message = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{args:?}: {message}");
    }
    for args in [vec!["--help"], vec!["pose", "--help"], vec!["--version"]] {
        assert!(skinblend(&args).status.success(), "{args:?}");
    }
}
