//! Conformance vectors: inputs and expected outputs of LBS, DQS and CoR that another engine's
//! skinning (a shader port, a C++ or C# implementation) can be checked against.
//!
//! [`write()`] fills a folder with:
//! - `manifest.json`: the format, the conventions, the tolerance with its reason, the rules a
//!   port must follow (`rules`: weights and the unweighted passthrough, LBS, the DQS pivot, sign
//!   alignment, normalization, residual and its order, CoR, the normal matrix with its singular
//!   rule and threshold, normalization's fallback, which normals are undefined), and one entry
//!   per case (its name, what it tests, its source file, counts, and the relative path of every
//!   array file, per frame and per method, with per method the vertices whose expected normal is
//!   undefined, `undefined_normals`: see [`UNDEFINED_NORMAL_RELATIVE`]);
//! - `rigs/<name>.glb`: the built-in rigs as animated glTF (see [`crate::rigs`]);
//! - one folder per case: the vertices (`positions.f32` n×3, `normals.f32` n×3, `joints.u32`
//!   n×4, `weights.f32` n×4, `centers.f32` n×4: the center of rotation, w = 1 when the vertex
//!   has one, the glTF attribute `_SKINBLEND_COR`), the joints' bind origins
//!   (`joint_centers.f32` j×3), and per frame `frameN/`: `palette.f32` (j×16, the skin matrices
//!   `world_from_joint · joint_from_bind`, column-major), the prepared DQ form (`dual_quats.f32`
//!   j×8: real xyzw then dual xyzw; `residuals.f32` j×12: the residual's three rows;
//!   `rigid.u32` j: 1 when the residual is skipped) and the expected `<method>_positions.f32` and
//!   `<method>_normals.f32` (n×3) for `linear`, `dq` and `cor`.
//!
//! Every array file is raw little-endian 32-bit values, row after row, no header: a test in any
//! language reads it in one call (JavaScript: `new Float32Array(await (await
//! fetch(url)).arrayBuffer())`). Expected outputs come from the CPU scalar reference kernel
//! (`SkinOptions { simd: false, .. }`), weights divided by their sum, the joints' bind origins
//! as the DQS residual centers.
//!
//! The cases: every built-in rig at each angle of the evidence table (the 180° twist exactly
//! +180°, the bends, shear-and-cap with its sheared and mirrored joints), the cases engines get
//! wrong (quaternions stored with opposite signs, a scaled joint, a mirrored joint, weights that
//! do not sum to 1), and each sample model given at three times of its first animation.

mod cases;

use std::path::{Path, PathBuf};

use glam::{Affine3A, Vec3};
use serde_json::{json, Value};
use skinblend::fixtures;
use skinblend::{
    evidence, prepare, skin_into, DualQuat, Influences, Method, PreparedPalette, SkinInput,
    SkinOptions, SkinOutputs,
};

use crate::error::{GltfError, Result};
use crate::export::write_atomically;
use crate::rigs;

use cases::{fixture_case, hard_cases, model_cases, Case, Frame};

/// The manifest's `format` value.
pub const FORMAT: &str = "skinblend-conformance";
/// The manifest's `version`: raised when a file or key changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// Position tolerance, relative to the case's `scale` (its largest absolute expected
/// coordinate, at least 1): a port passes where `|p − expected| ≤ POSITION_TOLERANCE · scale`.
/// The reference and a GPU both compute in f32; a few dozen operations per vertex with other
/// operation orders and fused multiply-adds differ by tens of ulps (skinblend's own WGSL kernel
/// differs from the CPU by at most 1.3e-6 relative on lavapipe); 1e-5 leaves room for that, and a
/// real error (a wrong sign, a missing residual, unnormalized weights) is 1e-2 or more.
pub const POSITION_TOLERANCE: f32 = 1e-5;

/// Normal tolerance (unit vectors, absolute per component): normals go through a cofactor
/// matrix and a normalization, which loses a few more digits than positions where the blended
/// 3x3 is nearly singular; a wrong normal transform (no inverse transpose, no sign of the
/// determinant) is off by 1e-1 or more.
pub const NORMAL_TOLERANCE: f32 = 1e-4;

/// A vertex's expected normal is undefined where the exact normal direction before
/// normalization, `|C n|` (C the cofactor matrix of the blended 3x3: LBS the blended skin
/// matrices, DQS and CoR the blended residual; the rotation after it keeps lengths), is at most
/// this fraction of `largest² · |n|` (`largest` the blended 3x3's largest column length; the
/// cofactor scales as its square). The exact value is then zero (a mirrored joint's 50/50 ring
/// under DQS, the collapsed 180° ring under LBS) and the f32 result is rounding noise
/// normalized: any direction, or the input normal where f32 gives exactly zero. f32 inputs
/// carry about 1e-7 relative error, which moves a direction by `1e-7 / ratio`: at this ratio by
/// 1e-4, the normal tolerance, so every vertex above it is checkable. The written cases have
/// ratios either below 1e-6 or above 1e-2 (a unit test checks it).
pub const UNDEFINED_NORMAL_RELATIVE: f64 = 1e-3;

/// The normal matrix's singular threshold the manifest states: a 3x3 is singular when
/// `|det| ≤ SINGULAR_RELATIVE · largest³`. The value of skinblend's CPU reference and of
/// `SKIN_SINGULAR_RELATIVE` in its WGSL; the test below reproduces the expected normals with it.
pub const SINGULAR_RELATIVE: f32 = 1e-6;

/// Per vertex the ratio `|C n| / (largest² · |n|)` of [`UNDEFINED_NORMAL_RELATIVE`], in f64
/// from the case's f32 inputs (the prepared residuals for DQS and CoR); infinite where no
/// matrix touches the normal (unweighted vertex, all influences rigid under DQS and CoR, zero
/// input normal).
fn normal_ratios(
    case: &Case,
    frame: &Frame,
    prepared: &PreparedPalette,
    method: Method,
) -> Vec<f64> {
    use glam::{DMat3, DVec3};
    let to_d = |m: &glam::Mat3A| {
        DMat3::from_cols(
            m.x_axis.as_dvec3(),
            m.y_axis.as_dvec3(),
            m.z_axis.as_dvec3(),
        )
    };
    (0..case.positions.len())
        .map(|v| {
            let n = case.normals[v].as_dvec3();
            let Some((joints, weights)) = case.influences.vertex(v) else {
                return f64::INFINITY;
            };
            let sum: f32 = weights.iter().sum();
            if sum < f32::MIN_POSITIVE || n.length() == 0.0 {
                return f64::INFINITY;
            }
            let mut blended = DMat3::ZERO;
            let mut any = false;
            for (&joint, &weight) in joints.iter().zip(weights) {
                if weight <= 0.0 {
                    continue;
                }
                let j = usize::from(joint);
                let matrix = match method {
                    Method::Linear => glam::Mat3A::from_mat4(frame.palette[j]),
                    _ => {
                        any |= !prepared.rigid_flags()[j];
                        prepared.residuals()[j].matrix3
                    }
                };
                blended += to_d(&matrix) * (f64::from(weight) / f64::from(sum));
            }
            if method != Method::Linear && !any {
                return f64::INFINITY;
            }
            let (c0, c1, c2) = (blended.x_axis, blended.y_axis, blended.z_axis);
            let cofactor = DMat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
            let largest = c0.length().max(c1.length()).max(c2.length());
            let direction: DVec3 = cofactor * n;
            direction.length() / (largest * largest * n.length())
        })
        .collect()
}

/// What [`write()`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Case names, in the manifest's order.
    pub cases: Vec<String>,
    /// Frames over all cases.
    pub frames: usize,
    /// Vertices over all cases and frames (each checked for every method).
    pub vertices: usize,
}

fn reference_options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        simd: false,
        parallel: false,
        ..SkinOptions::default()
    }
}

fn io_error(path: &Path, source: std::io::Error) -> GltfError {
    GltfError::Io {
        path: path.to_owned(),
        source,
    }
}

fn skin_error(case: &str, source: skinblend::SkinError) -> GltfError {
    GltfError::Skin {
        path: format!("conformance case {case}"),
        source,
    }
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn u32_bytes(values: impl IntoIterator<Item = u32>) -> Vec<u8> {
    values.into_iter().flat_map(u32::to_le_bytes).collect()
}

fn rows(map: &Affine3A) -> [f32; 12] {
    let (x, y, z, t) = (
        map.matrix3.x_axis,
        map.matrix3.y_axis,
        map.matrix3.z_axis,
        map.translation,
    );
    [x.x, y.x, z.x, t.x, x.y, y.y, z.y, t.y, x.z, y.z, z.z, t.z]
}

/// The four influence slots of every vertex (unused slots: joint 0, weight 0).
fn slots4(influences: &Influences, case: &str) -> Result<(Vec<u32>, Vec<f32>)> {
    let k = influences.influences_per_vertex();
    if k > 4 {
        return Err(GltfError::invalid(
            format!("conformance case {case}"),
            format!("{k} influences per vertex; the vectors carry 4 (JOINTS_0/WEIGHTS_0)"),
        ));
    }
    let n = influences.vertex_count();
    let mut joints = vec![0u32; n * 4];
    let mut weights = vec![0f32; n * 4];
    for v in 0..n {
        if let Some((j, w)) = influences.vertex(v) {
            for slot in 0..k {
                joints[v * 4 + slot] = u32::from(j[slot]);
                weights[v * 4 + slot] = w[slot];
            }
        }
    }
    Ok((joints, weights))
}

/// Expected positions and normals of `method` for one frame.
fn expected(case: &Case, frame: &Frame, method: Method) -> Result<(Vec<Vec3>, Vec<Vec3>)> {
    let input = SkinInput::new(&case.positions, Some(&case.normals), None, &case.influences)
        .and_then(|i| i.with_rotation_centers(&case.centers))
        .map_err(|e| skin_error(&case.name, e))?;
    let prepared = prepare(
        &frame.palette,
        Some(&case.joint_centers),
        &reference_options(method),
    )
    .map_err(|e| skin_error(&case.name, e))?;
    let n = case.positions.len();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = vec![Vec3::ZERO; n];
    skin_into(
        &input,
        &prepared,
        SkinOutputs {
            positions: &mut positions,
            normals: Some(&mut normals),
            tangents: None,
        },
        reference_options(method).run_options(),
    )
    .map_err(|e| skin_error(&case.name, e))?;
    Ok((positions, normals))
}

/// The prepared DQ form of a frame (the core's split), with `negate_joints` stored negated.
fn prepared_dual_quats(case: &Case, frame: &Frame) -> Result<PreparedPalette> {
    prepare(
        &frame.palette,
        Some(&case.joint_centers),
        &reference_options(Method::DualQuaternion),
    )
    .map_err(|e| skin_error(&case.name, e))
}

fn negated(dq: &DualQuat) -> DualQuat {
    DualQuat {
        real: -dq.real,
        dual: -dq.dual,
    }
}

/// `value` as the shortest decimal that reads back as it (1e-5, not 9.999999747378752e-6).
fn shortest(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

struct Writer<'a> {
    root: &'a Path,
}

impl Writer<'_> {
    /// Writes `bytes` to `relative` under the root (atomically) and returns the relative path.
    fn file(&self, relative: &str, bytes: &[u8]) -> Result<String> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
        }
        write_atomically(&path, bytes)?;
        Ok(relative.to_string())
    }
}

fn write_case(writer: &Writer<'_>, case: &Case) -> Result<(Value, usize)> {
    let n = case.positions.len();
    let dir = &case.name;
    let (joints, weights) = slots4(&case.influences, &case.name)?;
    let centers: Vec<f32> = case
        .centers
        .iter()
        .flat_map(|c| {
            if c.is_finite() {
                [c.x, c.y, c.z, 1.0]
            } else {
                [0.0; 4]
            }
        })
        .collect();
    let vertex_files = json!({
        "positions": writer.file(&format!("{dir}/positions.f32"), &f32_bytes(case.positions.iter().flat_map(|p| p.to_array())))?,
        "normals": writer.file(&format!("{dir}/normals.f32"), &f32_bytes(case.normals.iter().flat_map(|p| p.to_array())))?,
        "joints": writer.file(&format!("{dir}/joints.u32"), &u32_bytes(joints))?,
        "weights": writer.file(&format!("{dir}/weights.f32"), &f32_bytes(weights))?,
        "centers": writer.file(&format!("{dir}/centers.f32"), &f32_bytes(centers))?,
        "joint_centers": writer.file(&format!("{dir}/joint_centers.f32"), &f32_bytes(case.joint_centers.iter().flat_map(|p| p.to_array())))?,
    });
    let mut frames = Vec::new();
    let mut scale = 1.0f32;
    for (f, frame) in case.frames.iter().enumerate() {
        let fdir = format!("{dir}/frame{f}");
        let prepared = prepared_dual_quats(case, frame)?;
        let dqs: Vec<DualQuat> = prepared
            .dual_quats()
            .iter()
            .enumerate()
            .map(|(j, dq)| {
                if frame.negate_joints.contains(&j) {
                    negated(dq)
                } else {
                    *dq
                }
            })
            .collect();
        let mut expected_files = serde_json::Map::new();
        for method in [
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ] {
            let (positions, normals) = expected(case, frame, method)?;
            let prepared_method = prepare(
                &frame.palette,
                Some(&case.joint_centers),
                &reference_options(method),
            )
            .map_err(|e| skin_error(&case.name, e))?;
            let undefined: Vec<usize> = normal_ratios(case, frame, &prepared_method, method)
                .iter()
                .enumerate()
                .filter(|(_, &r)| r <= UNDEFINED_NORMAL_RELATIVE)
                .map(|(v, _)| v)
                .collect();
            scale = positions
                .iter()
                .map(|p| p.abs().max_element())
                .fold(scale, f32::max);
            let name = method.name();
            expected_files.insert(
                name.to_string(),
                json!({
                    "positions": writer.file(&format!("{fdir}/{name}_positions.f32"), &f32_bytes(positions.iter().flat_map(|p| p.to_array())))?,
                    "normals": writer.file(&format!("{fdir}/{name}_normals.f32"), &f32_bytes(normals.iter().flat_map(|p| p.to_array())))?,
                    "undefined_normals": undefined,
                }),
            );
        }
        frames.push(json!({
            "label": frame.label,
            "negated_dual_quats": frame.negate_joints,
            "palette": writer.file(&format!("{fdir}/palette.f32"), &f32_bytes(frame.palette.iter().flat_map(|m| m.to_cols_array())))?,
            "dual_quats": writer.file(&format!("{fdir}/dual_quats.f32"), &f32_bytes(dqs.iter().flat_map(|dq| dq.real.to_array().into_iter().chain(dq.dual.to_array()))))?,
            "residuals": writer.file(&format!("{fdir}/residuals.f32"), &f32_bytes(prepared.residuals().iter().flat_map(rows)))?,
            "rigid": writer.file(&format!("{fdir}/rigid.u32"), &u32_bytes(prepared.rigid_flags().iter().map(|&r| u32::from(r))))?,
            "expected": expected_files,
        }));
    }
    let entry = json!({
        "name": case.name,
        "description": case.description,
        "source": case.source,
        "vertex_count": n,
        "joint_count": case.joint_centers.len(),
        "scale": scale,
        "vertices": vertex_files,
        "frames": frames,
    });
    Ok((entry, n * case.frames.len()))
}

/// Every rule a port must follow to reproduce the expected outputs, as the manifest's `rules`:
/// per step a text and, where the rule has one, its number. The same rules as skinblend's CPU
/// reference (`skinblend::reference`) and its WGSL shaders.
fn rules() -> Value {
    json!({
        "weights": {
            "rule": "use the four JOINTS_0/WEIGHTS_0 slots; a slot with weight <= 0 contributes \
                nothing; divide each weight by the sum of the four",
            "unweighted_below": shortest(f32::MIN_POSITIVE),
            "unweighted": "a vertex whose weight sum is below unweighted_below (the smallest \
                normal f32; 0 included) is passed through: its position and normal are the input's",
        },
        "linear": "blend the skin matrices: M = sum of w_i * palette_i (3x4); position M p; \
            normal: normal_matrix(M's 3x3) n, then normalized",
        "dq": {
            "pivot": "the slot with the largest weight, the lowest slot on ties (strictly greater \
                replaces)",
            "sign_alignment": "an influence whose real part has a negative 4D dot product with the \
                pivot's real part enters the sum negated (real and dual); the pivot itself never",
            "blend": "sum of w_i * (real_i, dual_i) over the signed influences (weights as given or \
                divided by their sum: the normalization cancels it)",
            "normalization": "divide real and dual by the length of the summed real part; if that \
                length is 0 or not finite, use the pivot's own dual quaternion",
            "residual": "when any influence (weight > 0) has rigid = 0, blend the residual rows \
                with the weights divided by their sum: S = sum of w_i * residual_i; otherwise S is \
                the identity and is skipped",
            "order": "residual first, then the rigid motion: position = DQ(S p); normal = \
                R (normal_matrix(S's 3x3) n), then normalized (R n when S is skipped)",
        },
        "cor": "the dq blend (pivot, signs, normalization, residual) gives the rotation R and S; \
            for a vertex with a center c (centers.f32 w = 1): position = R S p + t with \
            t = L c - R S c, L the linear blend of the skin matrices (palette.f32) with the \
            weights divided by their sum; the normal as dq. A vertex without a center (w = 0) is \
            skinned by dq",
        "normal_matrix": {
            "rule": "for a 3x3 A with columns c0, c1, c2: the cofactor matrix C with columns \
                (c1 x c2, c2 x c0, c0 x c1), det = c0 . (c1 x c2), largest = the largest column \
                length. Singular when |det| <= singular_relative * largest^3: then C itself, \
                unsigned (the limit direction of det * A^-T; its sign is unknowable), else \
                C * sign(det), which is A^-T times |det|",
            "singular_relative": shortest(SINGULAR_RELATIVE),
            "note": "a port that multiplies by sign(det) also in the singular case, where the \
                sign is rounding noise, differs on the 50/50 ring of bend_coarse_mirrored_joint \
                under dq and cor by 1.85 when det rounds negative",
        },
        "normalize": "a direction v becomes v / |v|; when |v| is 0 or not finite the input \
            normal is kept (as for an unweighted vertex)",
        "undefined_normals": {
            "rule": "expected[method].undefined_normals lists the vertices whose exact normal \
                direction before normalization is zero: |C n| <= relative * largest^2 * |n| in \
                exact arithmetic on the f32 inputs (C, largest from normal_matrix's A). There the \
                expected normal is f32 rounding noise normalized, or the input normal where f32 \
                happens to give exactly zero: a checker skips these vertices' normals (their \
                positions are checked) and counts them",
            "relative": UNDEFINED_NORMAL_RELATIVE,
        },
        "inputs": "the palette in palette.f32 (LBS, the CoR translation) and the prepared \
            dual_quats.f32, residuals.f32, rigid.u32 (DQS, CoR): a port may compute the latter \
            from the palette with its own split, then it must match these within the tolerance",
    })
}

/// Writes the conformance vectors into `dir` (created if missing): the built-in rigs, the hard
/// cases and each model in `models` (`.glb`/`.gltf` paths). `progress` gets each case's name as
/// it is written. Files are written atomically; `manifest.json` last.
///
/// # Errors
/// [`GltfError::Io`] naming the file that could not be written; the errors of [`Model::open`](crate::Model::open)
/// naming a model; [`GltfError::Skin`] naming the case.
pub fn write(dir: &Path, models: &[PathBuf], progress: &mut dyn FnMut(&str)) -> Result<Summary> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let writer = Writer { root: dir };
    let mut cases = Vec::new();
    for fixture in fixtures::all() {
        writer.file(
            &format!("rigs/{}", rigs::file_name(&fixture)),
            &rigs::to_glb(&fixture)?,
        )?;
        cases.push(fixture_case(&fixture, evidence::angles_deg(&fixture))?);
    }
    cases.extend(hard_cases()?);
    for model in models {
        cases.extend(model_cases(model)?);
    }
    let mut entries = Vec::new();
    let mut summary = Summary {
        cases: Vec::new(),
        frames: 0,
        vertices: 0,
    };
    for case in &cases {
        progress(&case.name);
        let (entry, vertices) = write_case(&writer, case)?;
        entries.push(entry);
        summary.cases.push(case.name.clone());
        summary.frames += case.frames.len();
        summary.vertices += vertices;
    }
    let manifest = json!({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "generator": format!("skinblend {}", env!("CARGO_PKG_VERSION")),
        "conventions": "Arrays: raw little-endian f32 (.f32) or u32 (.u32), row after row, no header. \
            Column vectors (v' = M v), right-handed, glTF units. palette.f32: per joint the skin matrix \
            world_from_joint * joint_from_bind, 16 floats column-major. dual_quats.f32: per joint real (x, y, z, w) \
            then dual (x, y, z, w) with dual = 1/2 (0, t) real, the rigid part of the core's Gram-Schmidt split \
            (signs as stored; some cases store them negated on purpose). residuals.f32: per joint the rows of the \
            residual map p -> S p + (c - S c) about the joint's bind origin c (joint_centers.f32). rigid.u32: 1 when \
            that residual is skipped. centers.f32: per vertex the center of rotation (xyz, w = 1 when it has one). \
            Expected outputs: the CPU scalar reference, weights divided by their sum.",
        "tolerance": {
            "position": shortest(POSITION_TOLERANCE),
            "position_is_relative_to": "the case's scale (its largest absolute expected coordinate, at least 1)",
            "normal": shortest(NORMAL_TOLERANCE),
            "reason": "the reference and an engine both compute in f32 with other operation orders and fused \
                multiply-adds: tens of ulps (skinblend's WGSL kernel is within 1.3e-6 relative of the CPU); \
                normals pass through a cofactor matrix and a normalization and lose a few digits more. A real \
                error (a sign, a missing residual or inverse transpose, unnormalized weights) is 1e-2 or more."
        },
        "rules": rules(),
        "methods": ["linear", "dq", "cor"],
        "cases": entries,
    });
    let text = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| GltfError::invalid("manifest.json", e.to_string()))?;
    write_atomically(&dir.join("manifest.json"), &text)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every built-in and hard case, with per frame and method the normal ratios.
    fn all_ratios() -> Vec<(String, usize, Method, Vec<f64>)> {
        let mut cases: Vec<Case> = fixtures::all()
            .iter()
            .map(|f| fixture_case(f, evidence::angles_deg(f)).expect("fixture case"))
            .collect();
        cases.extend(hard_cases().expect("hard cases"));
        let mut out = Vec::new();
        for case in &cases {
            for (f, frame) in case.frames.iter().enumerate() {
                for method in Method::ALL {
                    let prepared = prepare(
                        &frame.palette,
                        Some(&case.joint_centers),
                        &reference_options(method),
                    )
                    .expect("prepare");
                    out.push((
                        case.name.clone(),
                        f,
                        method,
                        normal_ratios(case, frame, &prepared, method),
                    ));
                }
            }
        }
        out
    }

    /// The ratios of the built-in and hard cases sit far from the threshold on both sides: no
    /// vertex is marked or kept by a rounding's luck. Below: the collapsed 180° ring under LBS
    /// (about 6e-17), the mirrored joint's 50/50 ring (0 to 9e-8); above: the sheared cap's
    /// tip (0.047) and everything else.
    #[test]
    fn normal_ratios_are_far_from_the_threshold() {
        let mut marked = 0;
        for (name, f, method, ratios) in all_ratios() {
            for (v, r) in ratios.iter().enumerate() {
                assert!(
                    *r <= 1e-6 || *r >= 1e-2,
                    "{name} frame {f} {method:?} vertex {v}: ratio {r} near the threshold"
                );
                marked += usize::from(*r <= UNDEFINED_NORMAL_RELATIVE);
            }
        }
        assert!(marked > 0);
    }

    fn read_f32(path: &Path) -> Vec<f32> {
        std::fs::read(path)
            .expect("vector file")
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    }

    fn read_u32(path: &Path) -> Vec<u32> {
        read_f32(path).into_iter().map(f32::to_bits).collect()
    }

    /// One vertex's DQS normal in f64 from the vector files, by the manifest's rules;
    /// `negate_singular` takes −C where the residual is singular: what a port that multiplies by
    /// sign(det) there gets when rounding leaves det negative (its sign is noise). Returns
    /// the unnormalized direction's ratio `|C n| / (largest² |n|)` (infinite when no residual)
    /// and the unit normal.
    fn dq_normal(
        joints: &[u32],
        weights: &[f32],
        n: glam::DVec3,
        dqs: &[f32],
        residuals: &[f32],
        rigid: &[u32],
        negate_singular: bool,
    ) -> (f64, glam::DVec3) {
        use glam::{DMat3, DVec3, DVec4};
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        let mut pivot = 0;
        for slot in 1..4 {
            if weights[slot] > weights[pivot] {
                pivot = slot;
            }
        }
        let real_of = |j: u32| {
            let b = 8 * j as usize;
            DVec4::new(
                f64::from(dqs[b]),
                f64::from(dqs[b + 1]),
                f64::from(dqs[b + 2]),
                f64::from(dqs[b + 3]),
            )
        };
        let pivot_real = real_of(joints[pivot]);
        let mut real = DVec4::ZERO;
        let mut s = DMat3::ZERO;
        let mut any_residual = false;
        for slot in 0..4 {
            let w = f64::from(weights[slot]);
            if w <= 0.0 {
                continue;
            }
            let j = joints[slot] as usize;
            let r = real_of(joints[slot]);
            real += r * if r.dot(pivot_real) < 0.0 { -w } else { w };
            any_residual |= rigid[j] == 0;
            let row = |i: usize| {
                let b = 12 * j + 4 * i;
                DVec3::new(
                    f64::from(residuals[b]),
                    f64::from(residuals[b + 1]),
                    f64::from(residuals[b + 2]),
                )
            };
            s += DMat3::from_cols(row(0), row(1), row(2)).transpose() * (w / sum);
        }
        let real = real.normalize();
        let (ratio, m) = if any_residual {
            let (c0, c1, c2) = (s.x_axis, s.y_axis, s.z_axis);
            let cofactor = DMat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
            let det = c0.dot(cofactor.x_axis);
            let largest = c0.length().max(c1.length()).max(c2.length());
            let singular = det.abs() <= f64::from(SINGULAR_RELATIVE) * largest.powi(3);
            let negate = if singular { negate_singular } else { det < 0.0 };
            let sign = if negate { -1.0 } else { 1.0 };
            let d = cofactor * n * sign;
            (d.length() / (largest * largest * n.length()), d)
        } else {
            (f64::INFINITY, n)
        };
        let v = real.truncate();
        let rotated = m + 2.0 * v.cross(v.cross(m) + real.w * m);
        (ratio, rotated.normalize_or_zero())
    }

    /// The manifest states the rules, and `undefined_normals` marks exactly the vertices whose
    /// exact normal is zero: an f64 DQS over the written files, following the stated rules
    /// (the unsigned cofactor where singular), finds those and agrees with every other expected
    /// normal; with −C where singular (cofactor · sign(det) when det rounds negative) it is off by
    /// more than 1 on the mirrored ring.
    /// Fails when the rules or the marks are missing, when a mark is dropped or added, or when a
    /// stated rule is not the one the expected values follow.
    #[test]
    fn manifest_states_the_rules_and_marks_undefined_normals() {
        let scratch = skinblend_testkit::ScratchDir::new("manifest-rules");
        let dir = scratch.join("vectors");
        write(&dir, &[], &mut |_| {}).expect("write vectors");
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
                .expect("json");
        let rules = &manifest["rules"];
        assert_eq!(rules["normal_matrix"]["singular_relative"], json!(1e-6));
        assert!(rules["normal_matrix"]["rule"]
            .as_str()
            .unwrap()
            .contains("unsigned"));
        for key in [
            "pivot",
            "sign_alignment",
            "blend",
            "normalization",
            "residual",
            "order",
        ] {
            assert!(rules["dq"][key].is_string(), "rules.dq.{key}");
        }
        for (key, field) in [("weights", "unweighted"), ("undefined_normals", "rule")] {
            assert!(rules[key][field].is_string(), "rules.{key}.{field}");
        }
        assert!(rules["normalize"].is_string() && rules["cor"].is_string());

        let cases = manifest["cases"].as_array().expect("cases");
        let mut marked_total = 0;
        let mut worst_signed: f64 = 0.0;
        for case in cases {
            let name = case["name"].as_str().unwrap();
            let v = &case["vertices"];
            let file = |key: &str| dir.join(v[key].as_str().unwrap());
            let (normals, joints, weights) = (
                read_f32(&file("normals")),
                read_u32(&file("joints")),
                read_f32(&file("weights")),
            );
            for (f, frame) in case["frames"].as_array().unwrap().iter().enumerate() {
                let frame_file = |key: &str| dir.join(frame[key].as_str().unwrap());
                let (dqs, residuals, rigid) = (
                    read_f32(&frame_file("dual_quats")),
                    read_f32(&frame_file("residuals")),
                    read_u32(&frame_file("rigid")),
                );
                let expected = &frame["expected"]["dq"];
                let expected_normals = read_f32(&dir.join(expected["normals"].as_str().unwrap()));
                let marked: Vec<usize> = expected["undefined_normals"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{name}: no undefined_normals"))
                    .iter()
                    .map(|x| x.as_u64().unwrap() as usize)
                    .collect();
                for cor_or_linear in ["cor", "linear"] {
                    assert!(frame["expected"][cor_or_linear]["undefined_normals"].is_array());
                }
                assert_eq!(
                    frame["expected"]["cor"]["undefined_normals"], expected["undefined_normals"],
                    "{name}: CoR normals are DQS's"
                );
                marked_total += marked.len();
                for vertex in 0..case["vertex_count"].as_u64().unwrap() as usize {
                    let (j, w) = (
                        &joints[4 * vertex..4 * vertex + 4],
                        &weights[4 * vertex..4 * vertex + 4],
                    );
                    if w.iter().sum::<f32>() < f32::MIN_POSITIVE {
                        continue;
                    }
                    let n = glam::Vec3::from_slice(&normals[3 * vertex..]).as_dvec3();
                    let (ratio, normal) = dq_normal(j, w, n, &dqs, &residuals, &rigid, false);
                    let exact_zero = ratio <= 1e-6;
                    assert_eq!(
                        marked.contains(&vertex),
                        exact_zero,
                        "{name} frame {f} vertex {vertex}: ratio {ratio}, marked {marked:?}"
                    );
                    if exact_zero {
                        continue;
                    }
                    let got = glam::Vec3::from_slice(&expected_normals[3 * vertex..]).as_dvec3();
                    let off = (got - normal).abs().max_element();
                    assert!(
                        off <= f64::from(NORMAL_TOLERANCE),
                        "{name} frame {f} vertex {vertex}: the stated rules give {normal}, expected {got}"
                    );
                    let (_, signed) = dq_normal(j, w, n, &dqs, &residuals, &rigid, true);
                    worst_signed = worst_signed.max((got - signed).abs().max_element());
                }
                if name == "bend_coarse_mirrored_joint" {
                    assert!(
                        !marked.is_empty(),
                        "{name}: the zero normals are not marked"
                    );
                }
            }
        }
        assert!(marked_total > 0);
        assert!(
            worst_signed > 1.0,
            "sign(det) where singular is off by only {worst_signed}"
        );
        println!("marked {marked_total} dq normals; -C where singular: off by {worst_signed:.3}");
    }

    /// Stored quaternion signs do not matter to the reference: DQS from the negated dual
    /// quaternions equals DQS from the matrices (the opposite-signs case's expected outputs).
    #[test]
    fn negated_dual_quats_skin_like_the_matrices() {
        let cases = hard_cases().expect("hard cases");
        let case = &cases[0];
        let frame = &case.frames[1];
        let prepared = prepared_dual_quats(case, frame).expect("prepare");
        let dqs: Vec<DualQuat> = prepared
            .dual_quats()
            .iter()
            .enumerate()
            .map(|(j, dq)| if j % 2 == 1 { negated(dq) } else { *dq })
            .collect();
        let from_dqs =
            PreparedPalette::from_dual_quats(&dqs, &reference_options(Method::DualQuaternion))
                .expect("from dual quats");
        let input = SkinInput::new(&case.positions, None, None, &case.influences).expect("input");
        let mut positions = vec![Vec3::ZERO; case.positions.len()];
        skin_into(
            &input,
            &from_dqs,
            SkinOutputs {
                positions: &mut positions,
                normals: None,
                tangents: None,
            },
            reference_options(Method::DualQuaternion).run_options(),
        )
        .expect("skin");
        let (expected_positions, _) =
            expected(case, frame, Method::DualQuaternion).expect("expected");
        let worst = positions
            .iter()
            .zip(&expected_positions)
            .map(|(a, b)| (*a - *b).abs().max_element())
            .fold(0.0, f32::max);
        // Negation is exact in f32 and the pivot alignment undoes it exactly.
        assert!(worst <= 1e-6, "worst {worst}");
    }
}
