//! Where commands write and how they fail: bad usage (exit 2), an error as one line, the guard
//! that refuses to write over the input, the `{frame}` template of `pose`'s output and the most
//! frames a command may be asked for.

use std::fmt;
use std::path::{Path, PathBuf};

use skinblend_gltf::export::{self, is_same_file, resolved};
use skinblend_gltf::GltfError;

/// Bad usage found after parsing (a combination clap cannot check): `main` prints it on one
/// line and exits 2, like clap's own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `Err(UsageError(message))` as an `anyhow::Result`.
pub fn usage<T>(message: impl Into<String>) -> anyhow::Result<T> {
    Err(UsageError(message.into()).into())
}

/// Whether `error` is bad usage (exit 2): a [`UsageError`], or an output that is an input file
/// refused by the glTF crate's writers ([`GltfError::OutputIsInput`], the rule
/// [`refuse_input`] applies before anything is read).
#[must_use]
pub fn is_usage(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<UsageError>()
            || matches!(
                cause.downcast_ref::<GltfError>(),
                Some(GltfError::OutputIsInput { .. })
            )
    })
}

/// Frames a command may be asked for: far more than any report or benchmark needs, and a bound
/// on the work a typo can start.
pub const MAX_FRAMES: i64 = 10_000;

/// The error and its causes on one line, `context: error: cause`, leaving out a cause whose
/// text the line already holds (our error types print their source in their own message) and
/// a context that the next cause repeats.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string().replace(['\n', '\r'], " ");
        if text.starts_with(&line) {
            // A cause that repeats the context (a file name) and says more replaces it.
            line = text;
            continue;
        }
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Refuses (bad usage, exit 2) an `output` that is `input`, before anything is read or written:
/// the workspace's one rule ([`skinblend_gltf::export::refuse_input`]), which the model's
/// writers apply again to every file the model was read from.
///
/// # Errors
/// [`UsageError`] naming both paths.
pub fn refuse_input(input: &Path, output: &Path) -> anyhow::Result<()> {
    export::refuse_input(&[input], output).or_else(|error| usage(error.to_string()))
}

/// The placeholder a `pose` output takes for the frame number.
pub const FRAME_PLACEHOLDER: &str = "{frame}";

/// Digits a frame number is written with, zero-padded so that names sort in frame order.
pub const FRAME_DIGITS: usize = 4;

/// A `pose` output name with `{frame}` in its file name, e.g. `out/fox_{frame}.glb`.
#[derive(Debug, Clone)]
pub struct FrameTemplate {
    folder: PathBuf,
    name: String,
}

impl FrameTemplate {
    /// Checks a template: `{frame}` at least once in the file name (not in the folder), no other
    /// `{` or `}`.
    ///
    /// # Errors
    /// [`UsageError`] saying what is wrong with it.
    pub fn parse(template: &Path) -> anyhow::Result<Self> {
        let shown = template.display();
        let Some(name) = template.file_name().and_then(|n| n.to_str()) else {
            return usage(format!(
                "{shown}: the output needs a file name with {FRAME_PLACEHOLDER} in it"
            ));
        };
        let folder = template.parent().unwrap_or(Path::new("")).to_path_buf();
        if folder.to_string_lossy().contains(['{', '}']) {
            return usage(format!(
                "{shown}: {FRAME_PLACEHOLDER} goes in the file name, not in the folder"
            ));
        }
        if name.replace(FRAME_PLACEHOLDER, "").contains(['{', '}']) {
            return usage(format!(
                "{shown}: the only placeholder in an output name is {FRAME_PLACEHOLDER}"
            ));
        }
        if !name.contains(FRAME_PLACEHOLDER) {
            return usage(format!(
                "{shown}: --fps and --frames write one file per frame: put {FRAME_PLACEHOLDER} \
                 in the output's file name (e.g. out/name_{FRAME_PLACEHOLDER}.glb)"
            ));
        }
        Ok(Self {
            folder,
            name: name.to_owned(),
        })
    }

    /// The folder the frames go to (empty: the current folder).
    #[must_use]
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The file of frame `frame`: `{frame}` replaced by the number, zero-padded to
    /// [`FRAME_DIGITS`] digits.
    #[must_use]
    pub fn path(&self, frame: u32) -> PathBuf {
        let number = format!("{frame:0width$}", width = FRAME_DIGITS);
        self.folder
            .join(self.name.replace(FRAME_PLACEHOLDER, &number))
    }
}

/// Refuses (bad usage) `{frame}` or another brace in an output that names one file.
///
/// # Errors
/// [`UsageError`] saying to add `--fps` or `--frames`.
pub fn refuse_template(output: &Path) -> anyhow::Result<()> {
    if output.to_string_lossy().contains(FRAME_PLACEHOLDER) {
        return usage(format!(
            "{}: {FRAME_PLACEHOLDER} in the output needs --fps or --frames",
            output.display()
        ));
    }
    Ok(())
}

/// Extensions of the files a picture report writes into its folder.
const REPORT_EXTENSIONS: &[&str] = &["png", "html", "csv", "json"];

/// Refuses (bad usage) a report folder `dir` that is the input file itself, or that holds the
/// input under a name the report could write (`.png`, `.html`, `.csv`, `.json`). A folder that
/// merely holds the input (a `.gltf` or `.glb` beside the report) is fine.
///
/// # Errors
/// [`UsageError`] naming both paths.
pub fn refuse_input_in_report(input: &Path, dir: &Path) -> anyhow::Result<()> {
    if is_same_file(input, dir) {
        return usage(format!(
            "{}: the report folder is the input file {}; write to another folder",
            dir.display(),
            input.display()
        ));
    }
    let (Some(input_resolved), Some(dir_resolved)) = (resolved(input), resolved(dir)) else {
        return Ok(());
    };
    let extension = input
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let report_kind = extension
        .as_deref()
        .is_some_and(|e| REPORT_EXTENSIONS.contains(&e));
    if report_kind && input_resolved.parent() == Some(dir_resolved.as_path()) {
        return usage(format!(
            "{}: the input {} is in the report folder under a name the report writes; write \
             to another folder",
            dir.display(),
            input.display()
        ));
    }
    Ok(())
}
