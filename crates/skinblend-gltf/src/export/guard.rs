//! The one rule that keeps a writer off its inputs: an output that is an input file (the same
//! path, the same file reached through `..` or a symbolic link, or on Unix a hard link to it)
//! is refused before anything is written. Every front door calls it: the writers of a
//! [`Model`](crate::Model) ([`write`](super::write), [`write_rotation_centers`](super::write_rotation_centers),
//! [`write_derived`](super::write_derived)), the command line program and the Python package.

use std::path::{Component, Path, PathBuf};

use crate::error::{GltfError, Result};

/// The file `path` names, as the system would reach it: its deepest existing ancestor resolved
/// (links and `..` followed), the rest applied by name (a missing folder is no link, so
/// `missing/..` is where it stands: writers create missing folders, and `missing/../x.glb` is
/// then `x.glb`). The whole path resolved when it exists, so a link to a file is that file.
/// `None` only when no ancestor can be resolved (a current folder that was deleted).
#[must_use]
pub fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(full) = path.canonicalize() {
        return Some(full);
    }
    for ancestor in path.ancestors().skip(1) {
        let folder = if ancestor.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ancestor
        };
        let Ok(mut full) = folder.canonicalize() else {
            continue;
        };
        for component in path.strip_prefix(ancestor).ok()?.components() {
            match component {
                Component::Normal(name) => full.push(name),
                Component::ParentDir => {
                    full.pop();
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        return Some(full);
    }
    None
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
/// `..` ([`resolved`]; also through folders a writer would create), or on Unix the same device
/// and inode (hard links).
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
