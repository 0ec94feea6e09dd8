//! `skinblend rigs -o DIR`: the built-in rigs as animated .glb files.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use skinblend::fixtures;
use skinblend_gltf::rigs;

/// Writes every built-in rig to `dir` (created if missing) as `<name>.glb`, each file
/// atomically, and says what it wrote on stderr.
pub fn run(dir: &Path) -> Result<()> {
    let start = Instant::now();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let all = fixtures::all();
    for fixture in &all {
        let path = dir.join(rigs::file_name(fixture));
        rigs::write(fixture, &path)?;
        eprintln!(
            "skinblend: wrote {} ({} vertices, {} joints; animation \"{}\" 0° to {}° over {} s)",
            path.display(),
            fixture.positions.len(),
            fixture.joint_from_bind.len(),
            rigs::ANIMATION_NAME,
            rigs::largest_angle_deg(fixture),
            rigs::time_s_of_angle(rigs::largest_angle_deg(fixture)),
        );
    }
    eprintln!(
        "skinblend: {} rigs in {} in {:.2} s",
        all.len(),
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
