//! Accessor decoding with every offset, stride, count and value checked.
//!
//! Honours byte strides, matrix column padding, normalized integers (decoded as the glTF 2.0
//! specification says: `max(c / 127, −1)` for bytes, `c / 255` for unsigned bytes, and so on) and
//! sparse substitution. Non-normalized integers decode to their integer value (exact in `f64`).

use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;
use gltf::json::Root;

use crate::error::{GltfError, Result};

/// Values (components) that an accessor without a buffer view may declare. Such an accessor is
/// zeros plus its sparse substitutions, so no buffer bounds its count; 2^24 values (a VEC3 of
/// 5.6 million vertices, 128 MiB decoded) is far above any real one and keeps a hostile count
/// from allocating memory the machine does not have.
pub const MAX_VALUES_WITHOUT_VIEW: usize = 1 << 24;

/// One accessor decoded to `f64`, `components` values per element.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessorData {
    /// Values per element (1 for SCALAR … 16 for MAT4).
    pub components: usize,
    /// The component type as stored.
    pub component_type: ComponentType,
    /// Whether integers were normalized to [0, 1] or [−1, 1].
    pub normalized: bool,
    /// `count × components` values, element-major.
    pub values: Vec<f64>,
}

impl AccessorData {
    /// Number of elements.
    #[must_use]
    pub fn count(&self) -> usize {
        self.values.len().checked_div(self.components).unwrap_or(0)
    }

    /// Element `i` as a slice of `components` values (`None` past the end).
    #[must_use]
    pub fn element(&self, i: usize) -> Option<&[f64]> {
        let start = i.checked_mul(self.components)?;
        self.values.get(start..start.checked_add(self.components)?)
    }
}

/// Number of components of an accessor type.
pub(crate) fn type_components(ty: Type) -> usize {
    match ty {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// Rows of a matrix type (the column length), or `None` for scalars and vectors.
fn matrix_rows(ty: Type) -> Option<usize> {
    match ty {
        Type::Mat2 => Some(2),
        Type::Mat3 => Some(3),
        Type::Mat4 => Some(4),
        _ => None,
    }
}

/// Bytes of one component.
pub(crate) fn component_bytes(ct: ComponentType) -> usize {
    match ct {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

/// The specification's name of a component type, for messages.
pub(crate) fn component_name(ct: ComponentType) -> &'static str {
    match ct {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// Decodes one component at `offset` (the caller guarantees the bytes exist).
fn component(bytes: &[u8], offset: usize, ct: ComponentType, normalized: bool) -> Option<f64> {
    let b = bytes.get(offset..offset.checked_add(component_bytes(ct))?)?;
    let value = match ct {
        ComponentType::I8 => {
            let c = f64::from(b[0] as i8);
            if normalized {
                (c / 127.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U8 => {
            let c = f64::from(b[0]);
            if normalized {
                c / 255.0
            } else {
                c
            }
        }
        ComponentType::I16 => {
            let c = f64::from(i16::from_le_bytes([b[0], b[1]]));
            if normalized {
                (c / 32767.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U16 => {
            let c = f64::from(u16::from_le_bytes([b[0], b[1]]));
            if normalized {
                c / 65535.0
            } else {
                c
            }
        }
        ComponentType::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ComponentType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    };
    Some(value)
}

fn checked<T: Copy>(value: &Checked<T>, path: &str, what: &str) -> Result<T> {
    match value {
        Checked::Valid(v) => Ok(*v),
        Checked::Invalid => Err(GltfError::invalid(path, format!("invalid {what}"))),
    }
}

/// The bytes of a buffer view, checked against its buffer.
fn view_bytes<'a>(
    root: &Root,
    buffers: &'a [Vec<u8>],
    view_index: usize,
) -> Result<(&'a [u8], Option<usize>)> {
    let path = format!("bufferViews[{view_index}]");
    let view = root
        .buffer_views
        .get(view_index)
        .ok_or_else(|| GltfError::invalid(&path, "does not exist"))?;
    let buffer_index = view.buffer.value();
    let buffer = buffers.get(buffer_index).ok_or_else(|| {
        GltfError::invalid(
            format!("{path}.buffer"),
            format!("buffer {buffer_index} does not exist"),
        )
    })?;
    let offset = to_usize(view.byte_offset.map_or(0, |o| o.0), &path)?;
    let length = to_usize(view.byte_length.0, &path)?;
    let end = offset
        .checked_add(length)
        .filter(|&end| end <= buffer.len());
    let end = end.ok_or_else(|| {
        GltfError::invalid(
            format!("{path}.byteLength"),
            format!(
                "bytes {offset}..{offset}+{length} run past the end of buffers[{buffer_index}] ({} bytes)",
                buffer.len()
            ),
        )
    })?;
    let stride = view.byte_stride.map(|s| s.0);
    if let Some(stride) = stride {
        // The specification's schema: 4 to 252 bytes, a multiple of 4.
        if !(4..=252).contains(&stride) || stride % 4 != 0 {
            return Err(GltfError::invalid(
                format!("{path}.byteStride"),
                format!("{stride} is not a multiple of 4 from 4 to 252"),
            ));
        }
    }
    Ok((&buffer[offset..end], stride))
}

/// Where accessor `index`'s data starts in its buffer: `bufferView.byteOffset + byteOffset`,
/// `None` without a buffer view.
pub(crate) fn start_in_buffer(root: &Root, index: usize) -> Option<u64> {
    let accessor = root.accessors.get(index)?;
    let view = root.buffer_views.get(accessor.buffer_view?.value())?;
    Some(view.byte_offset.map_or(0, |o| o.0) + accessor.byte_offset.map_or(0, |o| o.0))
}

/// A normalized integer component as the specification decodes it (the value itself when not
/// normalized or a float).
fn decode_normalized(c: f64, ct: ComponentType, normalized: bool) -> f64 {
    if !normalized {
        return c;
    }
    match ct {
        ComponentType::I8 => (c / 127.0).max(-1.0),
        ComponentType::U8 => c / 255.0,
        ComponentType::I16 => (c / 32767.0).max(-1.0),
        ComponentType::U16 => c / 65535.0,
        ComponentType::U32 | ComponentType::F32 => c,
    }
}

/// Checks `min` and `max`, where the accessor declares them, against the decoded values: one
/// value per component, each the exact extreme (as the Khronos validator checks; floats compare
/// as f32, integers as stored before normalization).
fn check_bounds(
    accessor: &gltf::json::Accessor,
    path: &str,
    ct: ComponentType,
    components: usize,
    values: &[f64],
) -> Result<()> {
    for (key, bound) in [("min", &accessor.min), ("max", &accessor.max)] {
        let Some(bound) = bound else { continue };
        let declared: Vec<f64> = match bound.as_array() {
            Some(items) if items.len() == components => {
                items.iter().filter_map(serde_json::Value::as_f64).collect()
            }
            _ => Vec::new(),
        };
        if declared.len() != components {
            return Err(GltfError::invalid(
                format!("{path}.{key}"),
                format!("is not an array of {components} numbers (one per component)"),
            ));
        }
        if values.is_empty() {
            continue;
        }
        for (c, &declared) in declared.iter().enumerate() {
            let column = values.iter().skip(c).step_by(components).copied();
            let actual = if key == "min" {
                column.fold(f64::INFINITY, f64::min)
            } else {
                column.fold(f64::NEG_INFINITY, f64::max)
            };
            let expected = if ct == ComponentType::F32 {
                f64::from(declared as f32)
            } else {
                decode_normalized(declared, ct, accessor.normalized)
            };
            if expected != actual {
                return Err(GltfError::invalid(
                    format!("{path}.{key}[{c}]"),
                    format!("declares {declared}, but the data's {key}imum is {actual}"),
                ));
            }
        }
    }
    Ok(())
}

fn to_usize(value: u64, path: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| GltfError::invalid(path, format!("{value} is too large")))
}

/// Decodes accessor `index`; `context` is the JSON path that referred to it (used in errors,
/// followed by ` -> accessors[index]`).
///
/// Floats must be finite. Sparse indices must be strictly increasing and below `count`.
///
/// # Errors
/// [`GltfError::Invalid`] naming the accessor and the element or byte range at fault.
pub fn read(root: &Root, buffers: &[Vec<u8>], index: usize, context: &str) -> Result<AccessorData> {
    let path = format!("{context} -> accessors[{index}]");
    let accessor = root
        .accessors
        .get(index)
        .ok_or_else(|| GltfError::invalid(context, format!("accessor {index} does not exist")))?;
    let ct = checked(&accessor.component_type, &path, "componentType")?.0;
    let ty = checked(&accessor.type_, &path, "type")?;
    let normalized = accessor.normalized;
    let components = type_components(ty);
    let count = to_usize(accessor.count.0, &path)?;
    let csize = component_bytes(ct);
    // Matrix columns start on 4-byte boundaries (MAT2/MAT3 of bytes or shorts are padded).
    let (columns, rows, column_stride) = match matrix_rows(ty) {
        Some(rows) => (rows, rows, (rows * csize).next_multiple_of(4)),
        None => (1, components, components * csize),
    };
    let element_bytes = columns * column_stride;
    let total = count
        .checked_mul(components)
        .ok_or_else(|| GltfError::invalid(format!("{path}.count"), "too large"))?;
    // The count is checked against the real bytes (or, without a buffer view, against
    // MAX_VALUES_WITHOUT_VIEW) before anything is allocated.
    let source = match accessor.buffer_view {
        Some(view) => {
            let view = view.value();
            let (bytes, stride) = view_bytes(root, buffers, view)?;
            let stride = stride.unwrap_or(element_bytes);
            if stride < element_bytes {
                return Err(GltfError::invalid(
                    format!("bufferViews[{view}].byteStride"),
                    format!("{stride} is less than the element size {element_bytes} of {path}"),
                ));
            }
            let offset = to_usize(accessor.byte_offset.map_or(0, |o| o.0), &path)?;
            if offset % csize != 0 {
                return Err(GltfError::invalid(
                    format!("{path}.byteOffset"),
                    format!("{offset} is not a multiple of the component size {csize}"),
                ));
            }
            let start = start_in_buffer(root, index).unwrap_or(0);
            if !start.is_multiple_of(csize as u64) {
                return Err(GltfError::invalid(
                    format!("{path}.byteOffset"),
                    format!(
                        "the data starts at byte {start} of the buffer, not a multiple of the component size {csize}"
                    ),
                ));
            }
            if count > 0 {
                let needed = stride
                    .checked_mul(count - 1)
                    .and_then(|n| n.checked_add(element_bytes))
                    .and_then(|n| n.checked_add(offset));
                if needed.is_none_or(|needed| needed > bytes.len()) {
                    return Err(GltfError::invalid(
                        format!("{path}.byteOffset"),
                        format!(
                            "{count} elements of {element_bytes} bytes (stride {stride}) from offset {offset} need more than the {} bytes of bufferViews[{view}]",
                            bytes.len(),
                        ),
                    ));
                }
            }
            Some((bytes, stride, offset))
        }
        None if total > MAX_VALUES_WITHOUT_VIEW => {
            return Err(GltfError::invalid(
                format!("{path}.count"),
                format!(
                    "{count} elements of {components} values without a buffer view exceed the limit of {MAX_VALUES_WITHOUT_VIEW} values"
                ),
            ));
        }
        None => None,
    };
    let mut values = vec![0.0f64; total];
    if let Some((bytes, stride, offset)) = source {
        for element in 0..count {
            let base = offset + element * stride;
            for column in 0..columns {
                for row in 0..rows {
                    let at = base + column * column_stride + row * csize;
                    let value = component(bytes, at, ct, normalized)
                        .ok_or_else(|| GltfError::invalid(&path, "read past the view"))?;
                    values[element * components + column * rows + row] = value;
                }
            }
        }
    }
    if let Some(sparse) = &accessor.sparse {
        let sparse_path = format!("{path}.sparse");
        let sparse_count = to_usize(sparse.count.0, &sparse_path)?;
        if sparse_count > count {
            return Err(GltfError::invalid(
                format!("{sparse_path}.count"),
                format!("{sparse_count} exceeds the accessor's count {count}"),
            ));
        }
        let index_ct = checked(
            &sparse.indices.component_type,
            &sparse_path,
            "componentType",
        )?
        .0;
        let (index_bytes, _) = view_bytes(root, buffers, sparse.indices.buffer_view.value())?;
        let index_offset = to_usize(sparse.indices.byte_offset.0, &sparse_path)?;
        let (value_bytes, _) = view_bytes(root, buffers, sparse.values.buffer_view.value())?;
        let value_offset = to_usize(sparse.values.byte_offset.0, &sparse_path)?;
        let mut previous: Option<usize> = None;
        for i in 0..sparse_count {
            let at = index_offset + i * component_bytes(index_ct);
            let target = component(index_bytes, at, index_ct, false).ok_or_else(|| {
                GltfError::invalid(
                    format!("{sparse_path}.indices"),
                    format!("index {i} lies past the end of its buffer view"),
                )
            })? as usize;
            if target >= count || previous.is_some_and(|p| target <= p) {
                return Err(GltfError::invalid(
                    format!("{sparse_path}.indices[{i}]"),
                    format!("element {target} is not increasing or not below the count {count}"),
                ));
            }
            previous = Some(target);
            for column in 0..columns {
                for row in 0..rows {
                    let at =
                        value_offset + i * element_bytes + column * column_stride + row * csize;
                    let value = component(value_bytes, at, ct, normalized).ok_or_else(|| {
                        GltfError::invalid(
                            format!("{sparse_path}.values"),
                            format!("value {i} lies past the end of its buffer view"),
                        )
                    })?;
                    values[target * components + column * rows + row] = value;
                }
            }
        }
    }
    if let Some(at) = values.iter().position(|v| !v.is_finite()) {
        return Err(GltfError::invalid(
            &path,
            format!(
                "element {} component {} is {} (NaN or infinite)",
                at / components,
                at % components,
                values[at]
            ),
        ));
    }
    check_bounds(accessor, &path, ct, components, &values)?;
    Ok(AccessorData {
        components,
        component_type: ct,
        normalized,
        values,
    })
}

/// Reads the accessor and checks its type against `allowed` (type, component types,
/// normalized) with a message naming both.
pub(crate) fn read_typed(
    root: &Root,
    buffers: &[Vec<u8>],
    index: usize,
    context: &str,
    ty: Type,
    allowed: &[(ComponentType, bool)],
) -> Result<AccessorData> {
    let accessor = root
        .accessors
        .get(index)
        .ok_or_else(|| GltfError::invalid(context, format!("accessor {index} does not exist")))?;
    let path = format!("{context} -> accessors[{index}]");
    let found_ty = checked(&accessor.type_, &path, "type")?;
    let found_ct = checked(&accessor.component_type, &path, "componentType")?.0;
    if found_ty != ty {
        return Err(GltfError::invalid(
            &path,
            format!("type {found_ty:?}, expected {ty:?}"),
        ));
    }
    if !allowed.contains(&(found_ct, accessor.normalized)) {
        let list: Vec<String> = allowed
            .iter()
            .map(|(ct, n)| {
                format!(
                    "{}{}",
                    component_name(*ct),
                    if *n { " normalized" } else { "" }
                )
            })
            .collect();
        return Err(GltfError::invalid(
            &path,
            format!(
                "componentType {}{} is not allowed here (expected {})",
                component_name(found_ct),
                if accessor.normalized {
                    " normalized"
                } else {
                    ""
                },
                list.join(", ")
            ),
        ));
    }
    read(root, buffers, index, context)
}
