//! A report folder replaced whole or not at all.
//!
//! A report is built in a sibling folder of its destination (same parent, so renames stay on
//! one file system), named `.NAME.partial-PID`: hidden, and never taken for a report, even when
//! a kill leaves it behind. Once every file is written, an existing report at the destination
//! is renamed aside (`.NAME.replaced-PID`), the new one renamed into place and the old one
//! removed. An error or a panic while building removes the partial folder and leaves the
//! destination as it was; a kill leaves only the hidden partial folder, which the next report
//! to the same destination removes (on Linux, where a process can be told gone).

use std::path::{Path, PathBuf};

use crate::error::{ReportError, Result};

/// What `index.html` of every report carries, so that a folder can be recognised as a report
/// before it is replaced.
pub const GENERATOR_META: &str = "<meta name=\"generator\" content=\"skinblend-report\">";

/// Builds a report with `build` in a fresh partial folder beside `dir`, then moves it into place
/// as `dir`. `build` gets the partial folder and returns the paths it wrote there; the result
/// has them under `dir` instead. `dir` may be missing (its parent is created), an empty folder
/// or an earlier report (a folder whose `index.html` carries [`GENERATOR_META`] or a
/// `skinblend` title); anything else is refused untouched, so that a report never replaces a
/// folder of other files.
///
/// # Errors
/// [`ReportError::Request`] for a `dir` without a folder name (`..`, `/`), one that is a file
/// or a folder that is not a report; [`ReportError::Io`] naming the folder; those of `build`.
/// On any error `dir` is as it was and the partial folder is removed.
pub fn write_folder_atomically(
    dir: &Path,
    build: impl FnOnce(&Path) -> Result<Vec<PathBuf>>,
) -> Result<Vec<PathBuf>> {
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Err(ReportError::Request {
            what: format!(
                "{}: a report needs a folder name to write to (for example {}/report)",
                dir.display(),
                dir.display()
            ),
        });
    };
    check_replaceable(dir)?;
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| ReportError::io(&parent, e))?;
    remove_stale_partials(&parent, &name);
    let pid = std::process::id();
    let partial = parent.join(format!(".{name}.partial-{pid}"));
    if partial.exists() {
        // Left by an earlier run of a process with the same id, killed before it finished.
        std::fs::remove_dir_all(&partial).map_err(|e| ReportError::io(&partial, e))?;
    }
    std::fs::create_dir(&partial).map_err(|e| ReportError::io(&partial, e))?;
    // Removes the partial folder on an error and on a panic (an interrupted build) alike.
    let guard = RemoveOnDrop(partial.clone());
    let written = build(&partial)?;
    move_into_place(
        &partial,
        dir,
        &parent.join(format!(".{name}.replaced-{pid}")),
    )?;
    std::mem::forget(guard);
    Ok(written
        .into_iter()
        .map(|p| match p.strip_prefix(&partial) {
            Ok(relative) => dir.join(relative),
            Err(_) => p,
        })
        .collect())
}

/// Removes its folder when dropped (forgotten once the folder has been moved into place).
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        // Best effort: the error or panic under way says more than a failed clean-up would.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the partial folders for `name` in `parent` that a killed run left behind: those
/// whose process is gone. Only where that can be told (Linux's `/proc`); elsewhere they stay.
fn remove_stale_partials(parent: &Path, name: &str) {
    if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
        return;
    }
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // Best effort: a leftover that cannot be removed harms nothing.
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Refuses a destination that exists and is not a folder a report may replace.
fn check_replaceable(dir: &Path) -> Result<()> {
    let refuse = |why: &str| {
        Err(ReportError::Request {
            what: format!(
                "{} {why}; a report replaces only an earlier report or an empty folder: choose \
                 another --out",
                dir.display()
            ),
        })
    };
    let metadata = match std::fs::symlink_metadata(dir) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ReportError::io(dir, e)),
    };
    if !metadata.is_dir() {
        return refuse("exists and is not a folder");
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| ReportError::io(dir, e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    let index = dir.join("index.html");
    let is_report = std::fs::read_to_string(&index)
        .is_ok_and(|html| html.contains(GENERATOR_META) || html.contains("<title>skinblend "));
    if is_report {
        Ok(())
    } else {
        refuse("is a folder with files but no skinblend report (no index.html of one)")
    }
}

/// Renames `partial` to `dir`, first moving an existing `dir` to `aside` and removing it after.
fn move_into_place(partial: &Path, dir: &Path, aside: &Path) -> Result<()> {
    if !dir.exists() {
        return std::fs::rename(partial, dir).map_err(|e| ReportError::io(dir, e));
    }
    if aside.exists() {
        std::fs::remove_dir_all(aside).map_err(|e| ReportError::io(aside, e))?;
    }
    std::fs::rename(dir, aside).map_err(|e| ReportError::io(dir, e))?;
    if let Err(e) = std::fs::rename(partial, dir) {
        // Put the old report back; if even that fails, the error names the folder.
        let _ = std::fs::rename(aside, dir);
        return Err(ReportError::io(dir, e));
    }
    std::fs::remove_dir_all(aside).map_err(|e| ReportError::io(aside, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> skinblend_testkit::ScratchDir {
        skinblend_testkit::ScratchDir::new(&format!("folder-{name}"))
    }

    fn write_report(dir: &Path, body: &str) -> Result<Vec<PathBuf>> {
        write_folder_atomically(dir, |partial| {
            let index = partial.join("index.html");
            std::fs::write(&index, format!("{GENERATOR_META}{body}"))
                .map_err(|e| ReportError::io(&index, e))?;
            Ok(vec![index])
        })
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_report_replaces_an_earlier_one_and_a_failure_leaves_it() {
        let root = scratch("replace");
        let dir = root.join("report");
        let written = write_report(&dir, "one").expect("first");
        assert_eq!(written, [dir.join("index.html")]);
        write_report(&dir, "two").expect("second");
        assert_eq!(
            std::fs::read_to_string(dir.join("index.html")).expect("index"),
            format!("{GENERATOR_META}two")
        );
        let failed = write_folder_atomically(&dir, |partial| {
            std::fs::write(partial.join("half.png"), b"x").expect("write");
            Err(ReportError::Request {
                what: "broken".to_owned(),
            })
        });
        assert!(failed.is_err());
        assert_eq!(entries(&dir), ["index.html"]);
        assert_eq!(
            entries(&root),
            ["report"],
            "no partial or replaced folder left"
        );

        // A partial folder of a killed run (a process id above Linux's largest) is removed by
        // the next report; one of a running process (this one, under another name) is not.
        let stale = root.join(".report.partial-4294967295");
        let other = root.join(format!(".other.partial-{}", std::process::id()));
        std::fs::create_dir_all(&stale).expect("stale");
        std::fs::create_dir_all(&other).expect("other");
        write_report(&dir, "three").expect("third");
        let expected: &[&str] = if cfg!(target_os = "linux") {
            &[".other.partial-", "report"]
        } else {
            &[".other.partial-", ".report.partial-", "report"]
        };
        let found: Vec<String> = entries(&root)
            .into_iter()
            .map(|n| n.trim_end_matches(|c: char| c.is_ascii_digit()).to_owned())
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_folder_of_other_files_or_a_file_is_refused_untouched() {
        let root = scratch("refuse");
        let photos = root.join("photos");
        std::fs::create_dir_all(&photos).expect("dir");
        std::fs::write(photos.join("cat.jpg"), b"cat").expect("write");
        let error = write_report(&photos, "x").expect_err("refused");
        assert!(error.to_string().contains("photos"), "{error}");
        assert_eq!(entries(&photos), ["cat.jpg"]);
        let file = root.join("notes.txt");
        std::fs::write(&file, b"notes").expect("write");
        assert!(write_report(&file, "x").is_err());
        assert_eq!(std::fs::read(&file).expect("file"), b"notes");
        assert!(write_report(&root.join(".."), "x").is_err());
        assert_eq!(entries(&root), ["notes.txt", "photos"]);
        let empty = root.join("empty");
        std::fs::create_dir_all(&empty).expect("dir");
        write_report(&empty, "x").expect("an empty folder is replaced");
    }
}
