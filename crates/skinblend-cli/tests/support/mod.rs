//! Helpers shared by the CLI's integration tests: the built `skinblend` binary, scratch
//! folders, headless Chromium. The sample models and the glTF validator are skinblend-testkit's.
#![allow(dead_code)]

use std::path::Path;
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

/// An empty scratch folder for test `name` of this process, removed when dropped.
pub fn temp_dir(name: &str) -> skinblend_testkit::ScratchDir {
    skinblend_testkit::ScratchDir::new(&format!("cli-{name}"))
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

/// `Some(())` when node, playwright-core (`npm ci --prefix tools`) and Chromium (`$CHROMIUM`, else
/// /usr/bin/chromium) are all here to drive a page; otherwise `None` after saying which are
/// missing and that `what` is skipped.
///
/// # Panics
/// Under `CI=true` when any is missing (`.ci/run` installs them).
pub fn chromium_or_skip(what: &str) -> Option<()> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let playwright = skinblend_testkit::repository_root()
        .join("tools/node_modules/playwright-core")
        .is_dir();
    let chromium =
        Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()))
            .is_file();
    if node && playwright && chromium {
        return Some(());
    }
    skinblend_testkit::skip(format!(
        "{what} needs node, playwright-core (npm ci --prefix tools) and Chromium \
         (apt-get install chromium): node {node}, playwright-core {playwright}, chromium \
         {chromium}"
    ));
    None
}
