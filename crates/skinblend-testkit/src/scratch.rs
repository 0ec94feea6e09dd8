//! Scratch folders under the system's temporary directory that remove themselves.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// An empty folder `<temp>/skinblend-<name>-<pid>` for one test, removed with everything in it
/// when dropped (also when the test panics), so a test run leaves nothing in the temporary
/// directory. Derefs to its [`Path`].
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the folder for test `name` of this process, emptied first if a run that was
    /// killed left it behind.
    ///
    /// # Panics
    /// When the folder cannot be created.
    #[must_use]
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("skinblend-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("scratch folder {}: {e}", dir.display()));
        Self(dir)
    }

    /// The folder's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for ScratchDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
