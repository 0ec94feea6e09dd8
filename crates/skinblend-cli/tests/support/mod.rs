//! Helpers shared by the CLI's integration tests: the built `skinblend` binary, scratch
//! folders. The sample models and the glTF validator are skinblend-testkit's.
#![allow(dead_code)]

use std::path::PathBuf;
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

/// An empty scratch folder for test `name` of this process (emptied if it exists).
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skinblend-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
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
