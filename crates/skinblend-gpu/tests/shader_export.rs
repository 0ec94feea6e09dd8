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
