//! What this crate knows of each skinning method, in one table ([`method_kernel`]): its WGSL
//! names and library, its compute kernel, the per-vertex input it reads beyond a mesh's
//! attributes ([`VertexInput`]), its palette entry's size and what an exported shader's header
//! says of it. The device, the upload, the dispatch, the benchmark and the shader export read
//! this table instead of matching on the method, so a method added to the core gets one entry
//! here, its palette layout (`palette.rs`) and its WGSL (`shaders/`), and nothing else in the
//! crate.
// Without the compute feature only the WGSL functions read the table.
#![cfg_attr(not(feature = "compute"), allow(dead_code))]

use skinblend::{BlendValues, Method, SkinInput, VertexInput};

use crate::palette::gpu_rotation_center;
use crate::{GpuCorJoint, GpuDualQuatJoint, GpuLinearJoint};

/// How this crate moves a per-vertex input (the core's [`VertexInput`]) to the GPU: binding 9
/// of the compute kernels, location 4 of the exported vertex shaders.
pub(crate) trait GpuVertexInput: Copy {
    /// The label of its GPU buffer.
    fn buffer_label(self) -> &'static str;
    /// Bytes per vertex on the GPU.
    fn bytes_per_vertex(self) -> u64;
    /// Its bytes for the GPU from `input`, or `None` where the input has none. Allocates.
    fn gpu_bytes(self, input: &SkinInput<'_>) -> Option<Vec<u8>>;
    /// The example vertex shader's field at location 4, and its role in
    /// [`crate::shaders::ShaderInput`].
    fn wgsl_field(self) -> (&'static str, &'static str);
    /// What an exported shader's header says of location 4.
    fn header_lines(self) -> &'static [&'static str];
}

impl GpuVertexInput for VertexInput {
    fn buffer_label(self) -> &'static str {
        match self {
            VertexInput::RotationCenters => "skinblend-gpu rotation centers",
            VertexInput::BlendValues => "skinblend-gpu blend values",
        }
    }

    /// Centers: a `vec4<f32>`, `w` = 1 with a center, 0 without
    /// ([`crate::gpu_rotation_centers`]); blend values: an `f32`.
    fn bytes_per_vertex(self) -> u64 {
        match self {
            VertexInput::RotationCenters => 16,
            VertexInput::BlendValues => 4,
        }
    }

    /// A value for the whole mesh is repeated per vertex.
    fn gpu_bytes(self, input: &SkinInput<'_>) -> Option<Vec<u8>> {
        match self {
            VertexInput::RotationCenters => input.rotation_centers().map(|centers| {
                let centers: Vec<[f32; 4]> =
                    centers.iter().map(|&c| gpu_rotation_center(c)).collect();
                bytemuck::cast_slice(&centers).to_vec()
            }),
            VertexInput::BlendValues => input.blend_values().map(|values| match values {
                BlendValues::PerVertex(values) => bytemuck::cast_slice(values).to_vec(),
                BlendValues::Uniform(value) => {
                    bytemuck::cast_slice(&vec![value; input.vertex_count()]).to_vec()
                }
            }),
        }
    }

    fn wgsl_field(self) -> (&'static str, &'static str) {
        match self {
            VertexInput::RotationCenters => ("    @location(4) center: vec4<f32>,\n", "center"),
            VertexInput::BlendValues => ("    @location(4) blend: f32,\n", "blend"),
        }
    }

    fn header_lines(self) -> &'static [&'static str] {
        match self {
            VertexInput::RotationCenters => &[
                "4 center of rotation (vec4, glTF attribute _SKINBLEND_COR: xyz the center in bind",
                "space, w = 1 when the vertex has one, 0 when not: then it is skinned by DQS).",
            ],
            VertexInput::BlendValues => &[
                "4 blend value (float, glTF attribute _SKINBLEND_DQ_BLEND, in [0, 1]): the vertex goes",
                "to (1 - b) LBS + b DQS, 0 = LBS, 1 = DQS exactly; normals and tangent directions",
                "interpolate the two unit results, renormalized; the tangent's handedness is LBS's",
                "where b < 0.5, else DQS's. A value for the whole mesh: the same value at every vertex.",
            ],
        }
    }
}

/// One method as this crate runs and exports it.
#[derive(Debug)]
pub(crate) struct MethodKernel {
    /// The core's method.
    pub(crate) method: Method,
    /// Its words in shader headers and pipeline labels.
    pub(crate) description: &'static str,
    /// The WGSL palette variable and its entry type (`wgsl::skinning_wgsl` declares them).
    pub(crate) palette_name: &'static str,
    pub(crate) entry_type: &'static str,
    /// The WGSL functions (they need `wgsl::SKINNING_WGSL` and the palette declaration); the
    /// public `wgsl::*_WGSL` constants are these.
    pub(crate) library: &'static str,
    /// The example vertex shader's body: `world` and `normal` from `v` (`shaders/example.rs`).
    pub(crate) example_body: &'static str,
    /// The compute kernel's own WGSL (after `shaders/compute.wgsl`) and its entry point.
    pub(crate) compute: &'static str,
    pub(crate) compute_entry_point: &'static str,
    /// What the kernels read per vertex beyond a mesh's attributes (the core's
    /// `Method::vertex_input`, test `the_table_follows_method_all`).
    pub(crate) vertex_input: Option<VertexInput>,
    /// Bytes of one palette entry ([`crate::GpuPalette::bytes`] per joint).
    pub(crate) palette_entry_bytes: usize,
    /// What an exported shader's header says of the palette entry, line by line.
    pub(crate) header_entry_lines: &'static [&'static str],
}

const DUAL_QUAT_ENTRY_LINES: [&str; 9] = [
    "  real: vec4 f32, the rotation quaternion of the joint's rigid part (Gram-Schmidt",
    "        split of the skin matrix's 3x3; any sign: the shader aligns signs to the",
    "        heaviest influence, the pivot);",
    "  dual: vec4 f32, 1/2 (0, t) real;",
    "  residual: 3 x vec4 f32, rows of p -> S p + (c - S c), the scale/shear/mirror",
    "        left after the split, about the joint's bind origin c (identity if rigid);",
    "  rigid: u32, 1 when the residual is the identity (skipped), else 0; 12 bytes pad.",
    "",
    "",
];

/// [`DUAL_QUAT_ENTRY_LINES`]' first seven lines with two of its own.
const fn dual_quat_entry_and(more: [&'static str; 2]) -> [&'static str; 9] {
    let mut lines = DUAL_QUAT_ENTRY_LINES;
    lines[7] = more[0];
    lines[8] = more[1];
    lines
}

const COR_ENTRY_LINES: [&str; 9] = dual_quat_entry_and([
    "  linear: 3 x vec4 f32 at byte 96, the full skin matrix as rows (places the",
    "        vertex's center of rotation as LBS does).",
]);
const BLENDED_ENTRY_LINES: [&str; 9] = dual_quat_entry_and([
    "  linear: 3 x vec4 f32 at byte 96, the full skin matrix as rows (the LBS",
    "        entry, blended into the LBS result).",
]);

/// Every method this crate runs, in the order of `Method::ALL` (a `const` for the public
/// `wgsl::*_WGSL` constants; [`METHOD_KERNELS`] is its one instance).
pub(crate) const KERNELS: [MethodKernel; 4] = [
    MethodKernel {
        method: Method::Linear,
        description: "linear blend (LBS)",
        palette_name: "skin_linear_palette",
        entry_type: "SkinAffine",
        library: include_str!("../shaders/linear.wgsl"),
        example_body: "    let m = skin_linear_blend4(v.joints, v.weights);
    let world = skin_affine_point(m, v.position);
    let normal = skin_linear_normal(m, v.normal);
",
        compute: include_str!("../shaders/compute_linear.wgsl"),
        compute_entry_point: "skin_linear_main",
        vertex_input: None,
        palette_entry_bytes: size_of::<GpuLinearJoint>(),
        header_entry_lines: &[
            "  rows: 3 x vec4 f32, the skin matrix world_from_joint * joint_from_bind as rows.",
        ],
    },
    MethodKernel {
        method: Method::DualQuaternion,
        description: "dual quaternion (DQS)",
        palette_name: "skin_dual_quat_palette",
        entry_type: "SkinDualQuatJoint",
        library: include_str!("../shaders/dual_quat.wgsl"),
        example_body: "    let b = skin_dual_quat_blend4(v.joints, v.weights);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
",
        compute: include_str!("../shaders/compute_dual_quat.wgsl"),
        compute_entry_point: "skin_dual_quat_main",
        vertex_input: None,
        palette_entry_bytes: size_of::<GpuDualQuatJoint>(),
        header_entry_lines: DUAL_QUAT_ENTRY_LINES.split_at(7).0,
    },
    MethodKernel {
        method: Method::CenterOfRotation,
        description: "centers-of-rotation (CoR)",
        palette_name: "skin_cor_palette",
        entry_type: "SkinCorJoint",
        library: include_str!("../shaders/center_of_rotation.wgsl"),
        example_body: "    let b = skin_cor_blend4(v.joints, v.weights, v.center);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
",
        compute: include_str!("../shaders/compute_cor.wgsl"),
        compute_entry_point: "skin_cor_main",
        vertex_input: Some(VertexInput::RotationCenters),
        palette_entry_bytes: size_of::<GpuCorJoint>(),
        header_entry_lines: &COR_ENTRY_LINES,
    },
    MethodKernel {
        method: Method::Blended,
        description: "blended LBS/DQS",
        palette_name: "skin_blended_palette",
        entry_type: "SkinCorJoint",
        library: include_str!("../shaders/blended.wgsl"),
        example_body: "    let b = skin_blended_blend4(v.joints, v.weights, v.blend);
    let world = skin_blended_point(b, v.position);
    let normal = skin_blended_normal(b, v.normal);
",
        compute: include_str!("../shaders/compute_blended.wgsl"),
        compute_entry_point: "skin_blended_main",
        vertex_input: Some(VertexInput::BlendValues),
        palette_entry_bytes: size_of::<GpuCorJoint>(),
        header_entry_lines: &BLENDED_ENTRY_LINES,
    },
];

/// The table's one instance.
static METHOD_KERNELS: [MethodKernel; 4] = KERNELS;

/// Every method's entry, in the order of `Method::ALL`.
pub(crate) fn method_kernels() -> &'static [MethodKernel] {
    &METHOD_KERNELS
}

/// `method`'s entry (the compiler sees that every method has one).
pub(crate) fn method_kernel(method: Method) -> &'static MethodKernel {
    &METHOD_KERNELS[method_index(method)]
}

/// `method`'s position in [`method_kernels`] (and in a device's pipelines): its place in
/// `Method::ALL` (test `the_table_follows_method_all`).
pub(crate) const fn method_index(method: Method) -> usize {
    match method {
        Method::Linear => 0,
        Method::DualQuaternion => 1,
        Method::CenterOfRotation => 2,
        Method::Blended => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table follows `Method::ALL` one to one, so that [`method_kernel`] finds each
    /// method's own entry (an entry or an index out of order fails).
    #[test]
    fn the_table_follows_method_all() {
        assert_eq!(Method::ALL.len(), METHOD_KERNELS.len());
        for (method, kernel) in Method::ALL.iter().zip(&METHOD_KERNELS) {
            assert_eq!(*method, kernel.method);
            assert_eq!(method.vertex_input(), kernel.vertex_input);
            assert_eq!(method_kernel(*method).method, *method);
        }
    }
}
