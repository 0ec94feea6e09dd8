//! `skinblend shaders`: the skinning functions and example vertex shaders in an engine's
//! language, and `skinblend conformance`: the vectors to check an engine's port against.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;
use skinblend::Method;
use skinblend_gltf::export::write_atomically;
use skinblend_gpu::shaders::{palette_entry_bytes, ShaderInput, ShaderLanguage};

/// The `--method` value that names every method.
pub const ALL_METHODS: &str = "all";

/// The values `--method` takes: every [`Method::name`], then [`ALL_METHODS`].
pub fn method_values() -> impl Iterator<Item = &'static str> {
    Method::names().into_iter().chain([ALL_METHODS])
}

/// The methods a `--method` value names ([`ALL_METHODS`]: every one).
fn methods(name: &str) -> Result<Vec<Method>> {
    Ok(match name {
        ALL_METHODS => Method::ALL.to_vec(),
        other => vec![other.parse()?],
    })
}

/// Writes one shader per method in `language` into `dir`, and `interface-<language>.json`
/// (per file: entry point, the names a host binds, palette layout).
pub fn run(language: &str, method: &str, dir: &Path) -> Result<()> {
    let language = ShaderLanguage::from_name(language)
        .with_context(|| format!("unknown shading language {language:?}"))?;
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut entries = Vec::new();
    for method in methods(method)? {
        let shader = skinblend_gpu::export_shader(language, method)?;
        let path = dir.join(&shader.file_name);
        write_atomically(&path, shader.source.as_bytes())?;
        println!("{}", path.display());
        // Per role the name the source gives the input (GLSL: the `in` variable three.js and
        // glGetAttribLocation bind; HLSL: the semantic; WGSL, MSL: the struct member).
        let attribute_names: serde_json::Map<String, serde_json::Value> = shader
            .interface
            .inputs
            .iter()
            .map(|i| (i.role.to_string(), json!(i.name)))
            .collect();
        entries.push(json!({
            "file": shader.file_name,
            "language": language.name(),
            "method": method.name(),
            "entry_point": shader.entry_point,
            "palette": shader.interface.palette,
            "palette_entry_bytes": palette_entry_bytes(method),
            "uniform_palette_joints": shader.uniform_palette_joints,
            "clip_from_world": shader.interface.clip_from_world,
            "position_output": shader.interface.position_output,
            "normal_output": shader.interface.normal_output,
            // Every role a method may read, with its location or null where this one does not.
            "attributes": attribute_locations(&shader.interface.inputs),
            "attribute_names": attribute_names,
            "apis": apis(language),
        }));
    }
    let path = dir.join(format!("interface-{}.json", language.name()));
    let text = serde_json::to_vec_pretty(&json!({ "shaders": entries }))?;
    write_atomically(&path, &text)?;
    println!("{}", path.display());
    Ok(())
}

/// The location of every vertex input role any method reads (`null` where this shader has no
/// such input): position, normal, joints, weights, then CoR's center and blended's blend value.
fn attribute_locations(inputs: &[ShaderInput]) -> serde_json::Value {
    let locations: serde_json::Map<String, serde_json::Value> =
        ["position", "normal", "joints", "weights", "center", "blend"]
            .into_iter()
            .map(|role| {
                let location = inputs.iter().find(|i| i.role == role).map(|i| i.location);
                (role.to_string(), json!(location))
            })
            .collect();
    serde_json::Value::Object(locations)
}

/// The graphics APIs a `language` file is written for, with how its resources are bound.
fn apis(language: ShaderLanguage) -> serde_json::Value {
    match language {
        ShaderLanguage::Glsl => json!({
            "vulkan": "SPIR-V from this file (glslangValidator -V, shaderc); palette \
                layout(binding = 0), clip_from_world layout(binding = 1), descriptor set 0",
            "opengl": "OpenGL 4.5 (GL_ARB_shader_storage_buffer_object): palette shader storage \
                binding 0, clip_from_world uniform block binding 1 (set by the layout qualifiers)",
        }),
        ShaderLanguage::GlslEs => json!({
            "webgl2": "uniform blocks bound by name (getUniformBlockIndex, uniformBlockBinding)",
            "opengl_es_3_0": "the same, glGetUniformBlockIndex and glUniformBlockBinding",
        }),
        ShaderLanguage::Hlsl => json!({
            "direct3d": "shader model 5.1: palette register(t0), clip_from_world register(b1), space 0",
        }),
        ShaderLanguage::Msl => json!({
            "metal": "palette [[buffer(16)]], clip_from_world [[buffer(17)]], the palette's byte \
                size [[buffer(18)]]",
        }),
        ShaderLanguage::Wgsl => json!({
            "webgpu": "@group(0) @binding(0) palette, @binding(1) clip_from_world",
        }),
    }
}

/// The `.glb`/`.gltf` files one folder level below `models` (`models/<Name>/<Name>.glb`),
/// sorted.
fn model_files(models: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(models)
        .with_context(|| format!("{}: cannot read the models folder", models.display()))?;
    for entry in entries {
        let folder = entry
            .with_context(|| format!("{}: cannot read", models.display()))?
            .path();
        if !folder.is_dir() {
            continue;
        }
        let inner = std::fs::read_dir(&folder)
            .with_context(|| format!("{}: cannot read", folder.display()))?;
        for file in inner {
            let file = file
                .with_context(|| format!("{}: cannot read", folder.display()))?
                .path();
            let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
            if extension.eq_ignore_ascii_case("glb") || extension.eq_ignore_ascii_case("gltf") {
                files.push(file);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Writes the conformance vectors into `dir`: the built-in rigs, the hard cases and, with
/// `models`, every glTF file one folder below it.
pub fn conformance(dir: &Path, models: Option<&Path>) -> Result<()> {
    let files = match models {
        Some(m) => model_files(m)?,
        None => Vec::new(),
    };
    let summary = skinblend_gltf::conformance::write(dir, &files, &mut |name| {
        eprintln!("  {name}");
    })?;
    println!(
        "{} cases, {} frames, {} vertices (each for {}) in {}; manifest: {}",
        summary.cases.len(),
        summary.frames,
        summary.vertices,
        Method::names().join(", "),
        dir.display(),
        dir.join("manifest.json").display()
    );
    Ok(())
}
