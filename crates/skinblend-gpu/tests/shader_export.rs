//! Every language × method translates (naga validates the module before writing it), and
//! where `glslangValidator` is installed (Debian's glslang-tools; required under `CI=true`) the
//! GLSL 4.50, GLSL ES 3.00 and HLSL outputs compile with it. MSL is checked by naga only.

use std::process::Command;

use skinblend::Method;
use skinblend_gpu::{export_shader, ShaderLanguage};

const METHODS: [Method; 3] = [
    Method::Linear,
    Method::DualQuaternion,
    Method::CenterOfRotation,
];

#[test]
fn every_language_and_method_translates_with_a_header() {
    for language in ShaderLanguage::ALL {
        for method in METHODS {
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
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "CI=true but glslangValidator is not installed (glslang-tools)"
        );
        eprintln!("skipping: glslangValidator not installed (apt-get install glslang-tools)");
    }
    found
}

#[test]
fn glsl_glsl_es_and_hlsl_outputs_compile_with_glslang() {
    if !glslang_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("skinblend-glslang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let mut checked = 0;
    for language in [
        ShaderLanguage::Glsl,
        ShaderLanguage::GlslEs,
        ShaderLanguage::Hlsl,
    ] {
        for method in METHODS {
            let shader = export_shader(language, method).unwrap_or_else(|e| panic!("{e}"));
            let path = dir.join(&shader.file_name);
            std::fs::write(&path, &shader.source).expect("write shader");
            let mut command = Command::new("glslangValidator");
            if language == ShaderLanguage::Hlsl {
                // The HLSL front end, vertex stage, the entry point naga wrote; it compiles HLSL
                // only as far as SPIR-V (-V), which is written beside the source.
                let spirv = path.with_extension("spv");
                command.args(["-D", "-V", "-e", &shader.entry_point, "-S", "vert", "-o"]);
                command.arg(spirv);
            } else {
                command.args(["-S", "vert"]);
            }
            let output = command.arg(&path).output().expect("run glslangValidator");
            assert!(
                output.status.success(),
                "{} does not compile:\n{}{}",
                shader.file_name,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            checked += 1;
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    println!("glslangValidator compiled {checked} shaders (GLSL 4.50, GLSL ES 3.00, HLSL)");
}

/// The GLSL ES palette block: the palette's own bytes, zero-padded to the block; too many
/// joints is an error naming both counts.
#[test]
fn uniform_palette_block_is_the_palette_padded() {
    use glam::Mat4;
    use skinblend::{prepare, SkinOptions};
    use skinblend_gpu::shaders::{uniform_palette_bytes, uniform_palette_joints};
    use skinblend_gpu::GpuPalette;
    for method in METHODS {
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
