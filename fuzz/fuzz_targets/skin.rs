//! `skinblend::skin` on arbitrary small rigs, with every method and option.
//!
//! Properties:
//! - nothing panics, whatever the data (NaN, infinities, huge, degenerate or non-affine
//!   matrices, mismatched lengths);
//! - when every input value (positions, normals, tangents, weights, palette, joint centers,
//!   rotation centers) is finite and below [`TAME`] in magnitude and skinning succeeds, every
//!   output component is finite (the library promises no NaN);
//! - centers computed by `cor::rotation_centers` are accepted by `with_rotation_centers`;
//! - the diagnostics are counts within range;
//! - on a mesh large enough to be split over threads, the parallel result is bit-identical to
//!   the serial one.
//!
//! Input layout (compact floats as in `skinblend_fuzz::Reader::float`):
//! `n = byte % 33` vertices, `k = 1 + byte % 8` slots, `J = 1 + byte % 8` joints; a flags byte
//! (bit 0 normals, bit 1 tangents, bits 2–3 method: linear, dq, cor with read centers, cor with
//! computed centers; bit 4 renormalize, bit 5 simd, bit 6 parallel, bit 7 joint centers); a
//! second flags byte (bits 0, 6 and 7 all set: repeat the vertices past the parallel threshold;
//! bit 1 read a rigid tolerance; bit 2 raw weights, else their absolute values; bits 3–4 palette
//! length J, J − 1, J + 1); per vertex the position, normal, tangent (when present) and `k`
//! (joint byte % J, weight) pairs; the palette's matrices (`Reader::matrix`); joint centers
//! (when flagged); for CoR, rotation centers (per vertex a byte, odd: a vec3 follows, even: no
//! center) or triangles (count byte % 17, three index bytes each); the rigid tolerance (when
//! flagged). Past the end every byte reads as zero.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skinblend::cor::{rotation_centers, CorOptions, NO_ROTATION_CENTER};
use skinblend::glam::{Mat4, Vec3, Vec4};
use skinblend::{skin, Influences, Method, SkinInput, SkinOptions, Skinned};
use skinblend_fuzz::{tame, Reader};

/// Inputs below this magnitude must give finite output.
const TAME: f32 = 1e6;
/// Vertices past which skinning splits over threads (the core's chunk is 4096).
const PARALLEL_VERTICES: usize = 4096 + 1;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let n = usize::from(r.u8() % 33);
    let k = 1 + usize::from(r.u8() % 8);
    let joint_count = 1 + usize::from(r.u8() % 8);
    let flags = r.u8();
    let flags2 = r.u8();
    let has_normals = flags & 1 != 0;
    let has_tangents = flags & 2 != 0;
    let method = match (flags >> 2) & 3 {
        0 => Method::Linear,
        1 => Method::DualQuaternion,
        _ => Method::CenterOfRotation,
    };
    let computed_centers = (flags >> 2) & 3 == 3;
    let options = SkinOptions {
        method,
        renormalize: flags & 16 != 0,
        parallel: flags & 64 != 0,
        simd: flags & 32 != 0,
        ..SkinOptions::default()
    };
    let has_joint_centers = flags & 128 != 0;
    // Bits 0, 6 and 7: one random input in eight pays for a mesh of thousands of vertices.
    let repeat = flags2 & 0xC1 == 0xC1;
    let read_tolerance = flags2 & 2 != 0;
    let raw_weights = flags2 & 4 != 0;
    let palette_len = match (flags2 >> 3) & 3 {
        1 => joint_count - 1,
        2 => joint_count + 1,
        _ => joint_count,
    };

    let mut positions = Vec::with_capacity(n);
    let mut normals = Vec::with_capacity(n);
    let mut tangents = Vec::with_capacity(n);
    let mut joints = Vec::with_capacity(n * k);
    let mut weights = Vec::with_capacity(n * k);
    for _ in 0..n {
        positions.push(r.vec3());
        if has_normals {
            normals.push(r.vec3());
        }
        if has_tangents {
            tangents.push(r.vec4());
        }
        for _ in 0..k {
            joints.push(u16::from(r.u8()) % joint_count as u16);
            let w = r.float();
            weights.push(if raw_weights { w } else { w.abs() });
        }
    }
    let palette: Vec<Mat4> = (0..palette_len).map(|_| r.matrix()).collect();
    let joint_centers: Vec<Vec3> = if has_joint_centers {
        (0..palette_len).map(|_| r.vec3()).collect()
    } else {
        Vec::new()
    };
    let mut centers = Vec::new();
    let mut triangles = Vec::new();
    if method == Method::CenterOfRotation {
        if computed_centers {
            let count = r.u8() % 17;
            let index = |r: &mut Reader| u32::from(r.u8()) % (n as u32 + 1);
            for _ in 0..count {
                triangles.push([index(&mut r), index(&mut r), index(&mut r)]);
            }
        } else {
            for _ in 0..n {
                centers.push(if r.u8() % 2 == 1 {
                    r.vec3()
                } else {
                    NO_ROTATION_CENTER
                });
            }
        }
    }
    let mut options = options;
    if read_tolerance {
        options.rigid_tolerance = r.float();
    }

    if repeat && n > 0 {
        let times = PARALLEL_VERTICES.div_ceil(n);
        positions = positions.repeat(times);
        normals = normals.repeat(times);
        tangents = tangents.repeat(times);
        joints = joints.repeat(times);
        weights = weights.repeat(times);
        centers = centers.repeat(times);
    }

    let influences = match Influences::new(k, joints, weights.clone(), joint_count) {
        Ok(influences) => influences,
        Err(e) => return trace(format_args!("influences: {e}")),
    };
    if method == Method::CenterOfRotation && computed_centers {
        let cor_options = CorOptions {
            parallel: options.parallel,
            ..CorOptions::default()
        };
        match rotation_centers(&positions, &triangles, &influences, &cor_options) {
            Ok(computed) => {
                assert_eq!(computed.centers.len(), positions.len());
                centers = computed.centers;
            }
            Err(e) => return trace(format_args!("rotation_centers: {e}")),
        }
    }

    let normals = has_normals.then_some(&normals[..]);
    let tangents = has_tangents.then_some(&tangents[..]);
    let mut input = match SkinInput::new(&positions, normals, tangents, &influences) {
        Ok(input) => input,
        Err(e) => return trace(format_args!("SkinInput::new: {e}")),
    };
    if method == Method::CenterOfRotation {
        match input.with_rotation_centers(&centers) {
            Ok(with) => input = with,
            Err(e) => {
                assert!(!computed_centers, "computed centers rejected: {e}");
                return trace(format_args!("with_rotation_centers: {e}"));
            }
        }
    }
    let joint_centers = has_joint_centers.then_some(&joint_centers[..]);
    let skinned = match skin(&input, &palette, joint_centers, &options) {
        Ok(skinned) => skinned,
        Err(e) => return trace(format_args!("skin: {e}")),
    };
    trace(format_args!(
        "skinned {} vertices, {options:?}, {:?}",
        positions.len(),
        skinned.diagnostics
    ));

    let d = skinned.diagnostics;
    let vertices = positions.len();
    assert!(d.singular_normal_matrices <= vertices, "{d:?}");
    assert!(d.unweighted_vertices <= vertices, "{d:?}");
    assert!(d.non_rigid_joints <= palette.len(), "{d:?}");
    assert!(d.sign_flips <= vertices * k, "{d:?}");
    assert_eq!(skinned.positions.len(), vertices);
    assert_eq!(skinned.normals.is_some(), has_normals);
    assert_eq!(skinned.tangents.is_some(), has_tangents);

    let all_tame = positions
        .iter()
        .all(|p| p.to_array().iter().all(|&x| tame(x, TAME)))
        && normals
            .into_iter()
            .flatten()
            .all(|v| v.to_array().iter().all(|&x| tame(x, TAME)))
        && tangents
            .into_iter()
            .flatten()
            .all(|v| v.to_array().iter().all(|&x| tame(x, TAME)))
        && weights.iter().all(|&w| tame(w, TAME))
        && palette
            .iter()
            .all(|m| m.to_cols_array().iter().all(|&x| tame(x, TAME)))
        && joint_centers
            .into_iter()
            .flatten()
            .all(|c| c.to_array().iter().all(|&x| tame(x, TAME)))
        && centers
            .iter()
            .filter(|c| !c.is_nan())
            .all(|c| c.to_array().iter().all(|&x| tame(x, TAME)));
    if all_tame {
        // What a failure prints: the vertex's inputs, the palette and the options.
        let describe = |v: usize| {
            format!(
                "position {:?}, normal {:?}, tangent {:?}, influences {:?}, rotation center {:?}; \
                 palette {palette:?}; joint centers {joint_centers:?}; {options:?}",
                positions[v],
                normals.map(|n| n[v]),
                tangents.map(|t| t[v]),
                influences.vertex(v),
                centers.get(v),
            )
        };
        assert_finite(&skinned, describe);
    }

    if vertices >= PARALLEL_VERTICES {
        let other = SkinOptions {
            parallel: !options.parallel,
            ..options
        };
        let again = skin(&input, &palette, joint_centers, &other).expect("the same input");
        assert!(
            bits(&skinned) == bits(&again) && skinned.diagnostics == again.diagnostics,
            "parallel and serial results differ"
        );
    }
});

/// With `SKINBLEND_FUZZ_TRACE` set, prints how far an input got (for writing seeds).
fn trace(what: std::fmt::Arguments<'_>) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("SKINBLEND_FUZZ_TRACE").is_some()) {
        eprintln!("{what}");
    }
}

fn assert_finite(skinned: &Skinned, describe: impl Fn(usize) -> String) {
    for (v, p) in skinned.positions.iter().enumerate() {
        assert!(
            p.is_finite(),
            "output position {v} is {p} from {}",
            describe(v)
        );
    }
    for (v, n) in skinned.normals.iter().flatten().enumerate() {
        assert!(
            n.is_finite(),
            "output normal {v} is {n} from {}",
            describe(v)
        );
    }
    for (v, t) in skinned.tangents.iter().flatten().enumerate() {
        assert!(
            t.is_finite(),
            "output tangent {v} is {t} from {}",
            describe(v)
        );
    }
}

fn bits(skinned: &Skinned) -> Vec<u32> {
    let p = skinned.positions.iter().flat_map(|v| v.to_array());
    let n = skinned.normals.iter().flatten().flat_map(|v| v.to_array());
    let t = skinned
        .tangents
        .iter()
        .flatten()
        .flat_map(|v: &Vec4| v.to_array());
    p.chain(n).chain(t).map(f32::to_bits).collect()
}
