//! Every language × method translates (naga validates the module before writing it), and
//! where `glslangValidator` is installed (Debian's glslang-tools; required under `CI=true`) the
//! GLSL 4.50 outputs compile for Vulkan (`-V`) and OpenGL (`-G` and plain), the GLSL ES 3.00 and
//! HLSL outputs compile too. MSL is checked by naga only.

use std::process::Command;

use skinblend::Method;
use skinblend_gpu::{export_shader, ShaderLanguage};

fn every_language_and_method_translates_with_a_header() {
    for language in ShaderLanguage::ALL {
        for method in Method::ALL {
            let shader = export_shader(language, method).unwrap_or_else(|e| panic!("{e}"));
            let head: String = shader
                .source
                .lines()
                .take(12)
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                head.contains("skinblend "),
                "{}: no header:\n{head}",
                shader.file_name
            );
            assert!(shader.source.contains("palette"), "{}", shader.file_name);
            if matches!(language, ShaderLanguage::Glsl | ShaderLanguage::GlslEs) {
                assert!(
                    shader.source.starts_with("#version"),
                    "{}",
                    shader.file_name
                );
            }
            // naga fills a resource without an explicit slot with a placeholder that no Metal
            // compiler accepts; every MSL buffer must have its [[buffer(n)]].
            assert!(
                !shader.source.contains("fake"),
                "{}: unbound resource",
                shader.file_name
            );
            // The method's own vertex input is documented in the header, with its glTF name.
            let attribute = match method {
                Method::CenterOfRotation => Some("_SKINBLEND_COR"),
                Method::Blended => Some("_SKINBLEND_DQ_BLEND"),
                Method::Linear | Method::DualQuaternion => None,
            };
            if let Some(attribute) = attribute {
                let header_end = shader.source.find("\n\n").unwrap_or(shader.source.len());
                assert!(
                    shader.source[..header_end].contains(attribute),
                    "{}: the header does not document {attribute}",
                    shader.file_name
                );
            }
            println!("{} ({} bytes)", shader.file_name, shader.source.len());
        }
    }
}

/// Whether `glslangValidator` runs here; under `CI=true` its absence fails the test.
fn glslang_available() -> bool {
    let found = Command::new("glslangValidator")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skinblend_testkit::skip("needs glslangValidator (apt-get install glslang-tools)");
    }
    found
}

/// How `glslangValidator` compiles one exported file: its arguments before the file and what the
/// compile stands for.
fn glslang_compiles(
    shader: &skinblend_gpu::ExportedShader,
    spirv: &std::path::Path,
) -> Vec<(Vec<String>, &'static str)> {
    let out = |flag: &str| {
        vec![
            flag.to_string(),
            "-S".into(),
            "vert".into(),
            "-o".into(),
            spirv.display().to_string(),
        ]
    };
    match shader.language {
        // One GLSL 4.50 file for both APIs: Vulkan GLSL (SPIR-V for Vulkan, as Godot's
        // RenderingDevice, shaderc and every Vulkan engine compile it; it requires
        // `layout(binding = N)` on every block) and OpenGL (SPIR-V for OpenGL, then the plain
        // OpenGL GLSL front end).
        ShaderLanguage::Glsl => vec![
            (out("-V"), "Vulkan SPIR-V"),
            (out("-G"), "OpenGL SPIR-V"),
            (vec!["-S".into(), "vert".into()], "OpenGL GLSL"),
        ],
        ShaderLanguage::GlslEs => vec![(vec!["-S".into(), "vert".into()], "OpenGL ES GLSL")],
        // The HLSL front end, vertex stage, the entry point naga wrote; it compiles HLSL only
        // as far as SPIR-V (-V).
        ShaderLanguage::Hlsl => {
            let mut args = vec!["-D".to_string(), "-e".into(), shader.entry_point.clone()];
            args.extend(out("-V"));
            vec![(args, "HLSL to SPIR-V")]
        }
        ShaderLanguage::Wgsl | ShaderLanguage::Msl => Vec::new(),
    }
}

fn glsl_glsl_es_and_hlsl_outputs_compile_with_glslang() {
    if !glslang_available() {
        return;
    }
    let dir = skinblend_testkit::ScratchDir::new("glslang");
    let mut checked = 0;
    let mut failures = Vec::new();
    for language in [
        ShaderLanguage::Glsl,
        ShaderLanguage::GlslEs,
        ShaderLanguage::Hlsl,
    ] {
        for method in Method::ALL {
            let shader = export_shader(language, method).unwrap_or_else(|e| panic!("{e}"));
            let path = dir.join(&shader.file_name);
            std::fs::write(&path, &shader.source).expect("write shader");
            let spirv = path.with_extension("spv");
            for (args, target) in glslang_compiles(&shader, &spirv) {
                let output = Command::new("glslangValidator")
                    .args(&args)
                    .arg(&path)
                    .output()
                    .expect("run glslangValidator");
                if output.status.success() {
                    checked += 1;
                } else {
                    failures.push(format!(
                        "{} does not compile for {target} (glslangValidator {}):\n{}{}",
                        shader.file_name,
                        args.join(" "),
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 4 methods × (GLSL 4.50 three ways, GLSL ES once, HLSL once).
    assert_eq!(checked, 5 * Method::ALL.len());
    assert_eq!(checked, 20);
    println!(
        "glslangValidator compiled {checked} times: GLSL 4.50 for Vulkan (-V), OpenGL SPIR-V (-G) \
         and OpenGL GLSL; GLSL ES 3.00; HLSL to SPIR-V"
    );
}

/// The GLSL 4.50 blocks carry the bindings its header names; GLSL ES 3.00 (which has no
/// binding qualifier) carries none.
fn glsl_450_blocks_carry_their_bindings() {
    for method in Method::ALL {
        let glsl = export_shader(ShaderLanguage::Glsl, method).expect("glsl");
        let palette = format!("binding = 0) readonly buffer {} ", glsl.interface.palette);
        let clip = format!(
            "layout(std140, binding = 1) uniform {} ",
            glsl.interface.clip_from_world
        );
        assert!(
            glsl.source.contains(&palette),
            "{}: no `{palette}`",
            glsl.file_name
        );
        assert!(
            glsl.source.contains(&clip),
            "{}: no `{clip}`",
            glsl.file_name
        );
        assert!(
            glsl.source.contains("descriptor set 0 in Vulkan"),
            "{}",
            glsl.file_name
        );
        let es = export_shader(ShaderLanguage::GlslEs, method).expect("glsl es");
        assert!(!es.source.contains("binding ="), "{}", es.file_name);
    }
}

/// Every vertex input is named in the interface, in location order, by the name the source
/// declares it with (three.js binds GLSL attributes by name), and the header lists them.
fn interface_names_every_vertex_input_as_the_source_does() {
    for language in ShaderLanguage::ALL {
        for method in Method::ALL {
            let shader = export_shader(language, method).expect("export");
            let inputs = &shader.interface.inputs;
            let roles: Vec<&str> = inputs.iter().map(|i| i.role).collect();
            let mut expected = vec!["position", "normal", "joints", "weights"];
            match method {
                Method::CenterOfRotation => expected.push("center"),
                Method::Blended => expected.push("blend"),
                Method::Linear | Method::DualQuaternion => {}
            }
            assert_eq!(roles, expected, "{}", shader.file_name);
            // Location 4: CoR's center (vec4), blended's blend value (float).
            let extra_type = if method == Method::Blended {
                "float"
            } else {
                "vec4"
            };
            for (location, input) in inputs.iter().enumerate() {
                assert_eq!(input.location as usize, location);
                let declared = match language {
                    ShaderLanguage::Glsl | ShaderLanguage::GlslEs => format!(
                        "layout(location = {location}) in {} {};",
                        ["vec3", "vec3", "uvec4", "vec4", extra_type][location],
                        input.name
                    ),
                    ShaderLanguage::Hlsl => format!(" : {};", input.name),
                    ShaderLanguage::Wgsl => format!("@location({location}) {}:", input.name),
                    ShaderLanguage::Msl => format!(" {} [[attribute({location})]];", input.name),
                };
                assert!(
                    shader.source.contains(&declared),
                    "{}: no `{declared}`",
                    shader.file_name
                );
                assert!(
                    shader
                        .source
                        .contains(&format!("{location} {}", input.name)),
                    "{}: header does not name input {location}",
                    shader.file_name
                );
            }
        }
    }
}

/// The GLSL ES palette block: the palette's own bytes, zero-padded to the block; too many
/// joints is an error naming both counts.
fn uniform_palette_block_is_the_palette_padded() {
    use glam::Mat4;
    use skinblend::{prepare, SkinOptions};
    use skinblend_gpu::shaders::{uniform_palette_bytes, uniform_palette_joints};
    use skinblend_gpu::GpuPalette;
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let palette = vec![Mat4::from_rotation_y(0.5); 3];
        let centers = vec![glam::Vec3::ZERO; 3];
        let gpu = GpuPalette::from_prepared(
            &prepare(&palette, Some(&centers), &options).expect("prepare"),
            None,
        )
        .expect("gpu palette");
        let block = uniform_palette_bytes(&gpu).expect("block");
        assert!(block.len() <= 16384, "{method:?}: {} bytes", block.len());
        assert_eq!(&block[..gpu.bytes().len()], gpu.bytes());
        assert!(block[gpu.bytes().len()..].iter().all(|&b| b == 0));
        let too_many = vec![Mat4::IDENTITY; uniform_palette_joints(method) + 1];
        let too_many_centers = vec![glam::Vec3::ZERO; too_many.len()];
        let gpu = GpuPalette::from_prepared(
            &prepare(&too_many, Some(&too_many_centers), &options).expect("prepare"),
            None,
        )
        .expect("gpu palette");
        let error = uniform_palette_bytes(&gpu)
            .expect_err("too many joints")
            .to_string();
        assert!(error.contains("holds"), "{error}");
    }
}

skinblend_testkit::test_main!(
    every_language_and_method_translates_with_a_header,
    glsl_glsl_es_and_hlsl_outputs_compile_with_glslang,
    glsl_450_blocks_carry_their_bindings,
    interface_names_every_vertex_input_as_the_source_does,
    uniform_palette_block_is_the_palette_padded,
);
