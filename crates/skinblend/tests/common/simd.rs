//! The SIMD kernels against the scalar reference: one call skinned both ways (and from a mesh
//! handle's vertex blocks), compared within [`SIMD_VS_SCALAR`], for the `simd_*` tests.

use glam::{Vec3, Vec4};
use skinblend::{
    prepare, skin_into, BlendValues, Diagnostics, Influences, Method, PreparedPalette, RunOptions,
    SkinInput, SkinMesh, SkinOptions, SkinOutputs,
};

use super::{assert_points_close, mixed_blend_values, RandomRig};

/// SIMD vs scalar: fused multiply-adds and another summation order, over up to 8 influences and
/// a normalization, on values of order one: a few ulps (1.2e-7 each), with headroom for the
/// cofactor products of the LBS normal matrix.
pub const SIMD_VS_SCALAR: f64 = 1e-5;

pub struct Result3 {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub tangents: Vec<Vec4>,
    pub diagnostics: Diagnostics,
}

pub fn run(
    input: &SkinInput<'_>,
    prepared: &PreparedPalette,
    run_options: RunOptions,
    normals: bool,
    tangents: bool,
) -> Result3 {
    let n = input.vertex_count();
    let mut out = Result3 {
        positions: vec![Vec3::ZERO; n],
        normals: vec![Vec3::ZERO; n],
        tangents: vec![Vec4::ZERO; n],
        diagnostics: Diagnostics::default(),
    };
    out.diagnostics = skin_into(
        input,
        prepared,
        SkinOutputs {
            positions: &mut out.positions,
            normals: normals.then_some(&mut out.normals[..]),
            tangents: tangents.then_some(&mut out.tangents[..]),
        },
        run_options,
    )
    .unwrap();
    out
}

/// Every output bit, positions, normals and tangents.
pub fn bits(r: &Result3) -> Vec<u32> {
    r.positions
        .iter()
        .chain(&r.normals)
        .flat_map(|v| v.to_array())
        .chain(r.tangents.iter().flat_map(|t| t.to_array()))
        .map(f32::to_bits)
        .collect()
}

/// Skins with the SIMD and the scalar kernel (palettes made by `make`) and compares: every
/// method, CoR where the input has centers of rotation, blended with the input's blend values
/// or else [`mixed_blend_values`] (blocks all 0, all 1, between, and mixed).
pub fn compare(what: &str, input: &SkinInput<'_>, make: impl Fn(&SkinOptions) -> PreparedPalette) {
    let values = mixed_blend_values(input.vertex_count());
    let input = &match input.blend_values() {
        Some(_) => *input,
        None => input
            .with_blend_values(BlendValues::PerVertex(&values))
            .unwrap(),
    };
    // The same input as a mesh handle reads the mesh's private blocks where a kernel can.
    let mesh = SkinMesh::from_input(input);
    let _ = mesh.input(); // the blocks are built on the second request
    let with_blocks = mesh.input();
    let methods = Method::ALL
        .into_iter()
        .filter(|m| !m.needs_rotation_centers() || input.rotation_centers().is_some());
    for method in methods {
        for (normals, tangents) in [(false, false), (true, false), (true, true), (false, true)] {
            if (normals && input.normals().is_none()) || (tangents && input.tangents().is_none()) {
                continue;
            }
            let options = |simd| SkinOptions {
                method,
                simd,
                parallel: false,
                ..SkinOptions::default()
            };
            let (simd_options, scalar) = (options(true), options(false));
            let simd = run(
                input,
                &make(&simd_options),
                simd_options.run_options(),
                normals,
                tangents,
            );
            // The mesh handle's vertex blocks change where the kernels read, never a bit.
            let from_blocks = run(
                &with_blocks,
                &make(&simd_options),
                simd_options.run_options(),
                normals,
                tangents,
            );
            let scalar = run(
                input,
                &make(&scalar),
                scalar.run_options(),
                normals,
                tangents,
            );
            let what = format!("{what} {} n={normals} t={tangents}", method.name());
            assert!(
                bits(&from_blocks) == bits(&simd),
                "{what}: other bits from the vertex blocks"
            );
            assert_eq!(from_blocks.diagnostics, simd.diagnostics, "{what}: blocks");
            assert_points_close(&what, &scalar.positions, &simd.positions, SIMD_VS_SCALAR);
            assert_eq!(scalar.diagnostics, simd.diagnostics, "{what}: diagnostics");
            if normals {
                assert_points_close(&what, &scalar.normals, &simd.normals, SIMD_VS_SCALAR);
            }
            if tangents {
                let xyz = |t: &[Vec4]| t.iter().map(|t| t.truncate()).collect::<Vec<_>>();
                assert_points_close(
                    &what,
                    &xyz(&scalar.tangents),
                    &xyz(&simd.tangents),
                    SIMD_VS_SCALAR,
                );
                let w = |t: &[Vec4]| t.iter().map(|t| t.w).collect::<Vec<_>>();
                assert_eq!(w(&scalar.tangents), w(&simd.tangents), "{what}: handedness");
            }
        }
    }
}

/// [`compare`] on `rig` (four influences, eight joints) with its weights replaced by `weights`,
/// with normals, tangents and the positions as centers of rotation.
pub fn compare_with_weights(what: &str, rig: &RandomRig, weights: Vec<f32>) {
    let influences = Influences::new(4, rig.influences.joints().to_vec(), weights, 8).unwrap();
    compare_on_rig(what, rig, &influences, None);
}

/// [`compare`] on `rig`'s vertices with `influences` instead of its own, with normals, tangents
/// and the positions as centers of rotation, its palette prepared with `joint_centers`.
pub fn compare_on_rig(
    what: &str,
    rig: &RandomRig,
    influences: &Influences,
    joint_centers: Option<&[Vec3]>,
) {
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        influences,
    )
    .and_then(|input| input.with_rotation_centers(&rig.positions))
    .unwrap();
    compare(what, &input, |o| {
        prepare(&rig.palette, joint_centers, o).unwrap()
    });
}
