//! The three.js block of `docs/engines.md` runs as pasted: `web/engines/run.mjs` serves a page
//! that takes the block out of the document verbatim, runs it with the vendored three.js
//! (`crates/skinblend-cli/web/viewer/vendor/`) against the exported GLSL ES shader and the
//! built-in `twist_coarse` rig at +180°, renders it in headless Chromium and reads the pixels
//! back: the ring at the twisted joint must keep at least 0.9 of the rest width. The same check
//! fails for LBS (the ring collapses) and for the block's earlier form,
//! `palette.add(new THREE.Uniform(slots))`, which three.js 0.180 rejects in `renderer.render`.
//!
//! Needs node with `tools/node_modules/playwright-core` (`npm ci --prefix tools`) and Chromium:
//! without them the test skips with a message, except under `CI=true`, where it fails.

mod support;

use std::path::Path;

use skinblend_testkit::{repository_root, PageDriver, ScratchDir};
use support::skinblend;

/// The line of the block that adds the palette's vec4 uniforms, and the form it replaced.
const PALETTE_LINE: &str = "palette.add(slots.map((v) => new THREE.Uniform(v)));";
const BROKEN_PALETTE_LINE: &str = "palette.add(new THREE.Uniform(slots));";

/// Runs `node web/engines/run.mjs VECTORS SHADERS extra...`: whether it passed, and its output.
fn run_page(driver: &PageDriver, vectors: &Path, shaders: &Path, extra: &[&str]) -> (bool, String) {
    let out = driver
        .node("web/engines/run.mjs")
        .arg(vectors)
        .arg(shaders)
        .args(extra)
        .output()
        .expect("run node");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    (out.status.success(), text)
}

/// The ratio the page printed: `(0.966; at least 0.9 required)`.
fn ratio(output: &str) -> f64 {
    let start = output.find(" px (").expect("a width ratio") + 5;
    output[start..]
        .split(';')
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no ratio in {output}"))
}

fn readme_links_the_engines_document() {
    let readme = std::fs::read_to_string(repository_root().join("README.md")).expect("README");
    assert!(
        readme.contains("(docs/engines.md)"),
        "README does not link docs/engines.md"
    );
    let doc = std::fs::read_to_string(repository_root().join("docs/engines.md")).expect("doc");
    assert_eq!(
        doc.matches("```js\n").count(),
        1,
        "docs/engines.md: one js block"
    );
    assert!(
        doc.contains(PALETTE_LINE),
        "the palette line changed; update this test"
    );
}

fn threejs_block_runs_as_pasted_and_keeps_the_ring_round() {
    let Some(driver) = PageDriver::or_skip("the three.js block of docs/engines.md") else {
        return;
    };
    let vectors = ScratchDir::new("threejs-vectors");
    let shaders = ScratchDir::new("threejs-shaders");
    let out = skinblend(&["conformance", "-o", vectors.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = skinblend(&[
        "shaders",
        "--lang",
        "glsl-es",
        "-o",
        shaders.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // As pasted: DQS keeps the ring (0.97 of the rest width on SwiftShader).
    let (passed, output) = run_page(&driver, &vectors, &shaders, &[]);
    assert!(passed && output.contains("PASS: dq at +180°"), "{output}");
    assert!(ratio(&output) >= 0.9, "{output}");

    // The check can fail: the same block on LBS draws the collapsed ring (0 px wide).
    let (passed, output) = run_page(&driver, &vectors, &shaders, &["--method", "linear"]);
    assert!(!passed, "LBS passed the ring check:\n{output}");
    assert!(ratio(&output) < 0.2, "{output}");

    // The block's earlier palette line throws in renderer.render on three.js 0.180.
    let doc = std::fs::read_to_string(repository_root().join("docs/engines.md")).expect("doc");
    let broken = vectors.join("engines-broken.md");
    std::fs::write(&broken, doc.replace(PALETTE_LINE, BROKEN_PALETTE_LINE)).expect("write");
    let (passed, output) = run_page(
        &driver,
        &vectors,
        &shaders,
        &["--doc", broken.to_str().unwrap()],
    );
    assert!(!passed, "the broken block passed:\n{output}");
    assert!(output.contains("clone is not a function"), "{output}");
}

skinblend_testkit::test_main!(
    readme_links_the_engines_document,
    threejs_block_runs_as_pasted_and_keeps_the_ring_round,
);
