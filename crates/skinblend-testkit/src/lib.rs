//! Test helpers shared by the skinblend crates' tests (a dev-dependency only, never published):
//! where the sample models are, which they are, how to run the Khronos glTF-Validator, and a GLB
//! writer for test files.
//!
//! Outside CI a missing folder or tool makes a test skip with a message on stderr; under
//! `CI=true` it is a failure, since CI must run every test.
#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Whether this run is CI's (`CI=true`), where nothing may be skipped.
#[must_use]
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The sample models' folder (`../shared/models` beside the repository), or `None` with a
/// message when it is absent.
///
/// # Panics
/// Under `CI=true` when the folder is missing: CI must test them.
#[must_use]
pub fn models_dir() -> Option<PathBuf> {
    let dir = repository_root().join("../shared/models");
    if dir.join("CesiumMan/CesiumMan.glb").is_file() {
        return Some(dir);
    }
    assert!(
        !in_ci(),
        "CI=true but the sample models are missing at {}: CI must run these tests",
        dir.display()
    );
    eprintln!(
        "skipping: sample models not found at {} (they are required under CI=true)",
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
    assert!(
        !in_ci(),
        "CI=true but the validator is not installed (npm ci --prefix tools)"
    );
    eprintln!(
        "skipping: node or tools/node_modules/gltf-validator missing (run npm ci --prefix tools)"
    );
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
