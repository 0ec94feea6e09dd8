//! A mesh checked once and skinned every frame ([`SkinMesh`]), and many meshes skinned in one
//! call ([`skin_batch`]).

use std::borrow::Cow;

use glam::{Vec3, Vec4};

use crate::blend_values::StoredBlend;
use crate::error::SkinError;
use crate::influences::Influences;
use crate::input::{check_attribute, count_full_validation, SkinInput};
use crate::palette::PreparedPalette;
use crate::skin::{check_call, skin_checked};
use crate::types::{Diagnostics, RunOptions, SkinOutputs, Skinned};
use crate::vertex_blocks::{LazyBlocks, VertexBlocks};

/// A mesh's bind pose and influences, checked once, then skinned every frame with only what a
/// frame can change checked: the palette (O(joints), when it is prepared) and the outputs'
/// lengths (O(1)).
///
/// Owns or borrows each attribute (`Cow`): `SkinMesh<'static>` owns them all, a mesh over a
/// loaded model's arrays borrows them. Positions and normals are `Vec3`, tangents `Vec4` with
/// `w` the handedness (±1), centers of rotation one per vertex (NaN: none), all in the bind
/// pose, one per vertex of the influences. It also keeps, privately, the layout the SIMD
/// kernels read best (positions and normals in blocks of eight vertices), built once on the
/// mesh's second skinning (a mesh skinned once never pays for it): 24 bytes per vertex for
/// the positions and 24 more with normals, on top of the attributes.
///
/// ```
/// use glam::{Mat4, Quat, Vec3};
/// use skinblend::{prepare, Influences, Method, RunOptions, SkinMesh, SkinOutputs};
///
/// let influences = Influences::new(2, vec![0, 1, 0, 1], vec![0.5; 4], 2)?;
/// let mesh = SkinMesh::new(vec![Vec3::new(0.25, 1.0, 0.0), Vec3::new(-0.25, 1.0, 0.0)], influences)?;
/// let mut prepared = prepare(&[Mat4::IDENTITY; 2], None, Method::DualQuaternion)?;
/// let mut out = [Vec3::ZERO; 2];
/// for frame in 0..3 {
///     let turn = Mat4::from_quat(Quat::from_rotation_y(frame as f32));
///     prepared.update(&[Mat4::IDENTITY, turn])?; // O(joints)
///     mesh.skin_into(&prepared, SkinOutputs::positions(&mut out), RunOptions::default())?;
/// }
/// # Ok::<(), skinblend::SkinError>(())
/// ```
#[derive(Debug, Clone)]
pub struct SkinMesh<'a> {
    positions: Cow<'a, [Vec3]>,
    normals: Option<Cow<'a, [Vec3]>>,
    tangents: Option<Cow<'a, [Vec4]>>,
    influences: Cow<'a, Influences>,
    rotation_centers: Option<Cow<'a, [Vec3]>>,
    blend: Option<StoredBlend<'a>>,
    blocks: LazyBlocks,
}

impl<'a> SkinMesh<'a> {
    /// A mesh of `positions` (bind pose, one per vertex of `influences`), each checked finite.
    /// O(vertices) once.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] and [`SkinError::NonFiniteAttribute`] (naming the vertex).
    pub fn new(
        positions: impl Into<Cow<'a, [Vec3]>>,
        influences: impl Into<Cow<'a, Influences>>,
    ) -> Result<Self, SkinError> {
        count_full_validation();
        let positions = positions.into();
        let influences = influences.into();
        check_attribute("positions", influences.vertex_count(), &positions)?;
        Ok(Self {
            positions,
            normals: None,
            tangents: None,
            influences,
            rotation_centers: None,
            blend: None,
            blocks: LazyBlocks::default(),
        })
    }

    /// The mesh of a checked `input` (no second check), borrowing its arrays.
    #[must_use]
    pub fn from_input(input: &SkinInput<'a>) -> Self {
        Self {
            positions: Cow::Borrowed(input.positions()),
            normals: input.normals().map(Cow::Borrowed),
            tangents: input.tangents().map(Cow::Borrowed),
            influences: Cow::Borrowed(input.influences()),
            rotation_centers: input.rotation_centers().map(Cow::Borrowed),
            blend: input.checked_blend().map(StoredBlend::from_checked),
            blocks: LazyBlocks::default(),
        }
    }

    /// Adds bind-pose normals, one per vertex, each finite. O(vertices) once.
    ///
    /// # Errors
    /// As [`SkinMesh::new`], for `"normals"`.
    pub fn with_normals(mut self, normals: impl Into<Cow<'a, [Vec3]>>) -> Result<Self, SkinError> {
        let normals = normals.into();
        check_attribute("normals", self.vertex_count(), &normals)?;
        self.blocks = LazyBlocks::default();
        self.normals = Some(normals);
        Ok(self)
    }

    /// Adds bind-pose tangents (`w` = handedness), one per vertex, each finite. O(vertices) once.
    ///
    /// # Errors
    /// As [`SkinMesh::new`], for `"tangents"`.
    pub fn with_tangents(
        mut self,
        tangents: impl Into<Cow<'a, [Vec4]>>,
    ) -> Result<Self, SkinError> {
        let tangents = tangents.into();
        check_attribute("tangents", self.vertex_count(), &tangents)?;
        self.tangents = Some(tangents);
        Ok(self)
    }

    /// Adds per-vertex centers of rotation, which [`crate::Method::CenterOfRotation`] needs
    /// (as [`SkinInput::with_rotation_centers`]). O(vertices) once.
    ///
    /// # Errors
    /// As [`SkinInput::with_rotation_centers`].
    pub fn with_rotation_centers(
        mut self,
        centers: impl Into<Cow<'a, [Vec3]>>,
    ) -> Result<Self, SkinError> {
        let centers = centers.into();
        crate::cor::check_rotation_centers(&centers, self.vertex_count())?;
        self.rotation_centers = Some(centers);
        Ok(self)
    }

    /// Adds one blend value per vertex, which [`crate::Method::Blended`] needs (as
    /// [`SkinInput::with_blend_values`]). O(vertices) once.
    ///
    /// # Errors
    /// As [`SkinInput::with_blend_values`].
    pub fn with_blend_values(
        mut self,
        values: impl Into<Cow<'a, [f32]>>,
    ) -> Result<Self, SkinError> {
        self.blend = Some(StoredBlend::new(
            Some(values.into()),
            0.0,
            self.vertex_count(),
        )?);
        Ok(self)
    }

    /// Gives every vertex the blend value `value` under [`crate::Method::Blended`] (0 = LBS,
    /// 1 = DQS).
    ///
    /// # Errors
    /// [`SkinError::InvalidBlendValue`] for NaN or a value outside `[0, 1]`.
    pub fn with_uniform_blend_value(mut self, value: f32) -> Result<Self, SkinError> {
        self.blend = Some(StoredBlend::new(None, value, self.vertex_count())?);
        Ok(self)
    }

    /// Replaces the bind-pose attributes (morph targets applied, for example), keeping the
    /// influences and centers: the new values are checked as by [`SkinMesh::new`],
    /// [`SkinMesh::with_normals`] and [`SkinMesh::with_tangents`] (O(vertices)), and the mesh is
    /// left as it was when one is wrong.
    ///
    /// # Errors
    /// As those three.
    pub fn set_attributes(
        &mut self,
        positions: impl Into<Cow<'a, [Vec3]>>,
        normals: Option<Cow<'a, [Vec3]>>,
        tangents: Option<Cow<'a, [Vec4]>>,
    ) -> Result<(), SkinError> {
        count_full_validation();
        let positions = positions.into();
        let expected = self.vertex_count();
        check_attribute("positions", expected, &positions)?;
        if let Some(normals) = &normals {
            check_attribute("normals", expected, normals)?;
        }
        if let Some(tangents) = &tangents {
            check_attribute("tangents", expected, tangents)?;
        }
        self.blocks = LazyBlocks::default();
        self.positions = positions;
        self.normals = normals;
        self.tangents = tangents;
        Ok(())
    }

    /// The same mesh without normals (and so without their blocks), for a caller that skins
    /// positions only.
    #[must_use]
    pub fn without_normals(mut self) -> Self {
        self.normals = None;
        self.blocks = LazyBlocks::default();
        self
    }

    /// The same mesh without tangents.
    #[must_use]
    pub fn without_tangents(mut self) -> Self {
        self.tangents = None;
        self
    }

    /// A mesh that owns every attribute (copying what it borrowed).
    #[must_use]
    pub fn into_owned(self) -> SkinMesh<'static> {
        SkinMesh {
            positions: Cow::Owned(self.positions.into_owned()),
            normals: self.normals.map(|n| Cow::Owned(n.into_owned())),
            tangents: self.tangents.map(|t| Cow::Owned(t.into_owned())),
            influences: Cow::Owned(self.influences.into_owned()),
            rotation_centers: self.rotation_centers.map(|c| Cow::Owned(c.into_owned())),
            blend: self.blend.map(StoredBlend::into_owned),
            blocks: self.blocks,
        }
    }

    /// The mesh as a [`SkinInput`] (no check; from the second call on, it carries the mesh's
    /// private layout).
    #[must_use]
    pub fn input(&self) -> SkinInput<'_> {
        self.input_with(self.blocks.get(&self.positions, self.normals.as_deref()))
    }

    fn input_with<'s>(&'s self, blocks: Option<&'s VertexBlocks>) -> SkinInput<'s> {
        SkinInput::checked(
            &self.positions,
            self.normals.as_deref(),
            self.tangents.as_deref(),
            &self.influences,
            (
                self.rotation_centers.as_deref(),
                self.blend.as_ref().map(StoredBlend::checked),
            ),
            blocks,
        )
    }

    /// Skins the mesh under a prepared palette into caller-owned buffers, as `run` says:
    /// [`crate::skin_into`] on the mesh, with O(1) checks. Allocates nothing once the mesh has
    /// been skinned twice (the first calls build what its kernels read: see [`SkinMesh`]).
    ///
    /// # Errors
    /// Those of [`crate::skin_into`].
    pub fn skin_into(
        &self,
        palette: &PreparedPalette,
        outputs: SkinOutputs<'_>,
        run: RunOptions,
    ) -> Result<Diagnostics, SkinError> {
        crate::skin::skin_into(&self.input(), palette, outputs, run)
    }

    /// Skins the mesh into new buffers (normals and tangents where the mesh has them).
    ///
    /// # Errors
    /// Those of [`crate::skin_into`].
    pub fn skin(&self, palette: &PreparedPalette, run: RunOptions) -> Result<Skinned, SkinError> {
        let n = self.vertex_count();
        let mut positions = vec![Vec3::ZERO; n];
        let mut normals = self.normals.as_ref().map(|_| vec![Vec3::ZERO; n]);
        let mut tangents = self.tangents.as_ref().map(|_| vec![Vec4::ZERO; n]);
        let outputs = SkinOutputs {
            positions: &mut positions,
            normals: normals.as_deref_mut(),
            tangents: tangents.as_deref_mut(),
        };
        let diagnostics = self.skin_into(palette, outputs, run)?;
        Ok(Skinned {
            positions,
            normals,
            tangents,
            diagnostics,
        })
    }

    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Bind-pose positions.
    #[must_use]
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Bind-pose normals, if any.
    #[must_use]
    pub fn normals(&self) -> Option<&[Vec3]> {
        self.normals.as_deref()
    }

    /// Bind-pose tangents (`w` = handedness), if any.
    #[must_use]
    pub fn tangents(&self) -> Option<&[Vec4]> {
        self.tangents.as_deref()
    }

    /// The influences.
    #[must_use]
    pub fn influences(&self) -> &Influences {
        &self.influences
    }

    /// Per-vertex centers of rotation, if given (NaN where a vertex has none).
    #[must_use]
    pub fn rotation_centers(&self) -> Option<&[Vec3]> {
        self.rotation_centers.as_deref()
    }

    /// The blend values of [`crate::Method::Blended`], if given.
    #[must_use]
    pub fn blend_values(&self) -> Option<crate::BlendValues<'_>> {
        self.blend.as_ref().map(|b| b.checked().values)
    }
}

/// One mesh of a [`skin_batch`] call: what to skin, under which palette, into which buffers;
/// the call writes its diagnostics.
#[derive(Debug)]
pub struct SkinJob<'j> {
    /// The mesh.
    pub mesh: &'j SkinMesh<'j>,
    /// Its palette for this frame, prepared for the method to run.
    pub palette: &'j PreparedPalette,
    /// Caller-owned outputs, one element per vertex.
    pub outputs: SkinOutputs<'j>,
    /// Written by [`skin_batch`]: the exact diagnostics of this mesh, as
    /// [`SkinMesh::skin_into`] would return them.
    pub diagnostics: Diagnostics,
}

impl<'j> SkinJob<'j> {
    /// A job with zeroed diagnostics.
    #[must_use]
    pub fn new(
        mesh: &'j SkinMesh<'j>,
        palette: &'j PreparedPalette,
        outputs: SkinOutputs<'j>,
    ) -> Self {
        Self {
            mesh,
            palette,
            outputs,
            diagnostics: Diagnostics::default(),
        }
    }
}

/// Skins many meshes, each under its own palette, in one call (an engine's crowd): the same
/// bits and diagnostics as [`SkinMesh::skin_into`] on each job alone, on any number of threads.
///
/// Every job is checked first (O(1) each) and nothing is skinned if one is wrong. Then, with the
/// `rayon` feature and `run.parallel`, the jobs are split over the current rayon pool by their
/// vertex counts (halves of about equal work, recursively) and a large mesh also by its
/// vertices, so that one thread or many get even work whether the crowd has a thousand small
/// meshes or a few large ones. Allocates nothing.
///
/// # Errors
/// [`SkinError::BatchJob`] naming the first wrong job, with the error [`SkinMesh::skin_into`]
/// would give.
pub fn skin_batch(jobs: &mut [SkinJob<'_>], run: RunOptions) -> Result<(), SkinError> {
    for (index, job) in jobs.iter().enumerate() {
        check_call(&job.mesh.input_with(None), job.palette, &job.outputs).map_err(|e| {
            SkinError::BatchJob {
                job: index,
                source: Box::new(e),
            }
        })?;
    }
    let total = jobs.iter().map(|j| j.mesh.vertex_count()).sum();
    #[cfg(feature = "rayon")]
    if run.parallel && rayon::current_num_threads() > 1 {
        batch_split(jobs, total, total, run);
        return Ok(());
    }
    // In turn, each job's palette tables asked for while the job before it is skinned.
    let mut rest = jobs;
    while let Some((job, after)) = rest.split_first_mut() {
        if let Some(next) = after.first() {
            crate::simd::prefetch_kernel_tables(next.palette);
        }
        skin_job(job, run, total);
        rest = after;
    }
    Ok(())
}

/// Skins one checked job of a batch of `batch_vertices` vertices.
fn skin_job(job: &mut SkinJob<'_>, run: RunOptions, batch_vertices: usize) {
    let outputs = SkinOutputs {
        positions: &mut *job.outputs.positions,
        normals: job.outputs.normals.as_deref_mut(),
        tangents: job.outputs.tangents.as_deref_mut(),
    };
    let input = job.mesh.input();
    job.diagnostics = skin_checked(&input, job.palette, outputs, run, batch_vertices);
}

/// Refreshes every palette of a frame in one call: `palettes[i].update(skin_matrices[i])`, the
/// palettes split over the current rayon pool (with the `rayon` feature), each the same as
/// updated alone. An engine's crowd prepares all its skins here, then skins them with
/// [`skin_batch`]. Allocates nothing when no palette gains joints.
///
/// # Errors
/// [`SkinError::BatchJob`] naming the first palette (in order) whose matrices are wrong, with
/// [`PreparedPalette::update`]'s error (that palette is cleared, as `update` does; the others
/// are updated); [`SkinError::BatchJob`] with [`SkinError::PaletteLength`] at index
/// `palettes.len()` when the two lists differ in length (nothing updated).
pub fn update_palettes(
    palettes: &mut [PreparedPalette],
    skin_matrices: &[&[glam::Mat4]],
) -> Result<(), SkinError> {
    if palettes.len() != skin_matrices.len() {
        return Err(SkinError::BatchJob {
            job: palettes.len().min(skin_matrices.len()),
            source: Box::new(SkinError::PaletteLength {
                expected: palettes.len(),
                found: skin_matrices.len(),
            }),
        });
    }
    let failed = |(job, result): (usize, Result<(), SkinError>)| {
        result.err().map(|e| SkinError::BatchJob {
            job,
            source: Box::new(e),
        })
    };
    #[cfg(feature = "rayon")]
    let first_error = {
        use rayon::prelude::*;
        palettes
            .par_iter_mut()
            .zip(skin_matrices.par_iter())
            .map(|(palette, matrices)| palette.update(matrices))
            .enumerate()
            .filter_map(failed)
            .find_first(|_| true)
    };
    #[cfg(not(feature = "rayon"))]
    let first_error = palettes
        .iter_mut()
        .zip(skin_matrices)
        .map(|(palette, matrices)| palette.update(matrices))
        .enumerate()
        .filter_map(failed)
        .next();
    first_error.map_or(Ok(()), Err)
}

/// Halves `jobs` (of `vertices` vertices in all) where the vertex counts before and after are
/// closest to equal, and skins the halves with `rayon::join`; a single job splits its vertices
/// as [`crate::skin_into`] does.
#[cfg(feature = "rayon")]
fn batch_split(jobs: &mut [SkinJob<'_>], vertices: usize, batch_vertices: usize, run: RunOptions) {
    if let [job] = jobs {
        skin_job(job, run, batch_vertices);
        return;
    }
    // Take jobs while the first half stays within half the work, then one more where that
    // leaves the halves closer.
    let mut before = 0;
    let mut mid = 0;
    while mid < jobs.len() && 2 * (before + jobs[mid].mesh.vertex_count()) <= vertices {
        before += jobs[mid].mesh.vertex_count();
        mid += 1;
    }
    if mid < jobs.len() {
        let next = before + jobs[mid].mesh.vertex_count();
        if 2 * next - vertices < vertices - 2 * before {
            mid += 1;
        }
    }
    let mid = mid.clamp(1, jobs.len() - 1);
    let before: usize = jobs[..mid].iter().map(|j| j.mesh.vertex_count()).sum();
    let (left, right) = jobs.split_at_mut(mid);
    rayon::join(
        || batch_split(left, before, batch_vertices, run),
        || batch_split(right, vertices - before, batch_vertices, run),
    );
}

/// Influences borrowed by a [`SkinMesh`].
impl<'a> From<&'a Influences> for Cow<'a, Influences> {
    fn from(influences: &'a Influences) -> Self {
        Cow::Borrowed(influences)
    }
}

/// Influences owned by a [`SkinMesh`].
impl From<Influences> for Cow<'_, Influences> {
    fn from(influences: Influences) -> Self {
        Cow::Owned(influences)
    }
}
