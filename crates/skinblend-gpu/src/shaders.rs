//! The skinning functions and an example vertex shader per method in WGSL, GLSL 4.50, GLSL ES
//! 3.00 (WebGL2), HLSL and MSL, translated with naga from the one WGSL source in `shaders/`
//! (the same text the compute kernels run); no second hand-written copy exists.
//!
//! [`export_shader`] parses the WGSL library of a method plus the example vertex shader below,
//! validates the module with naga and writes it in the requested language. Every output starts
//! with a comment that states the bindings, the data layout, the conventions and the skinblend
//! version (see [`ExportedShader::source`]).
//!
//! # Bindings and data layout
//! - The palette, `@group(0) @binding(0)`: one entry per joint in exactly the bytes of
//!   [`crate::GpuLinearJoint`] (48: the skin matrix's three rows), [`crate::GpuDualQuatJoint`]
//!   (96: the rigid part as a dual quaternion, the residual about the joint's bind origin as
//!   three rows, the rigid flag) or [`crate::GpuCorJoint`] (144: the DQS entry, then the LBS
//!   rows); [`crate::GpuPalette::from_prepared`] makes them from the core's prepared palette
//!   ([`crate::GpuPalette::bytes`] is the upload). WGSL, GLSL 4.50, HLSL and MSL read it as a
//!   read-only storage buffer of any length. GLSL ES 3.00 has no storage buffers: there it is a
//!   uniform block (std140, the same bytes) of [`uniform_palette_joints`] entries, sized to fit
//!   the 16 KiB that every WebGL2 / OpenGL ES 3.0 implementation allows for one block;
//!   [`uniform_palette_bytes`] pads the palette to it. Upload
//!   that many entries (unused ones zero).
//! - `clip_from_world`, `@group(0) @binding(1)`: a uniform `mat4x4<f32>` (column-major), applied
//!   as is (`clip = clip_from_world · world`; no coordinate-space adjustment is added).
//! - GLSL 4.50 states both as `layout(binding = 0)` and `layout(binding = 1)` without a `set`
//!   (descriptor set 0 in Vulkan), so one file compiles for Vulkan (SPIR-V) and for OpenGL;
//!   GLSL ES 3.00 has no binding qualifier (bind its blocks by name).
//! - Vertex attributes: location 0 the bind-pose position (vec3), 1 the normal (vec3), 2 the
//!   joints (`uvec4`, glTF `JOINTS_0`), 3 the weights (vec4, `WEIGHTS_0`; divided by their sum),
//!   and for CoR 4 the vertex's center of rotation (vec4: xyz the center, w = 1 when it has one,
//!   0 when not: glTF `_SKINBLEND_COR`, [`crate::gpu_rotation_centers`]).
//! - Outputs: the clip position, location 0 the skinned position and location 1 the skinned unit
//!   normal (world space), which a transform-feedback or stream-out capture can read back.

use std::fmt::Write as _;

use naga::back::glsl;
use skinblend::Method;

use crate::{GpuCorJoint, GpuDualQuatJoint, GpuLinearJoint};

/// A shading language [`export_shader`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderLanguage {
    /// WGSL (WebGPU, wgpu, Bevy): the source itself, validated by naga.
    Wgsl,
    /// GLSL 4.50 core (OpenGL, Vulkan GLSL toolchains).
    Glsl,
    /// GLSL ES 3.00 (WebGL2, OpenGL ES 3.0; three.js, PlayCanvas, Godot's compatibility renderer).
    GlslEs,
    /// HLSL shader model 5.1 (Direct3D, Unity).
    Hlsl,
    /// Metal Shading Language 2.0 (checked by naga only).
    Msl,
}

impl ShaderLanguage {
    /// Every language, in the order of the CLI's help.
    pub const ALL: [Self; 5] = [Self::Wgsl, Self::Glsl, Self::GlslEs, Self::Hlsl, Self::Msl];

    /// The name on the command line: `wgsl`, `glsl`, `glsl-es`, `hlsl`, `msl`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Wgsl => "wgsl",
            Self::Glsl => "glsl",
            Self::GlslEs => "glsl-es",
            Self::Hlsl => "hlsl",
            Self::Msl => "msl",
        }
    }

    /// The language named `name` (as [`ShaderLanguage::name`]), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The file name ending: `.wgsl`, `.450.vert`, `.300es.vert`, `.hlsl`, `.metal`.
    #[must_use]
    pub fn file_suffix(self) -> &'static str {
        match self {
            Self::Wgsl => ".wgsl",
            Self::Glsl => ".450.vert",
            Self::GlslEs => ".300es.vert",
            Self::Hlsl => ".hlsl",
            Self::Msl => ".metal",
        }
    }

    fn palette_in_uniform_block(self) -> bool {
        self == Self::GlslEs
    }
}

/// A shader translation failed: naga refused the module or could not write it in `language`.
#[derive(Debug, thiserror::Error)]
#[error("{language} shader for {method}: {message}")]
pub struct ShaderExportError {
    /// The target language's name.
    pub language: &'static str,
    /// The skinning method's name.
    pub method: &'static str,
    /// naga's message, on one line.
    pub message: String,
}

/// Where the outputs of [`export_shader`] put what a host program binds, by the names in the
/// translated source (GLSL names its blocks and varyings itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderInterface {
    /// The palette's name: for GLSL the uniform or storage block's name (bind it with
    /// `glGetUniformBlockIndex` in GLSL ES), otherwise the variable's.
    pub palette: String,
    /// The `clip_from_world` uniform's name (for GLSL its block's).
    pub clip_from_world: String,
    /// The output carrying the skinned position (a GLSL varying name for transform feedback).
    pub position_output: String,
    /// The output carrying the skinned normal.
    pub normal_output: String,
    /// The vertex inputs in location order, each with the name the translated source gives it
    /// (three.js and `glGetAttribLocation` bind GLSL attributes by these names).
    pub inputs: Vec<ShaderInput>,
}

/// One vertex input of an exported shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderInput {
    /// What it carries: `position`, `normal`, `joints`, `weights` or (CoR) `center`.
    pub role: &'static str,
    /// Its location (`layout(location = N)`, `@location(N)`, `[[attribute(N)]]`).
    pub location: u32,
    /// Its name in the source: GLSL the `in` variable (naga's `_p2vs_locationN`), HLSL the
    /// semantic (`LOCN`, what a Direct3D input layout names), WGSL and MSL the input struct's
    /// member (those APIs bind by location only).
    pub name: String,
}

/// The vertex inputs of `method`'s example shader: role and location.
fn input_roles(method: Method) -> &'static [(&'static str, u32)] {
    const BASE: [(&str, u32); 4] = [
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
    ];
    const COR: [(&str, u32); 5] = [
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
        ("center", 4),
    ];
    if method == Method::CenterOfRotation {
        &COR
    } else {
        &BASE
    }
}

/// The name `language`'s translated `source` gives the input at `location` (`role` in WGSL),
/// found in the text; `None` when it is not there.
fn input_name(language: ShaderLanguage, source: &str, role: &str, location: u32) -> Option<String> {
    match language {
        ShaderLanguage::Glsl | ShaderLanguage::GlslEs => {
            let name = format!("_p2vs_location{location}");
            source
                .lines()
                .any(|l| {
                    l.contains(&format!("layout(location = {location}) in "))
                        && l.ends_with(&format!(" {name};"))
                })
                .then_some(name)
        }
        ShaderLanguage::Hlsl => {
            let name = format!("LOC{location}");
            source.contains(&format!(" : {name};")).then_some(name)
        }
        ShaderLanguage::Wgsl => source
            .contains(&format!("@location({location}) {role}:"))
            .then(|| role.to_string()),
        ShaderLanguage::Msl => {
            let marker = format!(" [[attribute({location})]];");
            let line = source.lines().find(|l| l.ends_with(&marker))?;
            let before = line.strip_suffix(&marker)?;
            before.rsplit(' ').next().map(str::to_string)
        }
    }
}

/// One translated shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedShader {
    /// The language it is written in.
    pub language: ShaderLanguage,
    /// The skinning method.
    pub method: Method,
    /// A file name for it: `skinblend_<method name><suffix>`, e.g. `skinblend_dq.300es.vert`.
    pub file_name: String,
    /// The vertex entry point's name in `source`.
    pub entry_point: String,
    /// The names a host binds.
    pub interface: ShaderInterface,
    /// The palette's entry count in a uniform block (GLSL ES), `None` for a storage buffer.
    pub uniform_palette_joints: Option<usize>,
    /// The text: the header comment, then the translated module.
    pub source: String,
}

/// The largest uniform block every WebGL2 / OpenGL ES 3.0 implementation accepts
/// (`GL_MAX_UNIFORM_BLOCK_SIZE` ≥ 16384).
const UNIFORM_BLOCK_BYTES: usize = 16384;

/// Bytes of one palette entry for `method`.
#[must_use]
pub fn palette_entry_bytes(method: Method) -> usize {
    match method {
        Method::Linear => std::mem::size_of::<GpuLinearJoint>(),
        Method::DualQuaternion => std::mem::size_of::<GpuDualQuatJoint>(),
        Method::CenterOfRotation => std::mem::size_of::<GpuCorJoint>(),
    }
}

/// The number of palette entries in the GLSL ES uniform block for `method`: as many as fit in
/// 16 KiB (341 for LBS, 170 for DQS, 113 for CoR).
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

/// The example vertex shader appended to a method's library (`BLEND` and `CENTER_*` filled in).
const EXAMPLE_VERTEX: &str = r"
// ---- example vertex shader (skinblend) ----
@group(0) @binding(1) var<uniform> skin_clip_from_world: mat4x4<f32>;

struct SkinVertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) joints: vec4<u32>,
    @location(3) weights: vec4<f32>,
CENTER_FIELD}

struct SkinVertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) world_normal: vec3<f32>,
}

@vertex
fn skin_vertex_main(v: SkinVertexIn) -> SkinVertexOut {
BODY    return SkinVertexOut(skin_clip_from_world * vec4<f32>(world, 1.0), world, normal);
}
";

const LINEAR_BODY: &str = "    let m = skin_linear_blend4(v.joints, v.weights);
    let world = skin_affine_point(m, v.position);
    let normal = skin_linear_normal(m, v.normal);
";
const DUAL_QUAT_BODY: &str = "    let b = skin_dual_quat_blend4(v.joints, v.weights);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
";
const COR_BODY: &str = "    let b = skin_cor_blend4(v.joints, v.weights, v.center);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
";

/// The one WGSL source of `method`'s library and example vertex shader, with the palette as a
/// storage buffer (`uniform_joints: None`) or a fixed-size uniform array.
#[must_use]
pub fn example_vertex_wgsl(method: Method, uniform_joints: Option<usize>) -> String {
    let (palette_name, entry_type, library, body) = match method {
        Method::Linear => (
            "skin_linear_palette",
            "SkinAffine",
            crate::wgsl::LINEAR_WGSL,
            LINEAR_BODY,
        ),
        Method::DualQuaternion => (
            "skin_dual_quat_palette",
            "SkinDualQuatJoint",
            crate::wgsl::DUAL_QUAT_WGSL,
            DUAL_QUAT_BODY,
        ),
        Method::CenterOfRotation => (
            "skin_cor_palette",
            "SkinCorJoint",
            crate::wgsl::COR_WGSL,
            COR_BODY,
        ),
    };
    let declaration = match uniform_joints {
        None => {
            format!("@group(0) @binding(0) var<storage, read> {palette_name}: array<{entry_type}>;")
        }
        Some(n) => {
            format!("@group(0) @binding(0) var<uniform> {palette_name}: array<{entry_type}, {n}>;")
        }
    };
    let center_field = if method == Method::CenterOfRotation {
        "    @location(4) center: vec4<f32>,\n"
    } else {
        ""
    };
    let example = EXAMPLE_VERTEX
        .replace("CENTER_FIELD", center_field)
        .replace("BODY", body);
    format!(
        "{declaration}\n{}\n{library}\n{example}",
        crate::wgsl::SKINNING_WGSL
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Translates `method`'s skinning functions and example vertex shader into `language`.
///
/// # Errors
/// [`ShaderExportError`] when naga cannot parse, validate or write the module (a bug in this
/// crate or in naga, never caused by user data).
pub fn export_shader(
    language: ShaderLanguage,
    method: Method,
) -> Result<ExportedShader, ShaderExportError> {
    let fail = |message: String| ShaderExportError {
        language: language.name(),
        method: method.name(),
        message: one_line(&message),
    };
    let uniform_joints = language
        .palette_in_uniform_block()
        .then(|| uniform_palette_joints(method));
    let wgsl = example_vertex_wgsl(method, uniform_joints);
    let module = naga::front::wgsl::parse_str(&wgsl)
        .map_err(|e| fail(format!("WGSL parse: {}", e.emit_to_string(&wgsl))))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| fail(format!("naga validation: {}", e.emit_to_string(&wgsl))))?;

    let palette_global = module
        .global_variables
        .iter()
        .find(|(_, g)| g.binding.as_ref().is_some_and(|b| b.binding == 0))
        .map(|(h, _)| h);
    let clip_global = module
        .global_variables
        .iter()
        .find(|(_, g)| g.binding.as_ref().is_some_and(|b| b.binding == 1))
        .map(|(h, _)| h);
    let wgsl_palette_name = match method {
        Method::Linear => "skin_linear_palette",
        Method::DualQuaternion => "skin_dual_quat_palette",
        Method::CenterOfRotation => "skin_cor_palette",
    };
    let mut interface = ShaderInterface {
        palette: wgsl_palette_name.to_string(),
        clip_from_world: "skin_clip_from_world".to_string(),
        position_output: "world_position".to_string(),
        normal_output: "world_normal".to_string(),
        inputs: Vec::new(),
    };
    let mut entry_point = "skin_vertex_main".to_string();

    let body = match language {
        ShaderLanguage::Wgsl => wgsl.clone(),
        ShaderLanguage::Glsl | ShaderLanguage::GlslEs => {
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
                &module,
                &info,
                &options,
                &pipeline,
                naga::proc::BoundsCheckPolicies::default(),
            )
            .map_err(|e| fail(e.to_string()))?;
            let reflection = writer.write().map_err(|e| fail(e.to_string()))?;
            drop(writer);
            let name_of = |global: Option<naga::Handle<naga::GlobalVariable>>| {
                global.and_then(|h| reflection.uniforms.get(&h).cloned())
            };
            interface.palette =
                name_of(palette_global).ok_or_else(|| fail("no palette block".into()))?;
            interface.clip_from_world =
                name_of(clip_global).ok_or_else(|| fail("no clip_from_world block".into()))?;
            // naga names a vertex output at location N `_vs2fs_locationN`; checked in the text.
            let varying = |location: u32| {
                let name = format!("_vs2fs_location{location}");
                out.contains(&format!(" {name};"))
                    .then_some(name)
                    .ok_or_else(|| fail(format!("no output at location {location}")))
            };
            interface.position_output = varying(0)?;
            interface.normal_output = varying(1)?;
            entry_point = "main".to_string();
            out
        }
        ShaderLanguage::Hlsl => {
            let options = naga::back::hlsl::Options::default();
            let pipeline = naga::back::hlsl::PipelineOptions {
                entry_point: Some((naga::ShaderStage::Vertex, "skin_vertex_main".to_string())),
            };
            let mut out = String::new();
            let mut writer = naga::back::hlsl::Writer::new(&mut out, &options, &pipeline);
            let reflection = writer
                .write(&module, &info, None)
                .map_err(|e| fail(e.to_string()))?;
            drop(writer);
            if let Some(Ok(name)) = reflection.entry_point_names.first() {
                entry_point.clone_from(name);
            }
            out
        }
        ShaderLanguage::Msl => {
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
            let pipeline = naga::back::msl::PipelineOptions {
                entry_point: Some((naga::ShaderStage::Vertex, "skin_vertex_main".to_string())),
                ..Default::default()
            };
            let (out, translation) =
                naga::back::msl::write_string(&module, &info, &options, &pipeline)
                    .map_err(|e| fail(e.to_string()))?;
            if let Some(Ok(name)) = translation.entry_point_names.first() {
                entry_point.clone_from(name);
            }
            out
        }
    };

    for &(role, location) in input_roles(method) {
        let name = input_name(language, &body, role, location)
            .ok_or_else(|| fail(format!("no vertex input {role} at location {location}")))?;
        interface.inputs.push(ShaderInput {
            role,
            location,
            name,
        });
    }

    let header = header(language, method, uniform_joints, &interface, &entry_point);
    // GLSL wants `#version` first (comments may precede it by the spec, not by every driver).
    let source = match body.split_once('\n') {
        Some((first, rest)) if first.starts_with("#version") => {
            format!("{first}\n{header}{rest}")
        }
        _ => format!("{header}{body}"),
    };
    Ok(ExportedShader {
        language,
        method,
        file_name: format!("skinblend_{}{}", method.name(), language.file_suffix()),
        entry_point,
        interface,
        uniform_palette_joints: uniform_joints,
        source,
    })
}

fn header(
    language: ShaderLanguage,
    method: Method,
    uniform_joints: Option<usize>,
    interface: &ShaderInterface,
    entry_point: &str,
) -> String {
    let mut h = String::new();
    let mut line = |text: &str| {
        let _ = writeln!(h, "// {text}");
    };
    line(&format!(
        "skinblend {} {} skinning: the skinning functions and an example vertex shader,",
        env!("CARGO_PKG_VERSION"),
        match method {
            Method::Linear => "linear blend (LBS)",
            Method::DualQuaternion => "dual quaternion (DQS)",
            Method::CenterOfRotation => "centers-of-rotation (CoR)",
        }
    ));
    line(&format!(
        "translated to {} by naga {} from skinblend's WGSL source (do not edit; regenerate with",
        language.name(),
        NAGA_VERSION
    ));
    line(&format!(
        "`skinblend shaders --lang {} --method {}`). Entry point: {entry_point} (vertex).",
        language.name(),
        method.name()
    ));
    line("");
    line("Conventions: column vectors (v' = M v), right-handed, glTF units; a 3x4 affine map is");
    line("stored as its three ROWS (row i = (M[i][0], M[i][1], M[i][2], t[i])); quaternions");
    line("(x, y, z, w); dual quaternion (real, dual) with dual = 1/2 (0, t) real.");
    line("");
    match uniform_joints {
        Some(n) => line(&format!(
            "Binding 0, palette `{}`: a uniform block (std140) of exactly {n} entries, {} bytes",
            interface.palette,
            palette_entry_bytes(method)
        )),
        None => line(&format!(
            "group 0 binding 0, palette `{}`: a read-only storage buffer, one entry of {} bytes",
            interface.palette,
            palette_entry_bytes(method)
        )),
    }
    line("per joint (upload the bytes of skinblend_gpu::GpuPalette::from_prepared):");
    match method {
        Method::Linear => {
            line(
                "  rows: 3 x vec4 f32, the skin matrix world_from_joint * joint_from_bind as rows.",
            );
        }
        Method::DualQuaternion | Method::CenterOfRotation => {
            line(
                "  real: vec4 f32, the rotation quaternion of the joint's rigid part (Gram-Schmidt",
            );
            line(
                "        split of the skin matrix's 3x3; any sign: the shader aligns signs to the",
            );
            line("        heaviest influence, the pivot);");
            line("  dual: vec4 f32, 1/2 (0, t) real;");
            line("  residual: 3 x vec4 f32, rows of p -> S p + (c - S c), the scale/shear/mirror");
            line("        left after the split, about the joint's bind origin c (identity if rigid);");
            line("  rigid: u32, 1 when the residual is the identity (skipped), else 0; 12 bytes pad.");
            if method == Method::CenterOfRotation {
                line("  linear: 3 x vec4 f32 at byte 96, the full skin matrix as rows (places the");
                line("        vertex's center of rotation as LBS does).");
            }
        }
    }
    match language {
        ShaderLanguage::Hlsl => line("(HLSL: palette register(t0), clip_from_world register(b1), space 0)"),
        ShaderLanguage::Msl => line(&format!(
            "(MSL: palette [[buffer({MSL_PALETTE_BUFFER})]], clip_from_world [[buffer({MSL_CLIP_BUFFER})]], \
             [[buffer({MSL_SIZES_BUFFER})]] a uint: the palette's size in bytes)"
        )),
        ShaderLanguage::Glsl => {
            line(&format!(
                "(GLSL 4.50: palette layout(binding = {GLSL_PALETTE_BINDING}), clip_from_world \
                 layout(binding = {GLSL_CLIP_BINDING}),"
            ));
            line("no set qualifier: descriptor set 0 in Vulkan. One file for both APIs: Vulkan");
            line("(SPIR-V: `glslangValidator -V`, shaderc; Godot's RenderingDevice) and OpenGL 4.5");
            line("(`glslangValidator -G`, or the driver's compiler).)");
        }
        ShaderLanguage::GlslEs => line(
            "(GLSL ES 3.00 has no binding qualifier: bind both blocks by name, uniformBlockBinding.)",
        ),
        _ => {}
    }
    line(&format!(
        "Binding 1, `{}`: uniform mat4 clip_from_world (column-major), applied as is.",
        interface.clip_from_world
    ));
    line("Inputs: location 0 position (vec3, bind pose), 1 normal (vec3), 2 joints (uvec4,");
    line("glTF JOINTS_0), 3 weights (vec4, WEIGHTS_0; divided by their sum, unweighted if ~0)");
    if method == Method::CenterOfRotation {
        line("4 center of rotation (vec4, glTF attribute _SKINBLEND_COR: xyz the center in bind");
        line("space, w = 1 when the vertex has one, 0 when not: then it is skinned by DQS).");
    }
    let names: Vec<String> = interface
        .inputs
        .iter()
        .map(|i| format!("{} {}", i.location, i.name))
        .collect();
    line(&format!("Input names: {}.", names.join(", ")));
    line(&format!(
        "Outputs: clip position; location 0 `{}` skinned position, location 1 `{}` skinned",
        interface.position_output, interface.normal_output
    ));
    line("unit normal (world space).");
    line("Check an engine's port against `skinblend conformance -o DIR` (expected positions and");
    line("normals per method from skinblend's CPU reference).");
    h.push('\n');
    h
}

/// MSL buffer indices of the palette, `clip_from_world` and naga's `_mslBufferSizes` (a `uint`
/// holding the palette's size in bytes): above the low indices engines give vertex buffers.
const MSL_PALETTE_BUFFER: u8 = 16;
const MSL_CLIP_BUFFER: u8 = 17;
const MSL_SIZES_BUFFER: u8 = 18;

/// GLSL 4.50 `layout(binding = N)` of the palette's storage block and of `clip_from_world`'s
/// uniform block: the WGSL bindings (storage and uniform blocks have separate binding spaces in
/// OpenGL; in Vulkan both are descriptors of set 0).
const GLSL_PALETTE_BINDING: u8 = 0;
const GLSL_CLIP_BINDING: u8 = 1;

/// The naga version the translation uses (the one wgpu builds with).
const NAGA_VERSION: &str = "30.0.2";
