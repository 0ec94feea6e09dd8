//! Test helpers shared by the skinblend crates' tests (a dev-dependency only, never published):
//! where the sample models are, which they are, how to run the Khronos glTF-Validator, a GLB
//! writer and reader for test files, scratch folders that remove themselves and the sorted
//! names of a folder's files, Chromium for the tests that open a page, and the test harness
//! that reports a test which could not run as *ignored*, with its reason.
//!
//! Outside CI a missing folder or tool makes a test skip ([`skip`]); under `CI=true` it is a
//! failure, since CI must run every test. A test file whose tests may skip runs under
//! [`test_main!`] (its `[[test]]` target has `harness = false`), so that `cargo test` counts a
//! skipped test as ignored instead of passed: `cargo test` hides a passing test's stderr, and a
//! test that returned early would otherwise look as if it ran.
#![warn(missing_docs)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod browser;
mod scratch;
pub use browser::{chromium, chromium_or_skip, PageDriver};
pub use scratch::{file_names, ScratchDir};

thread_local! {
    /// Why the test running on this thread skipped, if it did (see [`skip`]).
    static SKIPPED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records that the test running on this thread cannot run, and why: [`test_main!`] then
/// reports it as ignored with `reason` instead of passed. The test should return right after.
///
/// # Panics
/// Under `CI=true`, where nothing may be skipped (`.ci/run` installs every tool and folder).
pub fn skip(reason: impl Into<String>) {
    let reason = reason.into();
    assert!(!in_ci(), "CI=true but a test cannot run: {reason}");
    eprintln!("skipping: {reason}");
    SKIPPED.with(|s| {
        s.borrow_mut().get_or_insert(reason);
    });
}

/// Runs `tests` (name, function) with libtest's command line, output and summary
/// (`libtest-mimic`); a test that called [`skip`] is reported as ignored with its reason. A test
/// fails by panicking, as under `#[test]`. Use through [`test_main!`].
#[must_use]
pub fn run_tests(tests: &[(&'static str, fn())]) -> ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let trials = tests
        .iter()
        .map(|&(name, test)| {
            libtest_mimic::Trial::ignorable_test(name, move || {
                SKIPPED.with(|s| s.borrow_mut().take());
                test();
                Ok(match SKIPPED.with(|s| s.borrow_mut().take()) {
                    Some(reason) => libtest_mimic::Completion::ignored_with(reason),
                    None => libtest_mimic::Completion::Completed,
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// The `main` of a test file whose tests may skip: lists its test functions (plain `fn()`s that
/// panic on failure, without `#[test]`) and runs them with [`run_tests`]. The file's `[[test]]`
/// target sets `harness = false`.
///
/// ```no_run
/// fn loads_every_sample() { let Some(dir) = skinblend_testkit::models_dir() else { return }; }
/// skinblend_testkit::test_main!(loads_every_sample);
/// ```
#[macro_export]
macro_rules! test_main {
    ($($test:path),* $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::run_tests(&[$((::std::stringify!($test), $test as fn())),*])
        }
    };
}

/// Every sample model, relative to [`models_dir`].
pub const SAMPLES: &[&str] = &[
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.glb",
];

/// The repository's root (the folder with `Cargo.toml`, `tools/` and `crates/`).
#[must_use]
pub fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `shared/models` beside the repository's folder, the repository's path resolved where it can
/// be (so that messages show a plain path).
fn shared_models() -> PathBuf {
    let root = repository_root();
    let root = root.canonicalize().unwrap_or(root);
    match root.parent() {
        Some(parent) => parent.join("shared/models"),
        None => root.join("../shared/models"),
    }
}

/// Whether this run is CI's (`CI=true`), where nothing may be skipped.
#[must_use]
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The sample models' folder (`../shared/models` beside the repository), or `None` after
/// [`skip`] when it is absent.
///
/// # Panics
/// Under `CI=true` when the folder is missing: CI must test them.
#[must_use]
pub fn models_dir() -> Option<PathBuf> {
    let dir = shared_models();
    if let Some(dir) = models_dir_if_present() {
        return Some(dir);
    }
    skip(format!(
        "needs the sample models at {} (../shared/models beside the clone)",
        dir.display()
    ));
    None
}

/// The sample models' folder when it is there, for a test that also runs without them (it
/// then tests less, and is not reported as skipped).
///
/// # Panics
/// Under `CI=true` when the folder is missing: CI must test them.
#[must_use]
pub fn models_dir_if_present() -> Option<PathBuf> {
    let dir = shared_models();
    if dir.join("CesiumMan/CesiumMan.glb").is_file() {
        return Some(dir);
    }
    assert!(
        !in_ci(),
        "CI=true but the sample models are missing at {}: CI must run these tests",
        dir.display()
    );
    None
}

/// The Khronos glTF-Validator's runner script (`tools/validate-gltf.mjs`, which prints one JSON
/// verdict per file), or `None` with a message when node or the validator package
/// (`npm ci --prefix tools`) is missing.
///
/// # Panics
/// Under `CI=true` when either is missing (`.ci/run` installs them).
#[must_use]
pub fn gltf_validator() -> Option<PathBuf> {
    let root = repository_root();
    let installed = root.join("tools/node_modules/gltf-validator").is_dir();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if installed && node {
        return Some(root.join("tools/validate-gltf.mjs"));
    }
    skip("needs node and the Khronos glTF-Validator (npm ci --prefix tools)");
    None
}

/// Runs the glTF-Validator `script` (from [`gltf_validator`]) on `files` and returns its report
/// (one line per file: `<file>: N errors, M warnings`, then the messages).
///
/// # Panics
/// When node cannot be started or the validator exits unsuccessfully (a file with errors):
/// the message holds the report and node's stderr.
#[must_use]
pub fn validator_report(script: &Path, files: &[PathBuf]) -> String {
    let run = Command::new("node")
        .arg(script)
        .args(files)
        .output()
        .expect("run node");
    let report = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "validator found errors:\n{report}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    report
}

/// A GLB container (glTF 2.0 binary): the `json` text padded with spaces and the `bin` chunk
/// padded with zeros to 4 bytes, the BIN chunk left out when `bin` is empty.
#[must_use]
pub fn glb_bytes(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let mut text = json.to_vec();
    text.resize(text.len().next_multiple_of(4), b' ');
    let mut bin = bin.to_vec();
    bin.resize(bin.len().next_multiple_of(4), 0);
    let total = 12 + 8 + text.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

/// The JSON and BIN chunks of a GLB container (the BIN chunk empty when there is none), as
/// [`glb_bytes`] writes them; `None` when `bytes` is not a GLB with a JSON chunk that fits.
#[must_use]
pub fn glb_chunks(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let word = |at: usize| {
        let word = bytes.get(at..at + 4)?;
        Some(u32::from_le_bytes(word.try_into().ok()?) as usize)
    };
    if !bytes.starts_with(b"glTF") {
        return None;
    }
    let json_length = word(12)?;
    let json = bytes.get(20..20 + json_length)?;
    let bin = match word(20 + json_length) {
        Some(bin_length) => bytes.get(28 + json_length..28 + json_length + bin_length)?,
        None => &[],
    };
    Some((json, bin))
}

/// Skips the calling test for want of a GPU adapter (`error` says why there is none), or fails
/// it when the GPU is required: under `SKINBLEND_REQUIRE_GPU=1` (which `.ci/run` sets, with
/// Mesa's lavapipe installed) or `CI=true`.
///
/// # Panics
/// When the GPU is required.
pub fn skip_without_gpu(error: impl std::fmt::Display) {
    let required = std::env::var("SKINBLEND_REQUIRE_GPU").is_ok_and(|v| v == "1");
    assert!(!required, "SKINBLEND_REQUIRE_GPU=1 but no GPU: {error}");
    skip(format!(
        "needs a Vulkan GPU adapter (Mesa's lavapipe will do): {error}"
    ));
}
