//! naga's back ends: the validated WGSL module written as GLSL 4.50, GLSL ES 3.00, HLSL or MSL,
//! with the bindings each language gets and the names it gives what a host binds.

use naga::back::glsl;

use super::interface::ShaderInterface;
use super::language::ShaderLanguage;

/// MSL buffer indices of the palette, `clip_from_world` and naga's `_mslBufferSizes` (a `uint`
/// holding the palette's size in bytes): above the low indices engines give vertex buffers.
pub(super) const MSL_PALETTE_BUFFER: u8 = 16;
pub(super) const MSL_CLIP_BUFFER: u8 = 17;
pub(super) const MSL_SIZES_BUFFER: u8 = 18;

/// GLSL 4.50 `layout(binding = N)` of the palette's storage block and of `clip_from_world`'s
/// uniform block: the WGSL bindings (storage and uniform blocks have separate binding spaces in
/// OpenGL; in Vulkan both are descriptors of set 0).
pub(super) const GLSL_PALETTE_BINDING: u8 = 0;
pub(super) const GLSL_CLIP_BINDING: u8 = 1;

/// The naga version the translation uses (the one wgpu builds with).
pub(super) const NAGA_VERSION: &str = "30.0.2";

/// `module` (parsed and validated from `wgsl`) in `language`: the text. GLSL renames the
/// palette, `clip_from_world`, the outputs and the entry point, HLSL and MSL may rename the
/// entry point: those names are written into `interface` and `entry_point`. The error is
/// naga's message.
pub(super) fn translate(
    language: ShaderLanguage,
    wgsl: &str,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    interface: &mut ShaderInterface,
    entry_point: &mut String,
) -> Result<String, String> {
    match language {
        ShaderLanguage::Wgsl => Ok(wgsl.to_string()),
        ShaderLanguage::Glsl | ShaderLanguage::GlslEs => {
            let out = to_glsl(language, module, info, interface)?;
            *entry_point = "main".to_string();
            Ok(out)
        }
        ShaderLanguage::Hlsl => to_hlsl(module, info, entry_point),
        ShaderLanguage::Msl => to_msl(module, info, entry_point),
    }
}

/// GLSL 4.50 or GLSL ES 3.00; fills in the names GLSL gives the blocks and the outputs.
fn to_glsl(
    language: ShaderLanguage,
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    interface: &mut ShaderInterface,
) -> Result<String, String> {
    let global_at = |binding: u32| {
        module
            .global_variables
            .iter()
            .find(|(_, g)| g.binding.as_ref().is_some_and(|b| b.binding == binding))
            .map(|(h, _)| h)
    };
    let (palette_global, clip_global) = (global_at(0), global_at(1));
    let version = if language == ShaderLanguage::Glsl {
        glsl::Version::Desktop(450)
    } else {
        glsl::Version::Embedded {
            version: 300,
            is_webgl: false,
        }
    };
    // GLSL 4.50 names each block's binding (`layout(binding = N)`), which Vulkan GLSL
    // requires and OpenGL 4.2+ accepts; no `set` qualifier (Vulkan's default set 0;
    // OpenGL GLSL refuses `set`), so one file serves both APIs. GLSL ES 3.00 has no
    // binding qualifier: the host binds its blocks by name.
    let binding_map = if language == ShaderLanguage::Glsl {
        [(0, GLSL_PALETTE_BINDING), (1, GLSL_CLIP_BINDING)]
            .into_iter()
            .map(|(binding, slot)| (naga::ResourceBinding { group: 0, binding }, slot))
            .collect()
    } else {
        glsl::BindingMap::default()
    };
    let options = glsl::Options {
        version,
        writer_flags: glsl::WriterFlags::INCLUDE_UNUSED_ITEMS,
        binding_map,
        zero_initialize_workgroup_memory: false,
    };
    let pipeline = glsl::PipelineOptions {
        shader_stage: naga::ShaderStage::Vertex,
        entry_point: "skin_vertex_main".to_string(),
        multiview: None,
    };
    let mut out = String::new();
    let mut writer = glsl::Writer::new(
        &mut out,
        module,
        info,
        &options,
        &pipeline,
        naga::proc::BoundsCheckPolicies::default(),
    )
    .map_err(|e| e.to_string())?;
    let reflection = writer.write().map_err(|e| e.to_string())?;
    drop(writer);
    let name_of = |global: Option<naga::Handle<naga::GlobalVariable>>| {
        global.and_then(|h| reflection.uniforms.get(&h).cloned())
    };
    interface.palette = name_of(palette_global).ok_or("no palette block")?;
    interface.clip_from_world = name_of(clip_global).ok_or("no clip_from_world block")?;
    // naga names a vertex output at location N `_vs2fs_locationN`; checked in the text.
    let varying = |location: u32| {
        let name = format!("_vs2fs_location{location}");
        out.contains(&format!(" {name};"))
            .then_some(name)
            .ok_or_else(|| format!("no output at location {location}"))
    };
    interface.position_output = varying(0)?;
    interface.normal_output = varying(1)?;
    Ok(out)
}

/// HLSL shader model 5.1 (naga's default options: palette `t0`, `clip_from_world` `b1`).
fn to_hlsl(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &mut String,
) -> Result<String, String> {
    let options = naga::back::hlsl::Options::default();
    let pipeline = naga::back::hlsl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Vertex, "skin_vertex_main".to_string())),
    };
    let mut out = String::new();
    let mut writer = naga::back::hlsl::Writer::new(&mut out, &options, &pipeline);
    let reflection = writer
        .write(module, info, None)
        .map_err(|e| e.to_string())?;
    drop(writer);
    if let Some(Ok(name)) = reflection.entry_point_names.first() {
        entry_point.clone_from(name);
    }
    Ok(out)
}

/// Metal Shading Language 2.0, the palette and `clip_from_world` at the buffer indices above.
fn to_msl(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry_point: &mut String,
) -> Result<String, String> {
    use naga::back::msl;
    let buffer = |slot| msl::BindTarget {
        buffer: Some(slot),
        ..Default::default()
    };
    let binding = |binding| naga::ResourceBinding { group: 0, binding };
    let resources = msl::EntryPointResources {
        resources: [
            (binding(0), buffer(MSL_PALETTE_BUFFER)),
            (binding(1), buffer(MSL_CLIP_BUFFER)),
        ]
        .into_iter()
        .collect(),
        immediates_buffer: None,
        sizes_buffer: Some(MSL_SIZES_BUFFER),
    };
    let options = msl::Options {
        lang_version: (2, 0),
        per_entry_point_map: [("skin_vertex_main".to_string(), resources)]
            .into_iter()
            .collect(),
        fake_missing_bindings: false,
        ..Default::default()
    };
    let pipeline = msl::PipelineOptions {
        entry_point: Some((naga::ShaderStage::Vertex, "skin_vertex_main".to_string())),
        ..Default::default()
    };
    let (out, translation) =
        msl::write_string(module, info, &options, &pipeline).map_err(|e| e.to_string())?;
    if let Some(Ok(name)) = translation.entry_point_names.first() {
        entry_point.clone_from(name);
    }
    Ok(out)
}
