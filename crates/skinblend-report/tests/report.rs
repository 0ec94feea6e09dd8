//! The evidence report writes its files, and the page references exactly those images.

use skinblend_report::evidence::write_report;
use skinblend_testkit::ScratchDir;

#[test]
fn the_evidence_report_writes_pngs_and_an_index_referencing_them() {
    let scratch = ScratchDir::new("evidence-report");
    // The report is written into a folder of its own (it must be missing or empty).
    let dir = scratch.join("report");
    let written = write_report(&dir).expect("report");
    let index = dir.join("index.html");
    assert_eq!(written.last(), Some(&index), "index.html is written last");
    let html = std::fs::read_to_string(&index).expect("index");
    let pngs: Vec<_> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    assert!(pngs.len() >= 12, "{} images", pngs.len());
    for png in &pngs {
        let bytes = std::fs::read(png).expect("png");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", png.display());
        let name = png.file_name().and_then(|n| n.to_str()).expect("name");
        assert!(
            html.contains(&format!("src=\"{name}\"")),
            "{name} is on the page"
        );
    }
    assert_eq!(
        html.matches("<img ").count(),
        pngs.len(),
        "every image once"
    );
    assert!(html.contains("<figcaption>"), "captions");
    assert!(html.contains("twist_coarse"), "the evidence table");
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}
