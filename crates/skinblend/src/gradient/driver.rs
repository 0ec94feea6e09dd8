//! The batched passes: checks, the palette's joints once per batch element, and the vertex
//! chunks over the rayon pool (each chunk owns its accumulators; summed in a fixed order).

use super::joints::{split, split_backward, JointParts, G_MATRIX, JOINT_GRADS};
use super::lanes::{self, GroupSink, LANES};
use super::normal;
use super::real::{identity_m34, Real, M34};
use super::vertex::{self, Sink, Vertex};
use super::GradientError;
use crate::types::Method;

/// One batched skinning problem (see the module's conventions for the layouts).
#[derive(Debug, Clone, Copy)]
pub struct Rig<'a, T> {
    /// The method.
    pub method: Method,
    /// `P × J × 4 × 4`.
    pub palettes: &'a [T],
    /// `P`: 1 or the batch size.
    pub palette_batch: usize,
    /// `J`.
    pub joint_count: usize,
    /// `V × N × 3`.
    pub vertices: &'a [T],
    /// `V`: 1 or the batch size.
    pub vertex_batch: usize,
    /// `N`.
    pub vertex_count: usize,
    /// `N × K` joint indices.
    pub joints: &'a [u16],
    /// `K`.
    pub influences: usize,
    /// `W × N × K`.
    pub weights: &'a [T],
    /// `W`: 1 or the batch size.
    pub weight_batch: usize,
    /// `J × 3`: each joint's bind origin, about which DQS's residual acts (`None`: the origin).
    pub bind_origins: Option<&'a [T]>,
    /// `N × 3`: CoR's centers of rotation (a non-finite row: that vertex is skinned by DQS).
    pub centers: Option<&'a [T]>,
    /// `N`: blended's blend values, each in `[0, 1]` (needed by [`Method::Blended`]; held
    /// fixed).
    pub blend_values: Option<&'a [T]>,
    /// The rigid tolerance of the split (the library's default is 1e-4).
    pub rigid_tolerance: f32,
}

/// Where [`backward`] writes each gradient (`None`: not wanted), shaped as its input.
#[derive(Debug, Default)]
pub struct Gradients<'a, T> {
    /// `P × J × 4 × 4`.
    pub palettes: Option<&'a mut [T]>,
    /// `V × N × 3`.
    pub vertices: Option<&'a mut [T]>,
    /// `W × N × K`.
    pub weights: Option<&'a mut [T]>,
}

fn expect_len(
    argument: &'static str,
    len: usize,
    want: usize,
    shape: &str,
) -> Result<(), GradientError> {
    if len != want {
        return Err(GradientError::new(
            argument,
            format!("expected {want} values ({shape}), got {len}"),
        ));
    }
    Ok(())
}

fn check_finite<T: Real>(
    argument: &'static str,
    values: &[T],
    per: usize,
    what: &str,
) -> Result<(), GradientError> {
    match values.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(i) => Err(GradientError::new(
            argument,
            format!("{what} {} has a value that is NaN or infinite", i / per),
        )),
    }
}

impl<T: Real> Rig<'_, T> {
    /// Checks the rig and returns the batch size.
    ///
    /// # Errors
    /// A [`GradientError`] naming the argument: lengths, batch sizes, joint indices, negative or
    /// non-finite weights, non-finite palettes, vertices or bind origins, the tolerance.
    pub fn check(&self) -> Result<usize, GradientError> {
        let batch = self
            .palette_batch
            .max(self.vertex_batch)
            .max(self.weight_batch);
        for (argument, b) in [
            ("palette", self.palette_batch),
            ("vertices", self.vertex_batch),
            ("weights", self.weight_batch),
        ] {
            if b != 1 && b != batch {
                return Err(GradientError::new(
                    argument,
                    format!("batch of {b} does not broadcast with a batch of {batch}"),
                ));
            }
        }
        let (j, n, k) = (self.joint_count, self.vertex_count, self.influences);
        if j == 0 || j > 65536 {
            return Err(GradientError::new(
                "palette",
                format!("expected 1 to 65536 joints, got {j}"),
            ));
        }
        expect_len(
            "palette",
            self.palettes.len(),
            self.palette_batch * j * 16,
            "(..., J, 4, 4)",
        )?;
        expect_len(
            "vertices",
            self.vertices.len(),
            self.vertex_batch * n * 3,
            "(..., N, 3)",
        )?;
        expect_len("joints", self.joints.len(), n * k, "(N, K)")?;
        expect_len(
            "weights",
            self.weights.len(),
            self.weight_batch * n * k,
            "(..., N, K)",
        )?;
        if let Some(origins) = self.bind_origins {
            expect_len("bind_origins", origins.len(), j * 3, "(J, 3)")?;
            check_finite("bind_origins", origins, 3, "joint")?;
        }
        if let Some(centers) = self.centers {
            expect_len("centers", centers.len(), n * 3, "(N, 3)")?;
        }
        match self.blend_values {
            Some(values) => {
                expect_len("blend_values", values.len(), n, "(N,)")?;
                if let Some(v) = values.iter().position(|&b| !(b >= T::ZERO && b <= T::ONE)) {
                    return Err(GradientError::new(
                        "blend_values",
                        format!("vertex {v}: a blend value is NaN or outside [0, 1]"),
                    ));
                }
            }
            None if self.method == Method::Blended => {
                return Err(GradientError::new(
                    "blend_values",
                    "the blended method needs one blend value per vertex (0 = LBS, 1 = DQS)"
                        .to_owned(),
                ));
            }
            None => {}
        }
        if !(self.rigid_tolerance.is_finite() && self.rigid_tolerance >= 0.0) {
            return Err(GradientError::new(
                "rigid_tolerance",
                "expected a finite value of at least 0",
            ));
        }
        if let Some(i) = self.joints.iter().position(|&x| usize::from(x) >= j) {
            return Err(GradientError::new(
                "joints",
                format!(
                    "vertex {} slot {}: joint {} is not below the joint count {j}",
                    i / k,
                    i % k,
                    self.joints[i]
                ),
            ));
        }
        if let Some(i) = self
            .weights
            .iter()
            .position(|&w| !(w.is_finite() && w >= T::ZERO))
        {
            return Err(GradientError::new(
                "weights",
                format!(
                    "vertex {} slot {}: {:?} is negative, NaN or infinite",
                    (i / k) % n.max(1),
                    i % k,
                    self.weights[i]
                ),
            ));
        }
        check_finite("palette", self.palettes, 16, "matrix")?;
        check_finite("vertices", self.vertices, 3, "vertex")?;
        Ok(batch)
    }

    /// The joints of palette batch element `p`, split where the method reads the split.
    fn joint_parts(&self, p: usize) -> Vec<JointParts<T>> {
        let tolerance = T::of(self.rigid_tolerance);
        (0..self.joint_count)
            .map(|j| {
                let m = self.matrix(p, j);
                if self.method == Method::Linear {
                    JointParts {
                        m,
                        real: [T::ZERO, T::ZERO, T::ZERO, T::ONE],
                        dual: [T::ZERO; 4],
                        translation: [T::ZERO; 3],
                        residual: identity_m34(),
                        rigid: true,
                    }
                } else {
                    split(&m, self.origin(j), tolerance)
                }
            })
            .collect()
    }

    fn matrix(&self, p: usize, j: usize) -> M34<T> {
        let at = (p * self.joint_count + j) * 16;
        std::array::from_fn(|r| std::array::from_fn(|c| self.palettes[at + r * 4 + c]))
    }

    fn origin(&self, j: usize) -> [T; 3] {
        self.bind_origins
            .map_or([T::ZERO; 3], |o| [o[j * 3], o[j * 3 + 1], o[j * 3 + 2]])
    }

    fn vertex(&self, b: usize, i: usize) -> Vertex<'_, T> {
        let (n, k) = (self.vertex_count, self.influences);
        let vb = if self.vertex_batch == 1 { 0 } else { b };
        let wb = if self.weight_batch == 1 { 0 } else { b };
        let at = (vb * n + i) * 3;
        let w_at = (wb * n + i) * k;
        Vertex {
            p: [
                self.vertices[at],
                self.vertices[at + 1],
                self.vertices[at + 2],
            ],
            joints: &self.joints[i * k..(i + 1) * k],
            weights: &self.weights[w_at..w_at + k],
            center: self.centers.map(|c| [c[i * 3], c[i * 3 + 1], c[i * 3 + 2]]),
            blend: self.blend_values.map_or(T::ZERO, |b| b[i]),
        }
    }

    /// The `LANES` vertices from `first` of batch element `b`, for the lane kernels.
    fn group(&self, b: usize, first: usize) -> lanes::Group<'_, T> {
        let (n, k) = (self.vertex_count, self.influences);
        let vb = if self.vertex_batch == 1 { 0 } else { b };
        let wb = if self.weight_batch == 1 { 0 } else { b };
        let (at, w_at) = ((vb * n + first) * 3, (wb * n + first) * k);
        lanes::Group {
            points: &self.vertices[at..at + LANES * 3],
            joints: &self.joints[first * k..(first + LANES) * k],
            weights: &self.weights[w_at..w_at + LANES * k],
            k,
        }
    }

    /// Vertex chunks: at most four per thread, at least 256 vertices each.
    fn chunk_len(&self) -> usize {
        let pieces = 4 * threads();
        self.vertex_count.div_ceil(pieces).max(256)
    }
}

fn threads() -> usize {
    #[cfg(feature = "rayon")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "rayon"))]
    return 1;
}

/// Runs `f` on each item, on the rayon pool where there is one, and returns the results in order.
fn map_items<I: Send, R: Send>(items: Vec<I>, f: impl Fn(I) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        items.into_par_iter().map(f).collect()
    }
    #[cfg(not(feature = "rayon"))]
    {
        items.into_iter().map(f).collect()
    }
}

/// What a pass skins: the rig's `vertices` as positions, or as normals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skinned {
    Positions,
    Normals,
}

impl Skinned {
    #[inline(always)]
    fn forward<T: Real>(
        self,
        method: Method,
        joints: &[JointParts<T>],
        v: &Vertex<'_, T>,
    ) -> [T; 3] {
        match self {
            Self::Positions => vertex::forward(method, joints, v),
            Self::Normals => normal::forward(method, joints, v),
        }
    }

    #[inline(always)]
    fn backward<T: Real>(
        self,
        method: Method,
        joints: &[JointParts<T>],
        v: &Vertex<'_, T>,
        g: [T; 3],
        sink: Sink<'_, T>,
    ) {
        match self {
            Self::Positions => vertex::backward(method, joints, v, g, sink),
            Self::Normals => normal::backward(method, joints, v, g, sink),
        }
    }
}

/// Skins every batch element: `out` is `B × N × 3`, `B` the batch size.
///
/// # Errors
/// [`Rig::check`]'s, and `out`'s length.
pub fn forward<T: Real>(rig: &Rig<'_, T>, out: &mut [T]) -> Result<(), GradientError> {
    forward_of(rig, Skinned::Positions, out)
}

/// Skins normals as the library does (`reference.rs`: each method's normal matrix, then
/// renormalized, the input normal kept where the result has no length): `rig.vertices` holds
/// the normals (`V × N × 3`, batched as vertices are), `out` is `B × N × 3`. CoR's normals are
/// DQS's (the centers move positions only).
///
/// # Errors
/// [`Rig::check`]'s, and `out`'s length.
pub fn forward_normals<T: Real>(rig: &Rig<'_, T>, out: &mut [T]) -> Result<(), GradientError> {
    forward_of(rig, Skinned::Normals, out)
}

fn forward_of<T: Real>(
    rig: &Rig<'_, T>,
    skinned: Skinned,
    out: &mut [T],
) -> Result<(), GradientError> {
    let batch = rig.check()?;
    let n = rig.vertex_count;
    expect_len("out", out.len(), batch * n * 3, "(..., N, 3)")?;
    let parts: Vec<Vec<JointParts<T>>> =
        map_items((0..rig.palette_batch).collect(), |p| rig.joint_parts(p));
    let chunk = rig.chunk_len();
    let items: Vec<(usize, usize, &mut [T])> = out
        .chunks_mut(n * 3)
        .enumerate()
        .flat_map(|(b, rows)| {
            rows.chunks_mut(chunk * 3)
                .enumerate()
                .map(move |(c, piece)| (b, c * chunk, piece))
        })
        .collect();
    map_items(items, |(b, first, piece)| {
        let joints = &parts[if rig.palette_batch == 1 { 0 } else { b }];
        let scalar = |i: usize, row: &mut [T]| {
            row.copy_from_slice(&skinned.forward(rig.method, joints, &rig.vertex(b, first + i)));
        };
        // Whole groups to the lane kernel where it applies (a group it declines, to the
        // scalar one), the rest vertex by vertex.
        let mut grouped = 0;
        if lanes::applies(rig.method, joints, rig.influences) {
            grouped = piece.len() / 3 / LANES * LANES;
            for (g, rows) in piece[..grouped * 3].chunks_exact_mut(LANES * 3).enumerate() {
                let i = g * LANES;
                let normals = skinned == Skinned::Normals;
                if !lanes::forward(joints, &rig.group(b, first + i), normals, rows) {
                    for (o, row) in rows.chunks_exact_mut(3).enumerate() {
                        scalar(i + o, row);
                    }
                }
            }
        }
        for (o, row) in piece[grouped * 3..].chunks_exact_mut(3).enumerate() {
            scalar(grouped + o, row);
        }
    });
    Ok(())
}

/// The gradients of `Σ grad_out · forward(rig)` (`grad_out` is `B × N × 3`), written into
/// `grads` (each overwritten whole).
///
/// # Errors
/// [`Rig::check`]'s, and the lengths of `grad_out` and of each gradient.
pub fn backward<T: Real>(
    rig: &Rig<'_, T>,
    grad_out: &[T],
    grads: Gradients<'_, T>,
) -> Result<(), GradientError> {
    backward_of(rig, Skinned::Positions, grad_out, grads)
}

/// The gradients of `Σ grad_out · forward_normals(rig)`, as [`backward`] (`grads.vertices`
/// receives the normals' gradient).
///
/// # Errors
/// As [`backward`].
pub fn backward_normals<T: Real>(
    rig: &Rig<'_, T>,
    grad_out: &[T],
    grads: Gradients<'_, T>,
) -> Result<(), GradientError> {
    backward_of(rig, Skinned::Normals, grad_out, grads)
}

fn backward_of<T: Real>(
    rig: &Rig<'_, T>,
    skinned: Skinned,
    grad_out: &[T],
    grads: Gradients<'_, T>,
) -> Result<(), GradientError> {
    let batch = rig.check()?;
    let (n, k, j) = (rig.vertex_count, rig.influences, rig.joint_count);
    expect_len("grad_out", grad_out.len(), batch * n * 3, "(..., N, 3)")?;
    check_finite("grad_out", grad_out, 3, "row")?;
    if let Some(g) = &grads.palettes {
        expect_len("grad palette", g.len(), rig.palettes.len(), "as palette")?;
    }
    if let Some(g) = &grads.vertices {
        expect_len("grad vertices", g.len(), rig.vertices.len(), "as vertices")?;
    }
    if let Some(g) = &grads.weights {
        expect_len("grad weights", g.len(), rig.weights.len(), "as weights")?;
    }
    let parts: Vec<Vec<JointParts<T>>> =
        map_items((0..rig.palette_batch).collect(), |p| rig.joint_parts(p));
    let chunk = rig.chunk_len();
    let starts: Vec<usize> = (0..n).step_by(chunk.max(1)).collect();
    let want_palette = grads.palettes.is_some();
    let want_weights = grads.weights.is_some();
    // Per chunk: the joints' accumulators, and its vertices' and weights' gradients (V × len × 3,
    // W × len × K), copied into place after.
    let pieces = map_items(starts.clone(), |first| {
        let len = chunk.min(n - first);
        let mut acc = vec![
            T::ZERO;
            if want_palette {
                rig.palette_batch * j * JOINT_GRADS
            } else {
                j * JOINT_GRADS
            }
        ];
        let mut gv = vec![T::ZERO; rig.vertex_batch * len * 3];
        let mut gw = vec![
            T::ZERO;
            if want_weights {
                rig.weight_batch * len * k
            } else {
                0
            }
        ];
        for b in 0..batch {
            let pb = if rig.palette_batch == 1 { 0 } else { b };
            let joints = &parts[pb];
            let vb = if rig.vertex_batch == 1 { 0 } else { b };
            let wb = if rig.weight_batch == 1 { 0 } else { b };
            let acc_at = if want_palette {
                pb * j * JOINT_GRADS
            } else {
                0
            };
            let acc = &mut acc[acc_at..acc_at + j * JOINT_GRADS];
            let scalar = |i: usize, gv: &mut [T], gw: &mut [T], acc: &mut [T]| {
                let at = (b * n + first + i) * 3;
                let g = [grad_out[at], grad_out[at + 1], grad_out[at + 2]];
                let mut gp = [T::ZERO; 3];
                let w_at = (wb * len + i) * k;
                skinned.backward(
                    rig.method,
                    joints,
                    &rig.vertex(b, first + i),
                    g,
                    Sink {
                        gp: &mut gp,
                        gw: want_weights.then(|| &mut gw[w_at..w_at + k]),
                        joints: acc,
                    },
                );
                let v_at = (vb * len + i) * 3;
                for (d, x) in gv[v_at..v_at + 3].iter_mut().zip(gp) {
                    *d += x;
                }
            };
            // As the forward: whole groups to the lane kernel where it applies.
            let mut grouped = 0;
            if lanes::applies(rig.method, joints, k) {
                grouped = len / LANES * LANES;
                for i in (0..grouped).step_by(LANES) {
                    let at = (b * n + first + i) * 3;
                    let (v_at, w_at) = ((vb * len + i) * 3, (wb * len + i) * k);
                    let sink = GroupSink {
                        points: &mut gv[v_at..v_at + LANES * 3],
                        weights: want_weights.then(|| &mut gw[w_at..w_at + LANES * k]),
                        joints: &mut *acc,
                    };
                    let group = rig.group(b, first + i);
                    let (normals, grad) =
                        (skinned == Skinned::Normals, &grad_out[at..at + LANES * 3]);
                    if !lanes::backward(joints, &group, normals, grad, sink) {
                        for o in i..i + LANES {
                            scalar(o, &mut gv, &mut gw, acc);
                        }
                    }
                }
            }
            for i in grouped..len {
                scalar(i, &mut gv, &mut gw, acc);
            }
        }
        (acc, gv, gw)
    });
    if let Some(out) = grads.vertices {
        for (&first, (_, gv, _)) in starts.iter().zip(&pieces) {
            let len = chunk.min(n - first);
            for vb in 0..rig.vertex_batch {
                out[(vb * n + first) * 3..(vb * n + first + len) * 3]
                    .copy_from_slice(&gv[vb * len * 3..(vb + 1) * len * 3]);
            }
        }
    }
    if let Some(out) = grads.weights {
        for (&first, (_, _, gw)) in starts.iter().zip(&pieces) {
            let len = chunk.min(n - first);
            for wb in 0..rig.weight_batch {
                out[(wb * n + first) * k..(wb * n + first + len) * k]
                    .copy_from_slice(&gw[wb * len * k..(wb + 1) * len * k]);
            }
        }
    }
    if let Some(out) = grads.palettes {
        let mut total = vec![T::ZERO; rig.palette_batch * j * JOINT_GRADS];
        for (acc, _, _) in &pieces {
            for (t, &a) in total.iter_mut().zip(acc) {
                *t += a;
            }
        }
        let tolerance = T::of(rig.rigid_tolerance);
        let per_palette = map_items((0..rig.palette_batch).collect(), |p| {
            (0..j)
                .map(|joint| {
                    let g =
                        &total[(p * j + joint) * JOINT_GRADS..(p * j + joint + 1) * JOINT_GRADS];
                    if rig.method == Method::Linear {
                        std::array::from_fn(|r| std::array::from_fn(|c| g[G_MATRIX + r * 4 + c]))
                    } else {
                        split_backward(&rig.matrix(p, joint), rig.origin(joint), tolerance, g)
                    }
                })
                .collect::<Vec<M34<T>>>()
        });
        for (p, matrices) in per_palette.iter().enumerate() {
            for (joint, m) in matrices.iter().enumerate() {
                let at = (p * j + joint) * 16;
                for r in 0..3 {
                    out[at + r * 4..at + r * 4 + 4].copy_from_slice(&m[r]);
                }
                out[at + 12..at + 16].fill(T::ZERO);
            }
        }
    }
    Ok(())
}
