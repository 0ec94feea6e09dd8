//! The cases: the built-in rigs at the evidence angles, the cases engines get wrong, and the
//! sample models at three times of their first animation.

use std::path::Path;

use glam::{Mat4, Vec3};
use skinblend::fixtures::{self, Fixture};
use skinblend::{evidence, Influences};

use crate::error::{GltfError, Result};
use crate::{rigs, Model};

/// The core's error on `case`, named by the case.
pub(super) fn skin_error(case: &str, source: skinblend::SkinError) -> GltfError {
    GltfError::Skin {
        path: format!("conformance case {case}"),
        source,
    }
}

/// The sample model times: fractions of the first animation's length.
pub(super) const MODEL_TIME_FRACTIONS: [f32; 3] = [0.25, 0.5, 0.75];

/// One case before writing: vertex data, and per frame the palette and a label.
pub(super) struct Case {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) source: String,
    pub(super) positions: Vec<Vec3>,
    pub(super) normals: Vec<Vec3>,
    pub(super) influences: Influences,
    pub(super) centers: Vec<Vec3>,
    /// Per vertex the blend value of the blended method (0 = LBS, 1 = DQS).
    pub(super) blend_values: Vec<f32>,
    pub(super) joint_centers: Vec<Vec3>,
    pub(super) frames: Vec<Frame>,
}

pub(super) struct Frame {
    pub(super) label: String,
    pub(super) palette: Vec<Mat4>,
    /// Negate the stored dual quaternion of these joints (the same motions).
    pub(super) negate_joints: Vec<usize>,
}

pub(super) fn fixture_case(fixture: &Fixture, angles: &[f32]) -> Result<Case> {
    let centers =
        evidence::fixture_rotation_centers(fixture).map_err(|e| skin_error(fixture.name, e))?;
    Ok(Case {
        name: fixture.name.to_string(),
        description: format!(
            "built-in rig {} (see rigs/{})",
            fixture.name,
            rigs::file_name(fixture)
        ),
        source: format!("rigs/{}", rigs::file_name(fixture)),
        positions: fixture.positions.clone(),
        normals: fixture.normals.clone(),
        influences: fixture.influences.clone(),
        centers,
        blend_values: fixture.dq_blend_values(),
        joint_centers: fixture.joint_centers.clone(),
        frames: angles
            .iter()
            .map(|&a| Frame {
                label: format!("{a}° (time {} s of the sweep)", rigs::time_s_of_angle(a)),
                palette: fixture.palette(a),
                negate_joints: Vec::new(),
            })
            .collect(),
    })
}

/// `palette[joint]` followed by `deformation` about the joint's bind origin.
pub(super) fn deform_joint(
    palette: &mut [Mat4],
    centers: &[Vec3],
    joint: usize,
    deformation: Mat4,
) {
    let c = centers[joint];
    palette[joint] =
        palette[joint] * Mat4::from_translation(c) * deformation * Mat4::from_translation(-c);
}

/// The cases engines get wrong, on the coarse twist and bend.
pub(super) fn hard_cases() -> Result<Vec<Case>> {
    let mut cases = Vec::new();

    let twist = fixtures::twist_coarse();
    let joints = twist.joint_centers.len();
    let mut antipodal = fixture_case(&twist, &[90.0, 180.0])?;
    antipodal.name = "twist_coarse_opposite_signs".into();
    antipodal.description = "the coarse twist with every other joint's dual quaternion stored \
        negated in dual_quats.f32 (the same motions): the shader must align signs to the pivot"
        .into();
    for frame in &mut antipodal.frames {
        frame.negate_joints = (0..joints).filter(|j| j % 2 == 1).collect();
    }
    cases.push(antipodal);

    let bend = fixtures::bend_coarse();
    let moving = bend.joint_centers.len() - 1;
    let mut scaled = fixture_case(&bend, &[90.0])?;
    scaled.name = "bend_coarse_scaled_joint".into();
    scaled.description = format!(
        "the coarse bend at 90° with joint {moving} scaled by (1.25, 0.8, 1.1) about its bind \
         origin: DQS must carry the scale in the residual"
    );
    for frame in &mut scaled.frames {
        deform_joint(
            &mut frame.palette,
            &bend.joint_centers,
            moving,
            Mat4::from_scale(Vec3::new(1.25, 0.8, 1.1)),
        );
        frame.label.push_str(", joint scaled");
    }
    cases.push(scaled);

    let mut mirrored = fixture_case(&bend, &[45.0])?;
    mirrored.name = "bend_coarse_mirrored_joint".into();
    mirrored.description = format!(
        "the coarse bend at 45° with joint {moving} mirrored (x -> -x) about its bind origin: \
         negative determinant, normals by the inverse transpose with its sign"
    );
    for frame in &mut mirrored.frames {
        deform_joint(
            &mut frame.palette,
            &bend.joint_centers,
            moving,
            Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
        );
        frame.label.push_str(", joint mirrored");
    }
    cases.push(mirrored);

    let mut unnormalized = fixture_case(&twist, &[135.0])?;
    unnormalized.name = "twist_coarse_weights_not_summing_to_1".into();
    unnormalized.description = "the coarse twist at 135° with each vertex's weights multiplied \
        by a factor from 0.3 to 1.7 (the vertex's index decides): the shader must divide by the sum"
        .into();
    let k = twist.influences.influences_per_vertex();
    let n = twist.influences.vertex_count();
    let mut joint_list = Vec::with_capacity(n * k);
    let mut weight_list = Vec::with_capacity(n * k);
    for v in 0..n {
        let factor = 0.3 + 1.4 * ((v * 7919) % 101) as f32 / 100.0;
        let (j, w) = twist.influences.vertex(v).unwrap_or((&[], &[]));
        joint_list.extend_from_slice(j);
        weight_list.extend(w.iter().map(|w| w * factor));
    }
    unnormalized.influences = Influences::new(k, joint_list, weight_list, joints)
        .map_err(|e| skin_error("twist_coarse_weights_not_summing_to_1", e))?;
    cases.push(unnormalized);
    Ok(cases)
}

/// One case per skinned primitive of the model's first skinned node, at three times of its
/// first animation (or its rest pose when it has none).
pub(super) fn model_cases(path: &Path) -> Result<Vec<Case>> {
    let model = Model::open(path)?;
    let stem = path
        .file_stem()
        .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned());
    let file_name = path
        .file_name()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let times: Vec<Option<f32>> = match model.animations.first() {
        Some(a) => MODEL_TIME_FRACTIONS
            .iter()
            .map(|f| Some(a.start_s + f * (a.end_s - a.start_s)))
            .collect(),
        None => vec![None],
    };
    let mut cases = Vec::new();
    let Some(&node) = model.skinned_nodes().first() else {
        return Ok(cases);
    };
    let (Some(mesh), Some(skin)) = (model.nodes[node].mesh, model.nodes[node].skin) else {
        return Ok(cases);
    };
    let mut frames = Vec::new();
    for time in &times {
        let pose = match time {
            Some(t) => model.pose(Some(0), *t)?,
            None => model.rest_pose(),
        };
        frames.push((
            match time {
                Some(t) => format!("time {t} s of animation 0"),
                None => "rest pose".to_string(),
            },
            model.palette(&pose, skin)?,
        ));
    }
    for (p, primitive) in model.meshes[mesh].primitives.iter().enumerate() {
        let Some(influences) = primitive.influences.clone() else {
            continue;
        };
        if !primitive.targets.is_empty() {
            // Morph targets come before skinning and are not part of the vectors.
            continue;
        }
        let name = format!("{stem}_mesh{mesh}_primitive{p}");
        let centers = match &primitive.rotation_centers {
            Some(c) => c.clone(),
            None => {
                crate::primitive_rotation_centers(
                    primitive,
                    &influences,
                    &skinblend::cor::CorOptions::default(),
                    &mut |_| {},
                )
                .map_err(|e| skin_error(&name, e))?
                .centers
            }
        };
        // Blend values by the joint rule with every odd-numbered joint flagged for DQS: vertices
        // on odd joints only are DQS (1), on even ones LBS (0), across them in between.
        let odd_joints: Vec<bool> = (0..influences.joint_count()).map(|j| j % 2 == 1).collect();
        let blend_values = skinblend::blend_values_from_joints(&influences, &odd_joints);
        let positions = primitive.positions.clone();
        let normals = primitive
            .normals
            .clone()
            .unwrap_or_else(|| vec![Vec3::Z; positions.len()]);
        cases.push(Case {
            description: format!(
                "sample model {file_name}: nodes[{node}] (skins[{skin}]), meshes[{mesh}].primitives[{p}]"
            ),
            source: file_name.clone(),
            positions,
            normals,
            influences,
            centers,
            blend_values,
            joint_centers: model.skins[skin].joint_centers.clone(),
            frames: frames
                .iter()
                .map(|(label, palette)| Frame {
                    label: label.clone(),
                    palette: palette.clone(),
                    negate_joints: Vec::new(),
                })
                .collect(),
            name,
        });
    }
    Ok(cases)
}
