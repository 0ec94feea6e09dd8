//! Chromium for the tests that open a page: the browser itself, and node with playwright-core
//! (`tools/headless-chromium.mjs`) for the tests whose node script drives the page.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{repository_root, skip};

/// The Chromium binary: `$CHROMIUM` when set (the variable `tools/headless-chromium.mjs`
/// reads), else the first of `chromium`, `chromium-browser`, `google-chrome` and
/// `google-chrome-stable` on `PATH`; `None` when there is none.
#[must_use]
pub fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

/// [`chromium`], or `None` after [`skip`] saying that `what` needs it.
///
/// # Panics
/// Under `CI=true` when it is missing (`.ci/run` installs Debian's `chromium`).
#[must_use]
pub fn chromium_or_skip(what: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        skip(format!(
            "{what} needs Chromium (apt-get install chromium, or CHROMIUM=/path/to/chrome)"
        ));
    }
    found
}

/// What a test needs to drive a page from node: node, playwright-core (`npm ci --prefix
/// tools`) and [`chromium`].
#[derive(Debug, Clone)]
pub struct PageDriver {
    chromium: PathBuf,
}

impl PageDriver {
    /// The driver, or `None` after [`skip`] saying which of the three are missing and that
    /// `what` needs them.
    ///
    /// # Panics
    /// Under `CI=true` when any is missing (`.ci/run` installs them).
    #[must_use]
    pub fn or_skip(what: &str) -> Option<Self> {
        let node = Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        let playwright = repository_root()
            .join("tools/node_modules/playwright-core")
            .is_dir();
        let chromium = chromium();
        if let (true, true, Some(chromium)) = (node, playwright, &chromium) {
            return Some(Self {
                chromium: chromium.clone(),
            });
        }
        skip(format!(
            "{what} needs node, playwright-core (npm ci --prefix tools) and Chromium \
             (apt-get install chromium): node {node}, playwright-core {playwright}, chromium \
             {}",
            chromium.is_some()
        ));
        None
    }

    /// `node SCRIPT` with `CHROMIUM` set to the browser found, `script` relative to the
    /// repository's root.
    #[must_use]
    pub fn node(&self, script: impl AsRef<Path>) -> Command {
        let mut command = Command::new("node");
        command
            .arg(repository_root().join(script))
            .env("CHROMIUM", &self.chromium);
        command
    }
}
