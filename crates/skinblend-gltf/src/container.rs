//! Containers: GLB chunks, buffer URIs (data: and relative files) and base64.
//!
//! Parsed here, byte by byte with checked arithmetic, before anything reaches the `gltf` crate:
//! its GLB reader overflows on a header length under 12.

use std::path::{Path, PathBuf};

use crate::error::{GltfError, Result};

/// `glTF` in little-endian ASCII.
const GLB_MAGIC: u32 = 0x4654_6C67;
/// `JSON` chunk type.
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// `BIN\0` chunk type.
const CHUNK_BIN: u32 = 0x004E_4942;
/// Bytes in the GLB header: magic, version, length.
const GLB_HEADER_BYTES: usize = 12;
/// Bytes in a chunk header: length, type.
const CHUNK_HEADER_BYTES: usize = 8;

/// A file split into its JSON text and, for GLB, its binary chunk.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    /// The JSON bytes.
    pub json: Vec<u8>,
    /// The GLB `BIN` chunk, if any.
    pub bin: Option<Vec<u8>>,
}

/// Whether `bytes` start with the GLB magic.
pub(crate) fn is_glb(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && read_u32(bytes, 0) == Some(GLB_MAGIC)
}

fn read_u32(bytes: &[u8], offset: usize) -> Option<u32> {
    let end = offset.checked_add(4)?;
    let b = bytes.get(offset..end)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn glb_error(offset: usize, what: impl Into<String>) -> GltfError {
    GltfError::Glb {
        offset,
        what: what.into(),
    }
}

/// Bytes of a file's start shown in the error for a file that is not glTF: enough to recognise
/// a PNG (`\x89PNG\r\n\x1a\n`), an OBJ (`# ...`) or a text file, short enough for one line.
const SHOWN_START_BYTES: usize = 8;

/// Refuses bytes that are not GLB and cannot be glTF JSON either: empty, or starting (after
/// a UTF-8 byte order mark and JSON whitespace) with anything but `{`. A file that does start
/// like JSON keeps the JSON parser's message with its line and column.
///
/// # Errors
/// [`GltfError::NotGltf`] saying how the bytes start.
fn refuse_non_json(bytes: &[u8]) -> Result<()> {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first = text
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    match first {
        Some(b'{') => Ok(()),
        None if bytes.is_empty() => Err(GltfError::NotGltf {
            what: "the file is empty".to_owned(),
        }),
        None => Err(GltfError::NotGltf {
            what: "the file holds only whitespace".to_owned(),
        }),
        Some(_) => {
            let start: String = bytes
                .iter()
                .take(SHOWN_START_BYTES)
                .flat_map(|&b| std::ascii::escape_default(b))
                .map(char::from)
                .collect();
            Err(GltfError::NotGltf {
                what: format!("it starts with \"{start}\", neither '{{' (JSON) nor \"glTF\" (GLB)"),
            })
        }
    }
}

/// Splits a `.gltf` (JSON) or `.glb` file into JSON and binary chunk.
///
/// # Errors
/// [`GltfError::NotGltf`] for bytes that are neither; [`GltfError::Glb`] with the byte offset
/// for a truncated or inconsistent container.
pub(crate) fn split(bytes: &[u8]) -> Result<Container> {
    if !is_glb(bytes) {
        refuse_non_json(bytes)?;
        return Ok(Container {
            json: bytes.to_vec(),
            bin: None,
        });
    }
    let version = read_u32(bytes, 4).ok_or_else(|| glb_error(4, "truncated header: no version"))?;
    if version != 2 {
        return Err(glb_error(4, format!("version {version}, expected 2")));
    }
    let declared =
        read_u32(bytes, 8).ok_or_else(|| glb_error(8, "truncated header: no length"))? as usize;
    if declared < GLB_HEADER_BYTES {
        return Err(glb_error(
            8,
            format!("declared length {declared} is shorter than the 12-byte header"),
        ));
    }
    if declared > bytes.len() {
        return Err(glb_error(
            8,
            format!(
                "declared length {declared} but the file has {} bytes (truncated)",
                bytes.len()
            ),
        ));
    }
    let bytes = &bytes[..declared];
    let mut offset = GLB_HEADER_BYTES;
    let mut json = None;
    let mut bin = None;
    let mut index = 0usize;
    while offset < bytes.len() {
        let length = read_u32(bytes, offset)
            .ok_or_else(|| glb_error(offset, format!("chunk {index}: truncated chunk header")))?
            as usize;
        let kind = read_u32(bytes, offset + 4)
            .ok_or_else(|| glb_error(offset, format!("chunk {index}: truncated chunk header")))?;
        let start = offset + CHUNK_HEADER_BYTES;
        let end = start
            .checked_add(length)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                glb_error(
                    offset,
                    format!(
                        "chunk {index}: length {length} runs past the end of the container ({} bytes)",
                        bytes.len()
                    ),
                )
            })?;
        let data = &bytes[start..end];
        match (index, kind) {
            (0, CHUNK_JSON) => json = Some(data.to_vec()),
            (0, _) => {
                return Err(glb_error(
                    offset,
                    format!("first chunk has type {kind:#010x}, expected JSON"),
                ))
            }
            (1, CHUNK_BIN) => bin = Some(data.to_vec()),
            (_, CHUNK_JSON) => return Err(glb_error(offset, "a second JSON chunk")),
            (_, CHUNK_BIN) => return Err(glb_error(offset, "a BIN chunk that is not second")),
            // Unknown chunk types are skipped, as the specification requires.
            _ => {}
        }
        offset = end;
        index += 1;
    }
    let json = json.ok_or_else(|| glb_error(GLB_HEADER_BYTES, "no JSON chunk"))?;
    Ok(Container { json, bin })
}

/// Reads the bytes of buffer `index` from its URI or the GLB binary chunk.
///
/// `base` is the directory relative URIs resolve against. The result holds at least
/// `byte_length` bytes.
///
/// # Errors
/// [`GltfError::Invalid`] at `buffers[index]` (missing data, bad data: URI, too short) or
/// [`GltfError::Io`] for an unreadable external file.
pub(crate) fn load_buffer(
    index: usize,
    uri: Option<&str>,
    byte_length: usize,
    bin: Option<&[u8]>,
    base: Option<&Path>,
) -> Result<Vec<u8>> {
    let path = format!("buffers[{index}]");
    let data = match uri {
        None => {
            if index != 0 {
                return Err(GltfError::invalid(
                    path,
                    "has no uri and is not buffer 0 (only buffer 0 may refer to the GLB BIN chunk)",
                ));
            }
            bin.ok_or_else(|| {
                GltfError::invalid(&path, "has no uri and the file has no GLB BIN chunk")
            })?
            .to_vec()
        }
        Some(uri) => read_uri(&format!("{path}.uri"), uri, base)?,
    };
    // A URI's data has exactly byteLength bytes; the GLB BIN chunk may be padded past it.
    // Only the declared bytes are the buffer: views are checked against them.
    if data.len() < byte_length || (uri.is_some() && data.len() != byte_length) {
        return Err(GltfError::invalid(
            format!("{path}.byteLength"),
            format!(
                "declares {byte_length} bytes but the data has {}",
                data.len()
            ),
        ));
    }
    let mut data = data;
    data.truncate(byte_length);
    Ok(data)
}

/// Reads a `data:` URI or a file relative to `base`.
pub(crate) fn read_uri(path: &str, uri: &str, base: Option<&Path>) -> Result<Vec<u8>> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let (header, payload) = rest
            .split_once(',')
            .ok_or_else(|| GltfError::invalid(path, "data: URI without a comma"))?;
        if !header.ends_with(";base64") {
            return Err(GltfError::Unsupported {
                path: path.to_owned(),
                what: format!("data: URI that is not base64 ({header:?})"),
            });
        }
        return base64_decode(payload)
            .ok_or_else(|| GltfError::invalid(path, "data: URI is not valid base64"));
    }
    if uri.contains("://") {
        return Err(GltfError::Unsupported {
            path: path.to_owned(),
            what: format!("URI {uri:?}: only data: URIs and relative file paths are read"),
        });
    }
    let relative = percent_decode(uri).ok_or_else(|| GltfError::invalid(path, "bad %-escape"))?;
    let file = resolve_inside(path, uri, &relative, base)?;
    read_file(&file)
}

/// The file `relative` names inside `base`, the folder of the glTF file. Absolute paths, and
/// relative ones that lead out of the folder (by `..` or through a symbolic link), are errors:
/// a file from the internet must not make us read `/etc/passwd` or `../../.ssh`.
fn resolve_inside(path: &str, uri: &str, relative: &str, base: Option<&Path>) -> Result<PathBuf> {
    let outside = |why: &str| {
        GltfError::invalid(
            path,
            format!("URI {uri:?} {why}: only files inside the glTF file's folder are read"),
        )
    };
    let relative = Path::new(relative);
    if relative.has_root()
        || relative
            .components()
            .any(|c| matches!(c, std::path::Component::Prefix(_)))
    {
        return Err(outside("is an absolute path"));
    }
    // Lexically first, so that a path out of the folder is named as such even where the
    // file it names does not exist; then by the real paths, for symbolic links.
    let mut depth = 0usize;
    for component in relative.components() {
        match component {
            std::path::Component::ParentDir => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| outside("leads outside the folder"))?;
            }
            std::path::Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    let Some(base) = base else {
        return Err(GltfError::Unsupported {
            path: path.to_owned(),
            what: format!(
                "URI {uri:?} names a file, but the document was read from bytes without its folder"
            ),
        });
    };
    let base = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let file = base.join(relative);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| GltfError::Io { path, source }
    };
    let real_base = base.canonicalize().map_err(io(base))?;
    let real_file = file.canonicalize().map_err(io(&file))?;
    if !real_file.starts_with(&real_base) {
        return Err(outside("leads outside the folder"));
    }
    Ok(real_file)
}

/// Files larger than this are refused before they are read: the GLB container's own limit
/// (its header stores the length in 32 bits), applied to every file the loader reads.
pub const MAX_FILE_BYTES: u64 = u32::MAX as u64;

/// Reads a whole file after checking its size against [`MAX_FILE_BYTES`].
pub(crate) fn read_file(file: &Path) -> Result<Vec<u8>> {
    let io = |source| GltfError::Io {
        path: file.to_owned(),
        source,
    };
    let length = std::fs::metadata(file).map_err(io)?.len();
    if length > MAX_FILE_BYTES {
        return Err(GltfError::Io {
            path: file.to_owned(),
            source: std::io::Error::other(format!(
                "the file has {length} bytes, over the limit of {MAX_FILE_BYTES} bytes (4 GiB, the largest a GLB can be)"
            )),
        });
    }
    std::fs::read(file).map_err(io)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Decodes standard base64 (padding optional, whitespace not allowed). `None` when invalid.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut accumulator = 0u32;
    let mut bits = 0u32;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        accumulator = (accumulator << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((accumulator >> bits) as u8);
            accumulator &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Encodes standard base64 with padding.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(
                    BASE64_ALPHABET[((n >> (18 - 6 * i)) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Assembles a GLB container from JSON text and a binary chunk (padded as the spec requires:
/// JSON with spaces, BIN with zeros, each to 4 bytes).
pub(crate) fn assemble_glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let json_padded = json.len().next_multiple_of(4);
    let bin_padded = bin.len().next_multiple_of(4);
    let mut total = GLB_HEADER_BYTES + CHUNK_HEADER_BYTES + json_padded;
    if !bin.is_empty() {
        total += CHUNK_HEADER_BYTES + bin_padded;
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_padded as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(out.len() + json_padded - json.len(), b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_padded as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(out.len() + bin_padded - bin.len(), 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        let data: Vec<u8> = (0..=255u8).collect();
        for len in 0..20 {
            let encoded = base64_encode(&data[..len]);
            assert_eq!(base64_decode(&encoded).as_deref(), Some(&data[..len]));
        }
        // "Man" is the textbook example.
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_decode("TWE="), Some(b"Ma".to_vec()));
        assert_eq!(base64_decode("T!"), None);
    }

    #[test]
    fn glb_assembles_and_splits() {
        let glb = assemble_glb(b"{}", &[1, 2, 3]);
        assert_eq!(glb.len() % 4, 0);
        let container = split(&glb).unwrap();
        assert_eq!(container.json, b"{}  ");
        assert_eq!(container.bin.as_deref(), Some(&[1, 2, 3, 0][..]));
    }

    #[test]
    fn bytes_that_are_neither_json_nor_glb_are_not_gltf() {
        for (bytes, shown) in [
            (&b"notes: hello\n"[..], "\"notes: h\""),
            (b"\x89PNG\r\n\x1a\n\0\0", "\"\\x89PNG\\r\\n\\x1a\\n\""),
            (b"# skinblend OBJ\nv 0 0 0\n", "\"# skinbl\""),
            (b"", "empty"),
            (b" \n", "whitespace"),
        ] {
            let message = split(bytes).unwrap_err().to_string();
            assert!(
                message.starts_with("not glTF 2.0 (a .gltf JSON file or a .glb): "),
                "{message}"
            );
            assert!(message.contains(shown), "{message} lacks {shown}");
        }
        // JSON, even broken, keeps the parser's line and column; a BOM and whitespace first too.
        for json in [&b"{"[..], b" \r\n\t{}", b"\xEF\xBB\xBF{}"] {
            assert!(split(json).is_ok());
        }
    }
}
