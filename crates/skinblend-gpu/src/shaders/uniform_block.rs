//! The palette as a GLSL ES 3.00 uniform block (WebGL2 has no storage buffers): how many
//! entries fit in the 16 KiB every implementation allows, and the padded bytes to upload.

use skinblend::Method;

use super::language::{ShaderExportError, ShaderLanguage};

/// The largest uniform block every WebGL2 / OpenGL ES 3.0 implementation accepts
/// (`GL_MAX_UNIFORM_BLOCK_SIZE` ≥ 16384).
const UNIFORM_BLOCK_BYTES: usize = 16384;

/// Bytes of one palette entry for `method`.
#[must_use]
pub fn palette_entry_bytes(method: Method) -> usize {
    crate::methods::method_kernel(method).palette_entry_bytes
}

/// The number of palette entries in the GLSL ES uniform block for `method`: as many as fit in
/// 16 KiB (341 for LBS, 170 for DQS, 113 for CoR and blended).
#[must_use]
pub fn uniform_palette_joints(method: Method) -> usize {
    UNIFORM_BLOCK_BYTES / palette_entry_bytes(method)
}

/// The GLSL ES 3.00 palette block's bytes for `palette`: its entries
/// ([`crate::GpuPalette::bytes`]), then zeros up to [`uniform_palette_joints`] entries, as WebGL2
/// requires the bound range to cover the whole block. Allocates the result.
///
/// # Errors
/// [`ShaderExportError`] when the palette has more joints than the block holds.
pub fn uniform_palette_bytes(palette: &crate::GpuPalette) -> Result<Vec<u8>, ShaderExportError> {
    let method = palette.method();
    let capacity = uniform_palette_joints(method);
    let entry = palette_entry_bytes(method);
    let bytes = palette.bytes();
    let joints = bytes.len() / entry;
    if joints > capacity {
        return Err(ShaderExportError {
            language: ShaderLanguage::GlslEs.name(),
            method: method.name(),
            message: format!(
                "{joints} joints, the uniform palette block holds {capacity}; use another language's storage buffer or split the skin"
            ),
        });
    }
    let mut block = bytes.to_vec();
    block.resize(capacity * entry, 0);
    Ok(block)
}
