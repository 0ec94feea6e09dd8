//! The vocabulary every part of skinning shares: the [`Method`], what a palette is built for
//! ([`PaletteSpec`]), how a call runs ([`RunOptions`]), the outputs and [`Diagnostics`].
//!
//! The driver (`skin.rs`), the palette (`palette.rs`), the inputs (`input.rs`), the scalar
//! reference (`reference.rs`) and the SIMD kernels (`simd/`) all depend on this module, and it
//! on none of them: `Method`'s `FromStr` lives in `error.rs`, beside the error it returns.

use glam::{Vec3, Vec4};

/// Default tolerance below which a residual counts as the identity and its joint as rigid.
///
/// Well above f32 round-off of a rotation matrix built from a quaternion (about 1e-7 per entry),
/// well below any scale or shear an artist means.
pub const DEFAULT_RIGID_TOLERANCE: f32 = 1e-4;

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
    /// ([`crate::SkinInput::with_rotation_centers`], computed by
    /// [`crate::cor::rotation_centers`]);
    /// a vertex without one is skinned by DQS.
    CenterOfRotation,
    /// The per-vertex blend of LBS and DQS results (Maya's "weight blended", Houdini's Bone
    /// Deform with a blend attribute): `v' = (1 − b)·LBS(v) + b·DQS(v)` for the vertex's blend
    /// value `b` in `[0, 1]` (0 = LBS, 1 = DQS; [`crate::SkinInput::with_blend_values`]).
    /// Normals and tangent directions blend the two methods' unit results and are
    /// renormalized; a tangent's handedness is LBS's where `b < 0.5`, else DQS's. A vertex at
    /// 0 is LBS's and at 1 DQS's to the bit, diagnostics included; between, both blends'
    /// decisions are counted. Artists paint DQS where joints twist and keep LBS where DQS
    /// bulges.
    Blended,
}

impl Method {
    /// Every method, in the order tables and reports show them: LBS, DQS, CoR, blended. The one
    /// list of methods: the CLI, the reports, the GPU and the bindings take theirs from here.
    pub const ALL: [Method; 4] = [
        Method::Linear,
        Method::DualQuaternion,
        Method::CenterOfRotation,
        Method::Blended,
    ];

    /// The short name used in the CLI and JSON: `"linear"`, `"dq"`, `"cor"` or `"blended"` (what
    /// [`Method::from_str`](std::str::FromStr) parses and `Display` prints).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Method::Linear => "linear",
            Method::DualQuaternion => "dq",
            Method::CenterOfRotation => "cor",
            Method::Blended => "blended",
        }
    }

    /// The label pictures, tables and plots show: `"LBS"`, `"DQS"`, `"CoR"` or `"Blend"`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Method::Linear => "LBS",
            Method::DualQuaternion => "DQS",
            Method::CenterOfRotation => "CoR",
            Method::Blended => "Blend",
        }
    }

    /// The names of [`Method::ALL`], in order.
    #[must_use]
    pub fn names() -> [&'static str; 4] {
        Self::ALL.map(Method::name)
    }

    /// Whether a palette prepared for this method holds each joint's skin matrix as a 3x4 map
    /// (LBS and blended blend them; CoR places each vertex's center with them).
    #[must_use]
    pub fn uses_skin_matrices(self) -> bool {
        match self {
            Method::Linear | Method::CenterOfRotation | Method::Blended => true,
            Method::DualQuaternion => false,
        }
    }

    /// Whether a palette prepared for this method holds each joint's rigid/residual split (a
    /// dual quaternion, a residual map and a rigid flag): DQS, CoR and blended blend them, LBS
    /// does not.
    #[must_use]
    pub fn uses_rigid_split(self) -> bool {
        match self {
            Method::DualQuaternion | Method::CenterOfRotation | Method::Blended => true,
            Method::Linear => false,
        }
    }

    /// The per-vertex input a mesh skinned by this method needs beyond positions, normals,
    /// tangents and influences: CoR's centers of rotation, blended's blend values; `None` for
    /// LBS and DQS. Every front door asks this (not the method) what to load, upload or check.
    #[must_use]
    pub fn vertex_input(self) -> Option<VertexInput> {
        match self {
            Method::Linear | Method::DualQuaternion => None,
            Method::CenterOfRotation => Some(VertexInput::RotationCenters),
            Method::Blended => Some(VertexInput::BlendValues),
        }
    }

    /// Whether a mesh skinned by this method needs per-vertex centers of rotation
    /// ([`crate::SkinInput::with_rotation_centers`]): CoR.
    #[must_use]
    pub fn needs_rotation_centers(self) -> bool {
        self.vertex_input() == Some(VertexInput::RotationCenters)
    }

    /// Whether a mesh skinned by this method needs blend values
    /// ([`crate::SkinInput::with_blend_values`]): blended.
    #[must_use]
    pub fn needs_blend_values(self) -> bool {
        self.vertex_input() == Some(VertexInput::BlendValues)
    }
}

/// A per-vertex input a method reads beyond positions, normals, tangents and influences
/// ([`Method::vertex_input`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VertexInput {
    /// Centers of rotation, one per vertex ([`crate::SkinInput::with_rotation_centers`]; glTF
    /// `_SKINBLEND_COR`).
    RotationCenters,
    /// Blend values in `[0, 1]`, one per vertex or one for the mesh
    /// ([`crate::SkinInput::with_blend_values`]; glTF `_SKINBLEND_DQ_BLEND`).
    BlendValues,
}

impl VertexInput {
    /// Every per-vertex input.
    pub const ALL: [VertexInput; 2] = [VertexInput::RotationCenters, VertexInput::BlendValues];

    /// Its name in messages: `"rotation centers"`, `"blend values"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            VertexInput::RotationCenters => "rotation centers",
            VertexInput::BlendValues => "blend values",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A method as a command-line value (with the `clap` feature: `--method linear|dq|cor|blended`): the
/// values are the [`Method::name`]s, in [`Method::ALL`]'s order, with no help text of their own.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Method {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// What a palette is prepared for: the method, and the tolerance that decides which joints are
/// rigid. [`crate::prepare`] builds exactly what this method blends and nothing else.
///
/// `PaletteSpec::from(method)` takes the default tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaletteSpec {
    /// The blending method.
    pub method: Method,
    /// A joint whose matrix is a rigid motion within this (per entry of its Gram–Schmidt
    /// factor) counts as rigid, and under DQS and CoR its residual is skipped; default
    /// [`DEFAULT_RIGID_TOLERANCE`] (1e-4).
    pub rigid_tolerance: f32,
}

impl Default for PaletteSpec {
    fn default() -> Self {
        Self::from(Method::default())
    }
}

impl From<Method> for PaletteSpec {
    fn from(method: Method) -> Self {
        Self {
            method,
            rigid_tolerance: DEFAULT_RIGID_TOLERANCE,
        }
    }
}

/// How one skinning call runs: options of the call ([`crate::skin_into`],
/// [`crate::SkinBackend::skin_mesh`]), not of the palette, so one prepared palette serves any
/// of them. The default renormalizes and uses SIMD and the rayon pool where there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunOptions {
    /// Divide each vertex's weights by their sum before blending (default `true`). With `false`
    /// the weights are used as stored (DQS's rigid part normalizes regardless; its residual and
    /// all of LBS do not). The SIMD kernels skip the division where every vertex's sum is
    /// already within 2⁻²⁰ of 1 (weights divided by their sum in f32 sum to 1 within a few
    /// ulps), which moves a position by at most 2⁻²⁰ of its length.
    pub renormalize: bool,
    /// Split large meshes over the current rayon pool (default `true`, with the `rayon`
    /// feature). Choose the thread count by calling inside `rayon::ThreadPool::install`; `false`
    /// runs on the calling thread only, for engines with their own job systems. The result is
    /// bit-identical either way. CPU only; a GPU ignores it.
    pub parallel: bool,
    /// Use the SIMD kernels where the CPU has them, detected at run time (default `true`);
    /// `false` forces the scalar reference kernel. SIMD results differ from the scalar ones by
    /// f32 rounding only (fused multiply-adds, another summation order). CPU only; a GPU
    /// ignores it.
    pub simd: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            renormalize: true,
            parallel: true,
            simd: true,
        }
    }
}

/// Both halves in one value, for the one-call [`crate::skin()`] and for callers that configure a
/// whole run in one place: [`SkinOptions::palette_spec`] is what [`crate::prepare`] builds,
/// [`SkinOptions::run_options`] how each call runs. `&SkinOptions` converts into a
/// [`PaletteSpec`], so it can be passed to [`crate::prepare`] as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinOptions {
    /// The blending method ([`PaletteSpec::method`]).
    pub method: Method,
    /// [`RunOptions::renormalize`].
    pub renormalize: bool,
    /// [`PaletteSpec::rigid_tolerance`].
    pub rigid_tolerance: f32,
    /// [`RunOptions::parallel`].
    pub parallel: bool,
    /// [`RunOptions::simd`].
    pub simd: bool,
}

impl SkinOptions {
    /// What a palette is prepared for: the method and rigid tolerance.
    #[must_use]
    pub fn palette_spec(&self) -> PaletteSpec {
        PaletteSpec {
            method: self.method,
            rigid_tolerance: self.rigid_tolerance,
        }
    }

    /// How each call runs: renormalization, threads and SIMD.
    #[must_use]
    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            renormalize: self.renormalize,
            parallel: self.parallel,
            simd: self.simd,
        }
    }
}

impl Default for SkinOptions {
    fn default() -> Self {
        let spec = PaletteSpec::default();
        let run = RunOptions::default();
        Self {
            method: spec.method,
            renormalize: run.renormalize,
            rigid_tolerance: spec.rigid_tolerance,
            parallel: run.parallel,
            simd: run.simd,
        }
    }
}

impl From<&SkinOptions> for PaletteSpec {
    fn from(options: &SkinOptions) -> Self {
        options.palette_spec()
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
    /// Adds the per-vertex counts of `other` (all but `non_rigid_joints`, the palette's).
    pub(crate) fn add(&mut self, other: &Diagnostics) {
        self.singular_normal_matrices += other.singular_normal_matrices;
        self.sign_flips += other.sign_flips;
        self.unweighted_vertices += other.unweighted_vertices;
    }
}

/// The counts of one vertex range of a call (a piece of a parallel call, or all of it), each
/// exact: what the range's kernels counted, and what of the call's sign-flip tally they counted
/// again. Pieces add up with [`RangeCounts::add`]; the call's [`Diagnostics`] are their sum
/// with the tally, [`RangeCounts::into_diagnostics`] (`simd/flips.rs` has the accounting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RangeCounts {
    /// The counts of the vertices the range's kernels counted themselves (every count of the
    /// scalar kernel; the SIMD kernels' but the sign flips the call's tally holds).
    pub(crate) counted: Diagnostics,
    /// The sign flips the call's tally holds for vertices of this range that went to the
    /// scalar kernel, which counted them again in `counted` (0 where the call has no tally).
    pub(crate) tallied_flips_recounted: usize,
}

impl RangeCounts {
    /// Adds the counts of `other`, another range of the same call.
    #[cfg(feature = "rayon")]
    pub(crate) fn add(&mut self, other: &RangeCounts) {
        self.counted.add(&other.counted);
        self.tallied_flips_recounted += other.tallied_flips_recounted;
    }

    /// The call's counts, these being its whole range's: what the kernels counted, and of the
    /// call's tally (`tallied_flips`, 0 without one) the flips no kernel counted again. The
    /// recounted flips are a part of the tally (the same vertices, under the same table), so
    /// the subtraction is exact.
    pub(crate) fn into_diagnostics(self, tallied_flips: usize) -> Diagnostics {
        let mut diagnostics = self.counted;
        diagnostics.sign_flips += tallied_flips - self.tallied_flips_recounted;
        diagnostics
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
    pub(crate) fn split_at(self, mid: usize) -> (SkinOutputs<'a>, SkinOutputs<'a>) {
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
