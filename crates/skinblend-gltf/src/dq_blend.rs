//! Blend values of [`skinblend::Method::Blended`] from a rule a user states: the joints, by node
//! name, whose influence becomes DQS (`skinblend dq-blend --dq-joints`, `pose --dq-joints`).

use skinblend::{blend_values_from_joints, Method};

use crate::error::{GltfError, Result};
use crate::model::Model;

/// What [`Model::set_dq_blend_from_joints`] wrote for one primitive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrimitiveDqBlend {
    /// The mesh.
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// Its vertices.
    pub vertices: usize,
    /// Vertices entirely DQS (blend value 1).
    pub dq_vertices: usize,
    /// Vertices entirely LBS (blend value 0).
    pub linear_vertices: usize,
}

impl Model {
    /// The methods of [`Method::ALL`] a [`crate::SceneSkinner`] can run on this model, in
    /// order: every one but blended, which needs blend values on every skinned primitive
    /// (the file's `_SKINBLEND_DQ_BLEND`, or [`Model::set_dq_blend_from_joints`]) unless
    /// `dq_blend` gives one for the whole mesh ([`crate::SceneOptions::dq_blend`]).
    #[must_use]
    pub fn skinnable_methods(&self, dq_blend: Option<f32>) -> Vec<Method> {
        let every_primitive_has_values = self.skinned_nodes().iter().all(|&n| {
            self.nodes[n].mesh.is_none_or(|m| {
                self.meshes[m]
                    .primitives
                    .iter()
                    .all(|p| p.influences.is_none() || p.dq_blend.is_some())
            })
        });
        Method::ALL
            .into_iter()
            .filter(|m| !m.needs_blend_values() || dq_blend.is_some() || every_primitive_has_values)
            .collect()
    }

    /// Gives every primitive with influences of every skinned node's mesh the blend values of
    /// the rule "each vertex takes as much DQS as its weights put on the joints named
    /// `joint_names`" ([`skinblend::blend_values_from_joints`]), in
    /// [`crate::Primitive::dq_blend`] (replacing any the file carried), so that blended
    /// skinning and [`crate::export::write_skinning_attributes`] use them. Joints are matched
    /// by their node's name, exactly; the skin a mesh is first shown with decides its joints.
    ///
    /// # Errors
    /// [`GltfError::Request`] for an empty list, or a name that no joint of a skin used by a
    /// skinned node has (listing the names there are).
    pub fn set_dq_blend_from_joints(
        &mut self,
        joint_names: &[&str],
    ) -> Result<Vec<PrimitiveDqBlend>> {
        if joint_names.is_empty() {
            return Err(GltfError::Request {
                what: "--dq-joints: name at least one joint".to_owned(),
            });
        }
        let mut uses: Vec<(usize, usize)> = Vec::new();
        for node in self.skinned_nodes() {
            if let (Some(m), Some(s)) = (self.nodes[node].mesh, self.nodes[node].skin) {
                if !uses.iter().any(|&(done, _)| done == m) {
                    uses.push((m, s));
                }
            }
        }
        let joint_name = |model: &Model, joint_node: usize| model.nodes[joint_node].name.clone();
        for &name in joint_names {
            let known = uses.iter().any(|&(_, s)| {
                self.skins[s]
                    .joints
                    .iter()
                    .any(|&j| joint_name(self, j).as_deref() == Some(name))
            });
            if !known {
                let mut names: Vec<String> = uses
                    .iter()
                    .flat_map(|&(_, s)| self.skins[s].joints.iter())
                    .filter_map(|&j| joint_name(self, j))
                    .collect();
                names.sort();
                names.dedup();
                return Err(GltfError::Request {
                    what: format!(
                        "--dq-joints: no joint of the skinned meshes is named {name:?}; the joints are: {}",
                        names.join(", ")
                    ),
                });
            }
        }
        let mut summary = Vec::new();
        for (m, s) in uses {
            let flags: Vec<bool> = self.skins[s]
                .joints
                .iter()
                .map(|&j| joint_name(self, j).is_some_and(|n| joint_names.contains(&n.as_str())))
                .collect();
            for (p, primitive) in self.meshes[m].primitives.iter_mut().enumerate() {
                let Some(influences) = primitive.influences.as_ref() else {
                    continue;
                };
                let values = blend_values_from_joints(influences, &flags);
                summary.push(PrimitiveDqBlend {
                    mesh: m,
                    primitive: p,
                    vertices: values.len(),
                    dq_vertices: values.iter().filter(|&&v| v >= 1.0).count(),
                    linear_vertices: values.iter().filter(|&&v| v <= 0.0).count(),
                });
                primitive.dq_blend = Some(values);
            }
        }
        Ok(summary)
    }
}
