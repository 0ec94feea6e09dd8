//! Running the differential test's two judges on its files: the Khronos glTF-Validator (one
//! verdict per file) and `skinblend` (accepted, refused with one line, or broken).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A `skinblend` run that takes longer than this is a hang (the largest sample loads and poses
/// in well under a second in a debug build; the margin is for a loaded CI machine).
pub const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Files per validator process (keeps the command line far below the system's limit).
pub const VALIDATOR_BATCH: usize = 300;

/// What the validator said about one file.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Errors reported.
    pub errors: u64,
    /// Each error code once, with its first place.
    pub codes: Vec<String>,
    /// The validator threw instead of reporting (a bug of its own), with its message.
    pub crashed: Option<String>,
}

/// The validator's verdict on each of `files`, run in batches of [`VALIDATOR_BATCH`].
pub fn validate(script: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, Verdict> {
    let mut verdicts = BTreeMap::new();
    for batch in files.chunks(VALIDATOR_BATCH) {
        let run = Command::new("node")
            .arg(script)
            .arg("--lines")
            .args(batch)
            .output()
            .expect("run node");
        assert!(
            run.status.code().is_some_and(|c| c <= 1),
            "validator failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        for line in String::from_utf8_lossy(&run.stdout).lines() {
            let v: Value = serde_json::from_str(line).expect("validator line");
            // Each code once, with its first place (a broken accessor repeats per element).
            let mut codes: Vec<String> = Vec::new();
            for issue in v["issues"].as_array().map_or(&[][..], Vec::as_slice) {
                let code = issue["code"].as_str().unwrap();
                if !codes.iter().any(|c| c.starts_with(code)) {
                    codes.push(format!("{code} at {}", issue["pointer"]));
                }
            }
            verdicts.insert(
                PathBuf::from(v["file"].as_str().unwrap()),
                Verdict {
                    errors: v["errors"].as_u64().unwrap_or(0),
                    codes,
                    crashed: v["crashed"].as_str().map(str::to_owned),
                },
            );
        }
    }
    assert_eq!(verdicts.len(), files.len(), "one validator line per file");
    verdicts
}

/// How one `skinblend` run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Exit 0.
    Accepted,
    /// Exit 1 with one line that names the file.
    Refused(String),
    /// Anything else: a panic, another exit code, several lines, a line without the file name,
    /// a hang.
    Broken(String),
}

/// Runs `skinblend ARGS` on `file` (named in `args`), killed after [`HANG_LIMIT`].
pub fn run_skinblend(args: &[&str], file: &Path) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skinblend"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run skinblend");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = reader.join().unwrap();
    let Some(status) = status else {
        return Outcome::Broken(format!("no exit after {HANG_LIMIT:?} (hang)"));
    };
    let name = file.file_name().unwrap().to_string_lossy();
    match status.code() {
        Some(0) => Outcome::Accepted,
        Some(1)
            if text.trim_end().lines().count() == 1
                && text.contains(name.as_ref())
                && !text.contains("panicked") =>
        {
            Outcome::Refused(text.trim_end().to_owned())
        }
        code => Outcome::Broken(format!("exit {code:?}: {}", text.trim_end())),
    }
}
