//! The report opens in a real browser: headless Chromium loads `index.html` from a file URL,
//! the page's own check (see `skinblend_report::html`) must say every image decoded and no
//! script error happened, and a screenshot is saved.
//!
//! Without a Chromium binary the tests skip with a message, except under `CI=true`, where they
//! fail (`.ci/run` installs Debian's `chromium`). `CHROMIUM` names another binary
//! (`skinblend_testkit::chromium`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use skinblend_report::html::{Block, Page, Section};
use skinblend_testkit::{chromium_or_skip, models_dir, ScratchDir};

/// A browser that has not finished in this long is hung (a cold start takes a few seconds).
const BROWSER_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs headless Chromium on `page` with `extra` arguments; returns its standard output.
fn run_browser(browser: &Path, page: &Path, extra: &[String]) -> String {
    // One profile per browser run: the tests run on parallel threads of one process, and three
    // of them pass one extra argument, so a profile named by the process and the argument count
    // was shared, and one test's cleanup could delete it under another's Chromium (the likely
    // cause of a CI failure seen once: SIGTRAP after "Zygote could not fork").
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let profile = ScratchDir::new(&format!(
        "chromium-profile-{}",
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let url = format!(
        "file://{}",
        page.canonicalize().expect("page path").display()
    );
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + BROWSER_TIMEOUT;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().expect("chromium output");
    assert!(
        output.status.success(),
        "chromium failed: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The value of attribute `name` on the dumped `<body>` tag.
fn body_attribute(dom: &str, name: &str) -> Option<String> {
    let start = dom.find("<body")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let key = format!("{name}=\"");
    let value_start = tag.find(&key)? + key.len();
    let value_end = value_start + tag[value_start..].find('"')?;
    Some(tag[value_start..value_end].to_owned())
}

fn the_evidence_report_loads_in_chromium_with_every_image_and_no_error() {
    let Some(browser) = chromium_or_skip("the report's browser test") else {
        return;
    };
    let scratch = ScratchDir::new("browser-evidence-report");
    // The report is written into a folder of its own (it must be missing or empty).
    let dir = scratch.join("report");
    let files = skinblend_report::evidence::write_report(&dir).expect("report");
    let index = dir.join("index.html");
    let html = std::fs::read_to_string(&index).expect("index");
    let expected_images = html.matches("<img ").count();
    assert!(expected_images >= 12);
    assert_eq!(
        expected_images,
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "png"))
            .count()
    );

    let dom = run_browser(&browser, &index, &["--dump-dom".to_owned()]);
    let check = body_attribute(&dom, "data-check");
    assert_eq!(
        check.as_deref(),
        Some("ok"),
        "broken images: {:?}; errors: {:?}",
        body_attribute(&dom, "data-broken-images"),
        body_attribute(&dom, "data-errors")
    );
    assert_eq!(
        body_attribute(&dom, "data-images"),
        Some(expected_images.to_string()),
        "the browser saw every image"
    );

    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("evidence-report-screenshot.png");
    let _ = std::fs::remove_file(&screenshot);
    run_browser(
        &browser,
        &index,
        &[
            format!("--screenshot={}", screenshot.display()),
            "--window-size=1400,2400".to_owned(),
            "--hide-scrollbars".to_owned(),
        ],
    );
    let bytes = std::fs::read(&screenshot).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    eprintln!("screenshot: {}", screenshot.display());
}

fn the_compare_report_of_a_sample_model_loads_in_chromium() {
    let Some(browser) = chromium_or_skip("the report's browser test") else {
        return;
    };
    let Some(models) = models_dir() else {
        return;
    };
    let scratch = ScratchDir::new("browser-compare-report");
    let dir = scratch.join("report");
    let options = skinblend_report::compare::CompareOptions {
        frames: 4,
        picked_frames: 1,
        ..Default::default()
    };
    skinblend_report::compare::write_report(
        &models.join("SimpleSkin/SimpleSkin.gltf"),
        &options,
        &dir,
        &mut |_| {},
    )
    .expect("report");
    let index = dir.join("index.html");
    let html = std::fs::read_to_string(&index).expect("index");
    let dom = run_browser(&browser, &index, &["--dump-dom".to_owned()]);
    assert_eq!(
        body_attribute(&dom, "data-check").as_deref(),
        Some("ok"),
        "broken images: {:?}; errors: {:?}",
        body_attribute(&dom, "data-broken-images"),
        body_attribute(&dom, "data-errors")
    );
    assert_eq!(
        body_attribute(&dom, "data-images"),
        Some(html.matches("<img ").count().to_string())
    );
}

fn the_page_check_reports_a_missing_image() {
    // The check must be able to fail: a page whose image does not exist.
    let Some(browser) = chromium_or_skip("the report's browser test") else {
        return;
    };
    let dir = ScratchDir::new("browser-broken-page");
    let page = Page {
        title: "broken".to_owned(),
        intro: "an image that is not there".to_owned(),
        sections: vec![Section {
            heading: "s".to_owned(),
            blocks: vec![Block::Figure {
                src: "missing.png".to_owned(),
                alt: "missing".to_owned(),
                caption: "missing".to_owned(),
            }],
        }],
    };
    let index = dir.join("index.html");
    std::fs::write(&index, page.render()).expect("write");
    let dom = run_browser(&browser, &index, &["--dump-dom".to_owned()]);
    assert_eq!(
        body_attribute(&dom, "data-check").as_deref(),
        Some("failed")
    );
    assert_eq!(
        body_attribute(&dom, "data-broken-images").as_deref(),
        Some("missing.png")
    );
}

skinblend_testkit::test_main!(
    the_evidence_report_loads_in_chromium_with_every_image_and_no_error,
    the_compare_report_of_a_sample_model_loads_in_chromium,
    the_page_check_reports_a_missing_image,
);
