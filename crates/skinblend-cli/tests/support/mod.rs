//! Helpers shared by the CLI's integration tests, about the `skinblend` binary cargo built for
//! them: running it, its output, the built-in rigs it writes. The sample models, scratch
//! folders, Chromium and the glTF validator are skinblend-testkit's.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A command for the `skinblend` binary cargo built for these tests.
pub fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skinblend"))
}

/// Runs `skinblend` with `args` and waits for it.
pub fn skinblend(args: &[&str]) -> Output {
    command().args(args).output().expect("run skinblend")
}

/// `skinblend`'s stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `skinblend` with `args`: its exit code (-1 when killed by a signal), stdout and stderr
/// (which must be UTF-8).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let output = skinblend(args);
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

/// `path` as a command-line argument (test paths are UTF-8).
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// Writes the built-in rigs into `dir` with `skinblend rigs` (`twist_coarse.glb`,
/// `bend_coarse.glb`, `twist_fine.glb`, `bend_fine.glb`, `shear_cap.glb`) and returns the
/// twist_coarse file.
pub fn write_rigs(dir: &Path) -> PathBuf {
    let run = skinblend(&["rigs", "-o", arg(dir)]);
    assert!(run.status.success(), "{}", stderr(&run));
    dir.join("twist_coarse.glb")
}

/// Exit code 2 (bad usage) with one line on stderr containing `needle`.
pub fn assert_usage(run: &Output, needle: &str) {
    let text = stderr(run);
    assert_eq!(run.status.code(), Some(2), "{text}");
    assert!(text.contains(needle), "{needle:?} not in {text}");
}
