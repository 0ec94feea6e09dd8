//! What the viewer shows of a model: its skinned primitives with triangles, and the skins they
//! use, checked once against what the page's shaders take (four influences per vertex, a
//! palette that fits a method's uniform block).

use anyhow::{bail, Result};
use skinblend::Method;
use skinblend_gltf::Model;
use skinblend_gpu::shaders::uniform_palette_joints;

/// Influences per vertex the GLSL ES functions take (`uvec4` joints, `vec4` weights).
pub const SHADER_INFLUENCES: usize = 4;

/// One skinned primitive with triangles, as the page draws it.
#[derive(Debug)]
pub struct ViewPrimitive {
    /// JSON path, for errors and the page.
    pub path: String,
    /// Index of its mesh in the model.
    pub mesh: usize,
    /// Index of the primitive in its mesh.
    pub primitive: usize,
    /// Index into the shown skins ([`Shown::skins`]).
    pub skin_slot: usize,
    /// The skinned node that shows it.
    pub node: usize,
    /// Its triangles (vertex indices of the primitive).
    pub triangles: Vec<[u32; 3]>,
}

/// The primitives the page shows and the skins they use.
#[derive(Debug)]
pub struct Shown {
    /// Model skin indices the primitives use, once each.
    pub skins: Vec<usize>,
    /// Every skinned primitive with triangles, in node order.
    pub primitives: Vec<ViewPrimitive>,
}

impl Shown {
    /// The skinned primitives of `model` with triangles, checked for the page's shaders: each
    /// has JOINTS_0 and at most [`SHADER_INFLUENCES`] influences per vertex, and every skin's
    /// palette fits the uniform block of each of `methods`' shaders.
    ///
    /// # Errors
    /// A primitive or skin the shaders cannot take (naming it), or no primitive to show.
    pub fn find(model: &Model, methods: &[Method]) -> Result<Self> {
        let mut skins = Vec::new();
        let mut primitives = Vec::new();
        for node in model.skinned_nodes() {
            let (Some(m), Some(s)) = (model.nodes()[node].mesh, model.nodes()[node].skin) else {
                continue;
            };
            let skin_slot = match skins.iter().position(|&k| k == s) {
                Some(slot) => slot,
                None => {
                    skins.push(s);
                    skins.len() - 1
                }
            };
            for (p, primitive) in model.meshes()[m].primitives.iter().enumerate() {
                let path = format!("nodes[{node}] -> meshes[{m}].primitives[{p}]");
                let Some(influences) = primitive.influences.as_ref() else {
                    bail!("{path}: has no JOINTS_0");
                };
                let triangles = primitive.triangles();
                if triangles.is_empty() {
                    continue;
                }
                let k = influences.influences_per_vertex();
                if k > SHADER_INFLUENCES {
                    bail!(
                        "{path}: {k} influences per vertex; the viewer's shaders take \
                         {SHADER_INFLUENCES} (JOINTS_0/WEIGHTS_0)"
                    );
                }
                primitives.push(ViewPrimitive {
                    path,
                    mesh: m,
                    primitive: p,
                    skin_slot,
                    node,
                    triangles,
                });
            }
        }
        if primitives.is_empty() {
            bail!("no skinned mesh with triangles to show");
        }
        for &s in &skins {
            let joints = model.skins()[s].joints.len();
            for &method in methods {
                let capacity = uniform_palette_joints(method);
                if joints > capacity {
                    bail!(
                        "skins[{s}]: {joints} joints; the viewer's {method} shader holds \
                         {capacity} (a 16 KiB uniform block)"
                    );
                }
            }
        }
        Ok(Self { skins, primitives })
    }
}
