//! `--gpu` for `evidence` (the rigs skinned by `skinblend-gpu` through the core's one walk over
//! them, measured as on the CPU) and the GPU that `pose --gpu` hands to the scene skinner.

use std::cell::{Cell, RefCell};

use anyhow::{Context, Result};
use skinblend::evidence::{self, EvidenceRow};
use skinblend::glam::{Vec3, Vec4};
use skinblend::{
    Diagnostics, Method, PreparedPalette, RunOptions, SkinBackend, SkinMesh, SkinOutputs, Skinned,
};
use skinblend_gpu::{GpuError, GpuMesh, GpuSkinner};

/// What the GPU evidence run did besides the rows.
pub struct GpuEvidence {
    /// The rows, in `evidence::rows()` order.
    pub rows: Vec<EvidenceRow>,
    /// The adapter's name and backend.
    pub adapter: String,
    /// Methods this adapter cannot run, whose rows were computed on the CPU: none, except CoR
    /// and blended on a device with fewer than 9 storage buffers per shader stage (see
    /// `GpuSkinner::supports`).
    pub cpu_methods: Vec<Method>,
    /// The largest relative difference between GPU and CPU vertices over all GPU rows.
    pub max_relative_difference: f32,
}

/// The GPU, or an error saying `--gpu` needs one.
pub fn open_gpu() -> Result<GpuSkinner> {
    GpuSkinner::new().context("--gpu needs a GPU adapter")
}

/// The evidence rows with every mesh skinned on the GPU (every method of `Method::ALL`: LBS,
/// DQS, CoR and blended, the centers of rotation computed on the CPU and uploaded with the mesh
/// as are the fixtures' blend values): `skinblend::evidence::rows_on`
/// with the GPU as the backend, so skinned and measured exactly as on the CPU.
pub fn evidence_rows() -> Result<GpuEvidence> {
    let gpu = open_gpu()?;
    let info = gpu.adapter_info();
    let adapter = format!("{} ({:?})", info.name, info.backend);
    let backend = EvidenceGpu {
        gpu,
        cpu_methods: RefCell::new(Vec::new()),
        worst: Cell::new(0.0),
    };
    let rows = evidence::rows_on(&backend)?;
    Ok(GpuEvidence {
        rows,
        adapter,
        cpu_methods: backend.cpu_methods.into_inner(),
        max_relative_difference: backend.worst.get(),
    })
}

/// The GPU as the evidence runs it: a method the adapter cannot run is skinned on the CPU (and
/// noted), and every GPU result is compared with the CPU's on the same mesh and palette.
struct EvidenceGpu {
    gpu: GpuSkinner,
    /// Methods skinned on the CPU, in the order first met.
    cpu_methods: RefCell<Vec<Method>>,
    /// The largest relative difference of a GPU result from the CPU's so far.
    worst: Cell<f32>,
}

impl SkinBackend for EvidenceGpu {
    type Mesh = GpuMesh;
    type Error = GpuError;

    fn load_mesh(&self, mesh: &SkinMesh<'_>) -> Result<GpuMesh, GpuError> {
        self.gpu.load_mesh(mesh)
    }

    fn skin_mesh(
        &self,
        loaded: &mut GpuMesh,
        mesh: &SkinMesh<'_>,
        palette: &PreparedPalette,
        mut outputs: SkinOutputs<'_>,
        run: RunOptions,
    ) -> Result<Diagnostics, GpuError> {
        let method = palette.method();
        if !self.gpu.supports(method) {
            let mut cpu_methods = self.cpu_methods.borrow_mut();
            if !cpu_methods.contains(&method) {
                cpu_methods.push(method);
            }
            return Ok(mesh.skin_into(palette, outputs, run)?);
        }
        let on_gpu = SkinOutputs {
            positions: &mut *outputs.positions,
            normals: outputs.normals.as_deref_mut(),
            tangents: outputs.tangents.as_deref_mut(),
        };
        let diagnostics = self.gpu.skin_mesh(loaded, mesh, palette, on_gpu, run)?;
        let on_cpu = mesh.skin(palette, run)?;
        let difference = max_relative_difference(&outputs, &on_cpu);
        self.worst.set(self.worst.get().max(difference));
        Ok(diagnostics)
    }
}

/// The largest |gpu − cpu| / max(|cpu|, 1) over every vertex attribute (the fixtures are about
/// 1 m in size, and normals and tangents are unit vectors). A NaN on either side counts as
/// infinitely far (`f32::max` would drop it).
fn max_relative_difference(gpu: &SkinOutputs<'_>, cpu: &Skinned) -> f32 {
    let rel = |a: Vec4, b: Vec4| {
        let difference = (a - b).length() / b.length().max(1.0);
        if difference.is_nan() {
            f32::INFINITY
        } else {
            difference
        }
    };
    let vec3s = |a: &[Vec3], b: &[Vec3]| {
        a.iter()
            .zip(b)
            .map(|(a, b)| rel(a.extend(0.0), b.extend(0.0)))
            .fold(0f32, f32::max)
    };
    let mut worst = vec3s(gpu.positions, &cpu.positions);
    if let (Some(a), Some(b)) = (gpu.normals.as_deref(), cpu.normals.as_deref()) {
        worst = worst.max(vec3s(a, b));
    }
    if let (Some(a), Some(b)) = (gpu.tangents.as_deref(), cpu.tangents.as_deref()) {
        let tangents = a.iter().zip(b).map(|(a, b)| rel(*a, *b));
        worst = worst.max(tangents.fold(0f32, f32::max));
    }
    worst
}
