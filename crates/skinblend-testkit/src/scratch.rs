//! Scratch folders under the system's temporary directory that remove themselves, and the
//! names of a folder's files.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// An empty folder `<temp>/skinblend-<name>-<pid>` for one test, removed with everything in it
/// when dropped (also when the test panics), so a test run leaves nothing in the temporary
/// directory. Derefs to its [`Path`].
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    /// Whether [`ScratchDir::keep`] was called: then the folder stays.
    kept: bool,
}

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
        Self {
            path: dir,
            kept: false,
        }
    }

    /// The folder's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps the folder and everything in it (for a failing test to leave what it wrote for a
    /// look): returns its path, and nothing is removed.
    #[must_use]
    pub fn keep(mut self) -> PathBuf {
        self.kept = true;
        self.path.clone()
    }
}

/// The names of the entries of `dir`, sorted.
///
/// # Panics
/// When `dir` cannot be read.
#[must_use]
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            entry.file_name().to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    names
}

impl Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ScratchDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
