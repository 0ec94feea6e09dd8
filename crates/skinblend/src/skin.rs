//! The one entry point for every method: same inputs, same output type.

use glam::{Mat4, Vec3, Vec4};

use crate::palette::{prepare, PreparedPalette, DEFAULT_RIGID_TOLERANCE};
use crate::{Influences, SkinError};

/// How joint motions are blended per vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// Linear blend skinning: the weighted sum of the 3x4 skin matrices. Collapses a joint
    /// twisted towards 180° (the candy wrapper) and shrinks bends.
    #[default]
    Linear,
    /// Dual quaternion skinning (Kavan et al. 2008): the sign-aligned, normalized blend of the
    /// joints' rigid motions, after a linearly blended residual for scale, shear and mirroring.
    /// Keeps a twisted joint round; bulges bends.
    DualQuaternion,
    /// Skinning with optimized centers of rotation (Le & Hodgins 2016): each vertex turns by
    /// the sign-aligned, normalized blend of its joints' rotations `R` about its precomputed
    /// center `p*`, which goes where LBS sends it: `v' = R·S(v) + LBS(p*) − R·S(p*)`, with `S`
    /// the blended residual as in DQS (the identity for rigid joints). Keeps a twisted joint
    /// round without DQS's bulge at a bend. Needs per-vertex centers
    /// ([`SkinInput::with_rotation_centers`], computed by [`crate::cor::rotation_centers`]);
    /// a vertex without one is skinned by DQS.
    CenterOfRotation,
}

impl Method {
    /// Every method, in the order tables and reports show them: LBS, DQS, CoR. The one list of
    /// methods: the CLI, the reports, the GPU and the bindings take theirs from here.
    pub const ALL: [Method; 3] = [
        Method::Linear,
        Method::DualQuaternion,
        Method::CenterOfRotation,
    ];

    /// The short name used in the CLI and JSON: `"linear"`, `"dq"` or `"cor"` (what
    /// [`Method::from_str`](std::str::FromStr) parses and `Display` prints).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Method::Linear => "linear",
            Method::DualQuaternion => "dq",
            Method::CenterOfRotation => "cor",
        }
    }

    /// The names of [`Method::ALL`], in order.
    #[must_use]
    pub fn names() -> [&'static str; 3] {
        Self::ALL.map(Method::name)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Method {
    type Err = SkinError;

    /// Parses a [`Method::name`].
    ///
    /// # Errors
    /// [`SkinError::UnknownMethod`] listing the names there are.
    fn from_str(name: &str) -> Result<Self, SkinError> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| SkinError::UnknownMethod {
                name: name.to_owned(),
            })
    }
}

/// Options shared by every method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinOptions {
    /// The blending method.
    pub method: Method,
    /// Divide each vertex's weights by their sum before blending (default `true`). With `false`
    /// the weights are used as stored (DQS's rigid part normalizes regardless; its residual and
    /// all of LBS do not).
    pub renormalize: bool,
    /// A split residual within this of the identity (per entry) counts as rigid; default
    /// [`DEFAULT_RIGID_TOLERANCE`] (1e-4).
    pub rigid_tolerance: f32,
    /// Split large meshes over the current rayon pool (default `true`, with the `rayon`
    /// feature). Choose the thread count by calling inside `rayon::ThreadPool::install`; `false`
    /// runs on the calling thread only, for engines with their own job systems. The result is
    /// bit-identical either way.
    pub parallel: bool,
    /// Use the SIMD kernels where the CPU has them, detected at run time (default `true`);
    /// `false` forces the scalar reference kernel. SIMD results differ from the scalar ones by
    /// f32 rounding only (fused multiply-adds, another summation order).
    pub simd: bool,
}

impl Default for SkinOptions {
    fn default() -> Self {
        Self {
            method: Method::Linear,
            renormalize: true,
            rigid_tolerance: DEFAULT_RIGID_TOLERANCE,
            parallel: true,
            simd: true,
        }
    }
}

/// Exact counts returned with every skinning result. All zero is the normal case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Diagnostics {
    /// Vertices whose normal matrix (LBS: the blended 3x3; DQS: the blended residual) had a
    /// determinant at noise level, so its inverse transpose does not exist. Their normals took
    /// the cofactor direction (or stayed as input where that is zero). Non-zero under LBS at a
    /// joint twisted to 180°, or with degenerate or mirrored joints; zero under DQS for rigid
    /// palettes. Counted only when normals are skinned.
    pub singular_normal_matrices: usize,
    /// Joints of the palette whose matrix is not a rigid motion within the rigid tolerance:
    /// scale, shear, reflection or degenerate. Under DQS these are carried by the residual.
    pub non_rigid_joints: usize,
    /// Influences (DQS only) whose dual quaternion was negated to agree in sign with the
    /// vertex's pivot (its heaviest influence). Non-zero whenever two joints of a vertex are
    /// stored in opposite hemispheres, which is harmless because it is handled.
    pub sign_flips: usize,
    /// Vertices whose weights sum to zero (or to less than the smallest normal f32, where
    /// renormalizing would overflow): passed through unchanged.
    pub unweighted_vertices: usize,
}

impl Diagnostics {
    /// Adds the per-vertex counts of `other` (used to merge parallel chunks; exact).
    #[cfg(feature = "rayon")]
    fn add_counts(&mut self, other: &Diagnostics) {
        self.singular_normal_matrices += other.singular_normal_matrices;
        self.sign_flips += other.sign_flips;
        self.unweighted_vertices += other.unweighted_vertices;
    }
}

/// A mesh's skinning inputs, validated once and reused every frame.
///
/// Positions and normals are `Vec3`, tangents `Vec4` with `w` the handedness (±1), all in the
/// bind pose (the space the inverse bind matrices map from), one per vertex of `influences`.
#[derive(Debug, Clone, Copy)]
pub struct SkinInput<'a> {
    positions: &'a [Vec3],
    normals: Option<&'a [Vec3]>,
    tangents: Option<&'a [Vec4]>,
    influences: &'a Influences,
    rotation_centers: Option<&'a [Vec3]>,
}

impl<'a> SkinInput<'a> {
    /// Checks lengths against `influences.vertex_count()` and that every value is finite.
    ///
    /// O(vertices) once; allocates nothing.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] and [`SkinError::NonFiniteAttribute`] (naming the vertex).
    pub fn new(
        positions: &'a [Vec3],
        normals: Option<&'a [Vec3]>,
        tangents: Option<&'a [Vec4]>,
        influences: &'a Influences,
    ) -> Result<Self, SkinError> {
        let expected = influences.vertex_count();
        check_length("positions", expected, positions.len())?;
        if let Some(vertex) = positions.iter().position(|p| !p.is_finite()) {
            return Err(SkinError::NonFiniteAttribute {
                attribute: "positions",
                vertex,
            });
        }
        if let Some(normals) = normals {
            check_length("normals", expected, normals.len())?;
            if let Some(vertex) = normals.iter().position(|n| !n.is_finite()) {
                return Err(SkinError::NonFiniteAttribute {
                    attribute: "normals",
                    vertex,
                });
            }
        }
        if let Some(tangents) = tangents {
            check_length("tangents", expected, tangents.len())?;
            if let Some(vertex) = tangents.iter().position(|t| !t.is_finite()) {
                return Err(SkinError::NonFiniteAttribute {
                    attribute: "tangents",
                    vertex,
                });
            }
        }
        Ok(Self {
            positions,
            normals,
            tangents,
            influences,
            rotation_centers: None,
        })
    }

    /// Adds per-vertex centers of rotation, which [`Method::CenterOfRotation`] needs (other
    /// methods ignore them): one per vertex, in the bind-pose space of the positions, each
    /// finite or [`crate::cor::NO_ROTATION_CENTER`] (NaN: no center, skinned by DQS). Usually
    /// [`crate::cor::RotationCenters::centers`]. O(vertices) once; allocates nothing.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] (`"rotation_centers"`) for a count other than the vertex
    /// count, [`SkinError::NonFiniteAttribute`] for a center with an infinity or NaN in only
    /// some components.
    pub fn with_rotation_centers(self, rotation_centers: &'a [Vec3]) -> Result<Self, SkinError> {
        crate::cor::check_rotation_centers(rotation_centers, self.vertex_count())?;
        Ok(Self {
            rotation_centers: Some(rotation_centers),
            ..self
        })
    }

    /// Bind-pose positions.
    #[must_use]
    pub fn positions(&self) -> &'a [Vec3] {
        self.positions
    }

    /// Bind-pose normals, if any.
    #[must_use]
    pub fn normals(&self) -> Option<&'a [Vec3]> {
        self.normals
    }

    /// Bind-pose tangents (`w` = handedness), if any.
    #[must_use]
    pub fn tangents(&self) -> Option<&'a [Vec4]> {
        self.tangents
    }

    /// The influences.
    #[must_use]
    pub fn influences(&self) -> &'a Influences {
        self.influences
    }

    /// Per-vertex centers of rotation, if given (NaN where a vertex has none).
    #[must_use]
    pub fn rotation_centers(&self) -> Option<&'a [Vec3]> {
        self.rotation_centers
    }

    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// Caller-owned output buffers, one element per vertex. `None` skips that attribute.
#[derive(Debug)]
pub struct SkinOutputs<'a> {
    /// Skinned positions.
    pub positions: &'a mut [Vec3],
    /// Skinned unit normals; needs input normals.
    pub normals: Option<&'a mut [Vec3]>,
    /// Skinned unit tangents with handedness (`w` flipped where the transform mirrors); needs
    /// input tangents.
    pub tangents: Option<&'a mut [Vec4]>,
}

impl<'a> SkinOutputs<'a> {
    /// Outputs for positions only.
    #[must_use]
    pub fn positions(positions: &'a mut [Vec3]) -> Self {
        Self {
            positions,
            normals: None,
            tangents: None,
        }
    }

    /// Splits into the outputs of vertices `..mid` and `mid..`.
    #[cfg(feature = "rayon")]
    fn split_at(self, mid: usize) -> (SkinOutputs<'a>, SkinOutputs<'a>) {
        let (p0, p1) = self.positions.split_at_mut(mid);
        let (n0, n1) = match self.normals {
            Some(n) => {
                let (a, b) = n.split_at_mut(mid);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        let (t0, t1) = match self.tangents {
            Some(t) => {
                let (a, b) = t.split_at_mut(mid);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        (
            SkinOutputs {
                positions: p0,
                normals: n0,
                tangents: t0,
            },
            SkinOutputs {
                positions: p1,
                normals: n1,
                tangents: t1,
            },
        )
    }
}

/// A skinning result that owns its buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct Skinned {
    /// Skinned positions.
    pub positions: Vec<Vec3>,
    /// Skinned unit normals, when the input had normals.
    pub normals: Option<Vec<Vec3>>,
    /// Skinned tangents, when the input had tangents.
    pub tangents: Option<Vec<Vec4>>,
    /// Exact counts of what happened (see [`Diagnostics`]).
    pub diagnostics: Diagnostics,
}

/// Skins `input` under `palette` with `options.method`, allocating the result.
///
/// `palette[j]` is joint `j`'s skin matrix `world_from_joint · joint_from_bind`;
/// `joint_centers` are the joints' bind-pose origins for the DQS residual (`None`: the origin).
/// Normals and tangents are skinned when the input has them. Convenience over [`prepare`] and
/// [`skin_into`], which reuse their buffers.
///
/// # Errors
/// Those of [`prepare`] and [`skin_into`].
pub fn skin(
    input: &SkinInput<'_>,
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
    options: &SkinOptions,
) -> Result<Skinned, SkinError> {
    let prepared = prepare(palette, joint_centers, options)?;
    let n = input.vertex_count();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = input.normals.map(|_| vec![Vec3::ZERO; n]);
    let mut tangents = input.tangents.map(|_| vec![Vec4::ZERO; n]);
    let outputs = SkinOutputs {
        positions: &mut positions,
        normals: normals.as_deref_mut(),
        tangents: tangents.as_deref_mut(),
    };
    let diagnostics = skin_into(input, &prepared, outputs)?;
    Ok(Skinned {
        positions,
        normals,
        tangents,
        diagnostics,
    })
}

/// Below this many vertices a call runs on the calling thread only. On the two-core, shared
/// development host, splitting 10,000 vertices over two threads measured 0.95–1.19× one thread
/// (`tools/ozz-compare/compare.sh`, docs/bench.md): a wake-up and a join cost about as much as
/// the half they save, so meshes that small stay on one thread and are never slower for it.
const PARALLEL_MIN_VERTICES: usize = 16_384;

/// Parallel pieces per pool thread: more than one lets a thread that finishes early take work
/// from one that was descheduled, on a machine shared with other work.
const PARALLEL_PIECES_PER_THREAD: usize = 2;

/// Skins `input` under a prepared palette into caller-owned buffers. Allocates nothing.
///
/// Checks lengths in O(1): every output must have one element per vertex, and the palette must
/// cover the influences' joints. With the default `rayon` feature, meshes of 16,384 vertices and
/// more are split over the current rayon pool, two pieces per thread (run inside
/// `ThreadPool::install` to choose the thread count, one included); the result is bit-identical
/// to the serial one because every vertex is computed the same way whichever thread runs it.
///
/// # Errors
/// [`SkinError::AttributeLength`] for an output of the wrong length,
/// [`SkinError::MissingInputAttribute`] for an output the input cannot fill, and
/// [`SkinError::PaletteLength`] for a palette with fewer joints than the influences address,
/// and [`SkinError::MissingRotationCenters`] for [`Method::CenterOfRotation`] on an input
/// without centers.
pub fn skin_into(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: SkinOutputs<'_>,
) -> Result<Diagnostics, SkinError> {
    let n = input.vertex_count();
    check_length("output positions", n, outputs.positions.len())?;
    if let Some(normals) = outputs.normals.as_deref() {
        if input.normals.is_none() {
            return Err(SkinError::MissingInputAttribute {
                attribute: "normals",
            });
        }
        check_length("output normals", n, normals.len())?;
    }
    if let Some(tangents) = outputs.tangents.as_deref() {
        if input.tangents.is_none() {
            return Err(SkinError::MissingInputAttribute {
                attribute: "tangents",
            });
        }
        check_length("output tangents", n, tangents.len())?;
    }
    if palette.options().method == Method::CenterOfRotation && input.rotation_centers.is_none() {
        return Err(SkinError::MissingRotationCenters { vertex_count: n });
    }
    let joint_count = input.influences.joint_count();
    if palette.joint_count() < joint_count {
        return Err(SkinError::PaletteLength {
            expected: joint_count,
            found: palette.joint_count(),
        });
    }
    // The kernel is chosen once per call: every piece of a parallel split runs the same one.
    let kernel = palette
        .options()
        .simd
        .then(|| crate::simd::select(input, palette, &outputs))
        .flatten()
        .unwrap_or(crate::kernels::skin_range);
    let mut diagnostics = skin_parallel(input, palette, kernel, outputs);
    diagnostics.non_rigid_joints = palette.non_rigid_joints();
    Ok(diagnostics)
}

/// Skins the whole range with `kernel`, split over the rayon pool where the palette allows it
/// and the mesh is large enough.
fn skin_parallel(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    kernel: crate::simd::Kernel,
    outputs: SkinOutputs<'_>,
) -> Diagnostics {
    #[cfg(feature = "rayon")]
    {
        let count = outputs.positions.len();
        let threads = rayon::current_num_threads();
        if palette.options().parallel && count >= PARALLEL_MIN_VERTICES && threads > 1 {
            let pieces = threads * PARALLEL_PIECES_PER_THREAD;
            let piece_vertices = count.div_ceil(pieces);
            return skin_split(input, palette, kernel, 0, outputs, piece_vertices);
        }
    }
    #[cfg(not(feature = "rayon"))]
    let _ = (PARALLEL_MIN_VERTICES, PARALLEL_PIECES_PER_THREAD);
    kernel(input, palette, 0, outputs)
}

/// Halves the range at a multiple of the SIMD block size until its pieces have at most
/// `piece_vertices` vertices, skinning the halves with `rayon::join`. Every vertex lands in the
/// same eight-vertex block as in the serial call (blocks start at multiples of eight), so the
/// result is bit-identical to the serial one whatever the thread count.
#[cfg(feature = "rayon")]
fn skin_split(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    kernel: crate::simd::Kernel,
    first_vertex: usize,
    outputs: SkinOutputs<'_>,
    piece_vertices: usize,
) -> Diagnostics {
    let count = outputs.positions.len();
    let block = crate::simd::BLOCK_VERTICES;
    let mid = (count / 2).div_ceil(block) * block;
    if count <= piece_vertices || mid == 0 || mid >= count {
        return kernel(input, palette, first_vertex, outputs);
    }
    let (low, high) = outputs.split_at(mid);
    let (mut a, b) = rayon::join(
        || skin_split(input, palette, kernel, first_vertex, low, piece_vertices),
        || {
            skin_split(
                input,
                palette,
                kernel,
                first_vertex + mid,
                high,
                piece_vertices,
            )
        },
    );
    a.add_counts(&b);
    a
}

fn check_length(attribute: &'static str, expected: usize, found: usize) -> Result<(), SkinError> {
    if expected != found {
        return Err(SkinError::AttributeLength {
            attribute,
            expected,
            found,
        });
    }
    Ok(())
}
