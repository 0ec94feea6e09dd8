//! The one rule that keeps a writer off its inputs: an output that is an input file (the same
//! path, the same file reached through `..` or a symbolic link, or on Unix a hard link to it)
//! is refused before anything is written. Every front door calls it: the writers of a
//! [`Model`](crate::Model) ([`write`](super::write), [`write_rotation_centers`](super::write_rotation_centers),
//! [`write_derived`](super::write_derived)), the command line program and the Python package.

use std::path::{Path, PathBuf};

use crate::error::{GltfError, Result};

/// The path with its folder resolved (links and `..` followed) and its file name kept; the
/// whole path resolved when it exists (so a link to a file is that file). `None` when the
/// folder does not exist (nothing there can be an existing input).
#[must_use]
pub fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(full) = path.canonicalize() {
        return Some(full);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

/// Whether `a` and `b` are the same file on Unix: same device and inode (hard links too).
#[cfg(unix)]
fn same_inode(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_inode(_: &Path, _: &Path) -> bool {
    false
}

/// Whether writing `output` would replace `input`: the same file after resolving links and
/// `..` (an `output` that does not exist yet cannot be an existing input), or on Unix the same
/// device and inode.
#[must_use]
pub fn is_same_file(input: &Path, output: &Path) -> bool {
    matches!((resolved(input), resolved(output)), (Some(a), Some(b)) if a == b)
        || same_inode(input, output)
}

/// Refuses an `output` that is one of `inputs` (see [`is_same_file`]); call it before anything
/// is written.
///
/// # Errors
/// [`GltfError::OutputIsInput`] naming the output and the first input it is.
pub fn refuse_input<P: AsRef<Path>>(inputs: &[P], output: &Path) -> Result<()> {
    match inputs
        .iter()
        .map(AsRef::as_ref)
        .find(|input| is_same_file(input, output))
    {
        Some(input) => Err(GltfError::OutputIsInput {
            output: output.to_owned(),
            input: input.to_owned(),
        }),
        None => Ok(()),
    }
}
