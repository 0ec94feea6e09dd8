//! Centers of rotation (CoR) of a model's primitives, from their bind pose: for one primitive,
//! or for every primitive a skinned node shows, kept in the model.

use skinblend::cor::{CorOptions, CorProgress, RotationCenters};

use crate::error::{GltfError, Result};
use crate::model::{Model, Primitive};

/// The centers of rotation of a primitive's bind pose (before morph targets), for
/// [`skinblend::Method::CenterOfRotation`], with the paper's options. Points and lines have no
/// triangles, so all their vertices fall back to DQS.
///
/// # Errors
/// Those of [`skinblend::cor::rotation_centers_with_progress`].
pub fn primitive_rotation_centers(
    primitive: &Primitive,
    influences: &skinblend::Influences,
    options: &CorOptions,
    progress: &mut dyn FnMut(CorProgress),
) -> std::result::Result<RotationCenters, skinblend::SkinError> {
    let triangles = primitive.triangles();
    skinblend::cor::rotation_centers_with_progress(
        &primitive.positions,
        &triangles,
        influences,
        options,
        progress,
    )
}

/// What [`Model::compute_rotation_centers`] computed for one primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveCenters {
    /// The mesh.
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// Its vertices.
    pub vertices: usize,
    /// Vertices without a center (skinned by DQS).
    pub vertices_without_center: usize,
}

impl Model {
    /// Computes the centers of rotation of every primitive with influences of every mesh a
    /// skinned node shows, and keeps them in [`Primitive::rotation_centers`] (replacing any
    /// the file carried), so that CoR skinning and [`crate::export::write_skinning_attributes`]
    /// use them. `progress(done, total, stage)` counts primitives and reports each one's
    /// stages.
    ///
    /// # Errors
    /// [`GltfError::Skin`] naming the primitive, for the errors of
    /// [`skinblend::cor::rotation_centers_with_progress`].
    pub fn compute_rotation_centers(
        &mut self,
        options: &CorOptions,
        progress: &mut dyn FnMut(usize, usize, CorProgress),
    ) -> Result<Vec<PrimitiveCenters>> {
        let mut meshes: Vec<usize> = self
            .skinned_nodes()
            .into_iter()
            .filter_map(|n| self.nodes[n].mesh)
            .collect();
        meshes.sort_unstable();
        meshes.dedup();
        let work: Vec<(usize, usize)> = meshes
            .iter()
            .flat_map(|&m| {
                let primitives = &self.meshes[m].primitives;
                (0..primitives.len())
                    .filter(move |&p| primitives[p].influences.is_some())
                    .map(move |p| (m, p))
            })
            .collect();
        let mut summary = Vec::with_capacity(work.len());
        for (done, &(m, p)) in work.iter().enumerate() {
            let primitive = &self.meshes[m].primitives[p];
            let Some(influences) = primitive.influences.as_ref() else {
                continue;
            };
            let centers =
                primitive_rotation_centers(primitive, influences, options, &mut |stage| {
                    progress(done, work.len(), stage);
                })
                .map_err(|source| GltfError::Skin {
                    path: format!("meshes[{m}].primitives[{p}]"),
                    source,
                })?;
            summary.push(PrimitiveCenters {
                mesh: m,
                primitive: p,
                vertices: centers.centers.len(),
                vertices_without_center: centers.vertices_without_center,
            });
            self.meshes[m].primitives[p].rotation_centers = Some(centers.centers);
        }
        Ok(summary)
    }
}
