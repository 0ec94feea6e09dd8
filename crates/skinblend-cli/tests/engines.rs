//! `skinblend shaders` and `skinblend conformance`, and the WebGL2 page that checks the GLSL ES
//! shaders against the vectors in headless Chromium (`web/conformance/run.mjs`).
//!
//! The sample models (`../shared/models`), node with `tools/node_modules/playwright-core`
//! (`npm ci --prefix tools`) and Chromium are used when present; a test that lacks one skips
//! with a message, except under `CI=true`, where it fails (`.ci/run` installs them).

mod support;

use skinblend::Method;
use skinblend_testkit::{models_dir_if_present, PageDriver, ScratchDir};
use support::skinblend;

use std::path::Path;

fn shaders_writes_every_language_and_method() {
    let dir = ScratchDir::new("shaders");
    for lang in ["wgsl", "glsl", "glsl-es", "hlsl", "msl"] {
        let out = skinblend(&["shaders", "--lang", lang, "-o", dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{lang}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let interface: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("interface-{lang}.json"))).expect("interface"),
        )
        .expect("json");
        let shaders = interface["shaders"].as_array().expect("shaders");
        assert_eq!(shaders.len(), Method::ALL.len(), "{lang}");
        let methods: Vec<&str> = shaders
            .iter()
            .map(|s| s["method"].as_str().unwrap())
            .collect();
        assert_eq!(methods, Method::names(), "{lang}");
        for shader in shaders {
            let text = std::fs::read_to_string(dir.join(shader["file"].as_str().unwrap()))
                .expect("shader file");
            assert!(text.contains("skinblend 0."), "{lang}: no header");
            // Every attribute is named as the source declares it (three.js binds by name).
            let names = shader["attribute_names"]
                .as_object()
                .expect("attribute_names");
            let locations = shader["attributes"].as_object().expect("attributes");
            for (role, location) in locations {
                let Some(location) = location.as_u64() else {
                    assert!(!names.contains_key(role), "{lang}: {role} named but absent");
                    continue;
                };
                let name = names[role]
                    .as_str()
                    .unwrap_or_else(|| panic!("{lang}: {role}"));
                assert!(text.contains(name), "{lang}: {name} not in the source");
                assert!(
                    text.contains(&format!("{location} {name}")),
                    "{lang}: the header does not give {name} location {location}"
                );
            }
            assert!(shader["apis"].is_object(), "{lang}: no apis");
        }
    }
    for method in ["dq", "blended"] {
        let out = skinblend(&[
            "shaders",
            "--lang",
            "glsl-es",
            "--method",
            method,
            "-o",
            dir.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Blended's own input, the blend value, is attribute 4, named and documented.
    let interface: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("interface-glsl-es.json")).expect("interface"),
    )
    .expect("json");
    let blended = &interface["shaders"][0];
    assert_eq!(blended["method"], "blended");
    assert_eq!(blended["attributes"]["blend"], 4);
    assert!(blended["attributes"]["center"].is_null());
    let text = std::fs::read_to_string(dir.join(blended["file"].as_str().unwrap())).expect("file");
    assert!(
        text.contains("_SKINBLEND_DQ_BLEND"),
        "the header names the attribute"
    );
    let out = skinblend(&["shaders", "--lang", "cobol", "-o", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "bad language is bad usage");
}

/// Reads a little-endian f32 file.
fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .expect("vector file")
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn conformance_writes_the_cases_the_manifest_names() {
    let dir = ScratchDir::new("conformance");
    let mut args = vec!["conformance", "-o", dir.to_str().unwrap()];
    let models = models_dir_if_present();
    let models_arg = models.as_ref().map(|m| m.to_string_lossy().into_owned());
    if let Some(m) = &models_arg {
        args.extend(["--models", m]);
    }
    let out = skinblend(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("json");
    assert_eq!(manifest["format"], "skinblend-conformance");
    let cases = manifest["cases"].as_array().expect("cases");
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for required in [
        "twist_coarse",
        "bend_fine",
        "shear_cap",
        "twist_coarse_opposite_signs",
        "bend_coarse_scaled_joint",
        "bend_coarse_mirrored_joint",
        "twist_coarse_weights_not_summing_to_1",
    ] {
        assert!(
            names.contains(&required),
            "missing case {required}: {names:?}"
        );
    }
    if models.is_some() {
        for model in [
            "SimpleSkin",
            "RiggedSimple",
            "RiggedFigure",
            "CesiumMan",
            "Fox",
        ] {
            assert!(
                names.iter().any(|n| n.starts_with(model)),
                "no {model} case: {names:?}"
            );
        }
    }
    assert!(dir.join("rigs/twist_coarse.glb").is_file());
    // Every file the manifest names has the size its counts say.
    for case in cases {
        let n = case["vertex_count"].as_u64().unwrap() as usize;
        let j = case["joint_count"].as_u64().unwrap() as usize;
        let v = &case["vertices"];
        assert_eq!(
            read_f32(&dir.join(v["positions"].as_str().unwrap())).len(),
            3 * n
        );
        assert_eq!(
            read_f32(&dir.join(v["weights"].as_str().unwrap())).len(),
            4 * n
        );
        let blend = read_f32(&dir.join(v["blend_values"].as_str().unwrap()));
        assert_eq!(blend.len(), n);
        assert!(blend.iter().all(|b| (0.0..=1.0).contains(b)));
        for frame in case["frames"].as_array().unwrap() {
            assert_eq!(
                read_f32(&dir.join(frame["palette"].as_str().unwrap())).len(),
                16 * j
            );
            assert_eq!(
                read_f32(&dir.join(frame["dual_quats"].as_str().unwrap())).len(),
                8 * j
            );
            for method in Method::names() {
                let p =
                    read_f32(&dir.join(frame["expected"][method]["positions"].as_str().unwrap()));
                assert_eq!(p.len(), 3 * n);
                assert!(p.iter().all(|x| x.is_finite()), "{} {method}", case["name"]);
            }
        }
    }
    // Exactly 180°: the twist's last frame is the evidence table's 180°, where LBS collapses the
    // ring and DQS keeps it (the expected outputs differ by far more than the tolerance).
    let twist = cases.iter().find(|c| c["name"] == "twist_coarse").unwrap();
    let last = twist["frames"].as_array().unwrap().last().unwrap();
    assert!(last["label"].as_str().unwrap().starts_with("180°"));
    let lbs = read_f32(&dir.join(last["expected"]["linear"]["positions"].as_str().unwrap()));
    let dqs = read_f32(&dir.join(last["expected"]["dq"]["positions"].as_str().unwrap()));
    let apart = lbs
        .iter()
        .zip(&dqs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(apart > 0.1, "LBS and DQS at 180° differ by only {apart}");
}

/// Every vector through each method's GLSL ES 3.00 shader in headless Chromium (WebGL2 on
/// SwiftShader), within the manifest's tolerance; prints the count and the worst errors.
fn webgl2_page_agrees_with_every_vector() {
    let Some(driver) = PageDriver::or_skip("the WebGL2 conformance check") else {
        return;
    };
    let vectors = ScratchDir::new("webgl-vectors");
    let shaders = ScratchDir::new("webgl-shaders");
    let mut args = vec!["conformance", "-o", vectors.to_str().unwrap()];
    let models = models_dir_if_present().map(|m| m.to_string_lossy().into_owned());
    if let Some(m) = &models {
        args.extend(["--models", m]);
    }
    assert!(skinblend(&args).status.success());
    assert!(skinblend(&[
        "shaders",
        "--lang",
        "glsl-es",
        "-o",
        shaders.to_str().unwrap()
    ])
    .status
    .success());
    let out = driver
        .node("web/conformance/run.mjs")
        .arg(vectors.path())
        .arg(shaders.path())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the WebGL2 check failed:\n{stdout}");
    assert!(stdout.contains("PASS: checked"), "{stdout}");
    // The mirrored joint's zero normals (rules.undefined_normals) are left out and counted.
    assert!(
        stdout.contains("dq: ") && !stdout.contains(" 0 undefined normals"),
        "{stdout}"
    );
    // Every method's shader ran over the vectors.
    for method in Method::names() {
        assert!(
            stdout.contains(&format!("\n{method}: ")),
            "{method}: {stdout}"
        );
    }
}

skinblend_testkit::test_main!(
    shaders_writes_every_language_and_method,
    conformance_writes_the_cases_the_manifest_names,
    webgl2_page_agrees_with_every_vector,
);
