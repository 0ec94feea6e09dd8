//! `skinblend evidence --out DIR` and `skinblend compare FILE --out DIR` write their reports.

mod support;

use skinblend_testkit::{file_names, models_dir, ScratchDir};
use support::skinblend;

use std::path::Path;

/// The `.png` files of `dir`, sorted.
fn pngs(dir: &Path) -> Vec<String> {
    let mut names = file_names(dir);
    names.retain(|n| n.ends_with(".png"));
    names
}

fn evidence_out_writes_the_picture_report_and_still_prints_the_table() {
    let dir = ScratchDir::new("cli-evidence-report");
    let output = skinblend(&["evidence", "--out", dir.to_str().expect("utf-8 path")]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("twist_coarse"));
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    let images = pngs(&dir);
    for name in [
        "twist_fine_180.png",
        "bend_fine_090.png",
        "shear_cap_090.png",
        "candy_wrapper_radius.png",
    ] {
        assert!(images.iter().any(|n| n == name), "{name} in {images:?}");
        assert!(html.contains(name), "{name} on the page");
    }
}

fn compare_writes_a_report_of_a_sample_model() {
    let Some(models) = models_dir() else { return };
    let dir = ScratchDir::new("cli-compare-report");
    let model = models.join("RiggedSimple/RiggedSimple.glb");
    let output = skinblend(&[
        "compare",
        model.to_str().expect("utf-8 path"),
        "--animation",
        "0",
        "--frames",
        "6",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    let images = pngs(&dir);
    for name in [
        "frame_displacement.png",
        "frame_volume_ratio.png",
        "frame_edge_ratio.png",
    ] {
        assert!(images.iter().any(|n| n == name), "{name} in {images:?}");
    }
    let frames = images.iter().filter(|n| n.starts_with("frame_0")).count();
    assert!(frames >= 2, "picked frames rendered: {images:?}");
    assert_eq!(html.matches("<img ").count(), images.len());
}

fn compare_errors_name_the_problem() {
    let dir = ScratchDir::new("cli-compare-errors");
    let out = dir.to_str().expect("utf-8 path");
    let missing = skinblend(&["compare", "no-such-file.glb", "--out", out]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such-file.glb"));
    let Some(models) = models_dir() else { return };
    let model = models.join("RiggedSimple/RiggedSimple.glb");
    let model = model.to_str().expect("utf-8 path");
    let zero = skinblend(&["compare", model, "--frames", "0", "--out", out]);
    assert!(!zero.status.success());
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--frames"));
    let unknown = skinblend(&["compare", model, "--animation", "nope", "--out", out]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nope"));
    assert!(
        !dir.join("index.html").exists(),
        "no report from a failed run"
    );
}

skinblend_testkit::test_main!(
    evidence_out_writes_the_picture_report_and_still_prints_the_table,
    compare_writes_a_report_of_a_sample_model,
    compare_errors_name_the_problem,
);
