//! The files a model was read from, so that its writers can refuse to write over them
//! ([`crate::export::refuse_input`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// `path` made absolute against the current folder (no links followed), so that a later change
/// of folder does not make it name another file; `path` itself if the current folder is unknown.
pub(super) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The external files the document's buffers and images name (`uri` that is neither a data:
/// URI nor a URL), resolved against `base`, in document order (buffers first).
pub(super) fn referenced_files(json: &Value, base: &Path) -> Vec<PathBuf> {
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    ["buffers", "images"]
        .iter()
        .filter_map(|key| json.get(key).and_then(Value::as_array))
        .flatten()
        .filter_map(|item| item.get("uri").and_then(Value::as_str))
        .filter(|uri| !uri.starts_with("data:") && !uri.contains("://"))
        .map(|uri| absolute(&base.join(percent_decoded(uri))))
        .collect()
}

/// `uri` with its `%XX` escapes decoded (as the loader reads it); `uri` itself when an escape
/// is malformed or the result is not UTF-8 (the loader refuses such a buffer URI).
fn percent_decoded(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let Some(byte) = bytes
                .get(i + 1..i + 3)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            else {
                return uri.to_owned();
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| uri.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_external_buffers_and_images_only() {
        let json = serde_json::json!({
            "buffers": [{ "uri": "a%20b.bin" }, { "uri": "data:application/octet-stream;base64," },
                        { "byteLength": 4 }],
            "images": [{ "uri": "tex.png" }, { "uri": "https://example.com/x.png" },
                       { "bufferView": 0 }],
        });
        let files = referenced_files(&json, Path::new("/models"));
        assert_eq!(
            files,
            [
                PathBuf::from("/models/a b.bin"),
                PathBuf::from("/models/tex.png")
            ]
        );
        assert_eq!(percent_decoded("bad%zz.bin"), "bad%zz.bin");
    }
}
