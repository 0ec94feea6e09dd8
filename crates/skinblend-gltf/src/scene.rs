//! The one way to skin a glTF scene, frame after frame, on any backend.
//!
//! [`SceneSkinner`] holds, for one model, every skinned primitive's inputs with its centers of
//! rotation (the file's, else computed once, here), and one prepared palette per skin that each
//! frame refreshes. The backend ([`skinblend::SkinBackend`]: the CPU kernels, or skinblend-gpu's
//! `GpuSkinner`) is a parameter, so `skinblend pose` (CPU and `--gpu`), `compare` and
//! [`Model::skin_scene`] (here too) all take this path; the results are [`PosedNode`]s.

use std::borrow::Cow;

use glam::{Vec3, Vec4};
use skinblend::cor::{CorOptions, CorProgress};
use skinblend::{
    prepare, CpuBackend, Diagnostics, Method, PreparedPalette, SkinBackend, SkinError, SkinMesh,
    SkinOptions, SkinOutputs,
};

use crate::centers::primitive_rotation_centers;
use crate::error::{GltfError, Result};
use crate::model::{Model, Primitive};
use crate::morph::morphed;
use crate::pose::Pose;

/// One skinned primitive at a pose, in the space of the scene.
#[derive(Debug, Clone)]
pub struct PosedPrimitive {
    /// Skinned positions.
    pub positions: Vec<Vec3>,
    /// Skinned unit normals, when the primitive has normals.
    pub normals: Option<Vec<Vec3>>,
    /// Skinned tangents with handedness, when the primitive has tangents.
    pub tangents: Option<Vec<Vec4>>,
    /// The core's exact counts for this primitive.
    pub diagnostics: Diagnostics,
}

/// One skinned node at a pose.
#[derive(Debug, Clone)]
pub struct PosedNode {
    /// The node index.
    pub node: usize,
    /// The mesh index.
    pub mesh: usize,
    /// The skin index.
    pub skin: usize,
    /// One result per primitive, in the mesh's order.
    pub primitives: Vec<PosedPrimitive>,
}

/// What a [`SceneSkinner`] computes and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneOptions {
    /// The method and the core's options for every palette.
    pub skin: SkinOptions,
    /// Skin normals where the primitive has them (default `true`).
    pub normals: bool,
    /// Skin tangents where the primitive has them (default `true`).
    pub tangents: bool,
    /// Options of the centers of rotation computed for a primitive the file carries none for
    /// (CoR only; default: the paper's).
    pub centers: CorOptions,
    /// The blend value (0 = LBS, 1 = DQS) of every vertex of a primitive the file gives no
    /// `_SKINBLEND_DQ_BLEND` (blended only; default `None`: such a primitive is an error).
    pub dq_blend: Option<f32>,
}

impl Default for SceneOptions {
    fn default() -> Self {
        Self {
            skin: SkinOptions::default(),
            normals: true,
            tangents: true,
            centers: CorOptions::default(),
            dq_blend: None,
        }
    }
}

impl SceneOptions {
    /// The default options with `method`.
    #[must_use]
    pub fn with_method(method: Method) -> Self {
        Self {
            skin: SkinOptions {
                method,
                ..SkinOptions::default()
            },
            ..Self::default()
        }
    }
}

/// One skin that a skinned node uses, and its palette prepared for the current frame.
struct SceneSkin {
    skin: usize,
    /// `None` until the first frame.
    prepared: Option<PreparedPalette>,
    /// JSON path for errors: the first node that uses it.
    path: String,
}

/// One skinned primitive of the scene and what it keeps between frames.
struct ScenePrimitive<'m, M> {
    /// Index into [`SceneSkinner::posed`] and into that node's primitives.
    posed: (usize, usize),
    node: usize,
    /// Index into [`SceneSkinner::skins`].
    skin: usize,
    primitive: &'m Primitive,
    /// The primitive's bind pose as the options ask, with its centers (CoR), checked once:
    /// borrowing the model's arrays, or owning the morphed ones of the last frame's weights.
    mesh: SkinMesh<'m>,
    /// The morph weights `mesh` was made with (primitives with morph targets only): a frame with
    /// other weights makes and checks a new mesh, one with the same weights reuses it.
    morph_weights: Option<Vec<f32>>,
    /// The backend's copy (reloaded when morph targets change the attributes).
    loaded: M,
    path: String,
}

/// Skins every skinned node of a [`Model`] frame after frame on a backend `B`.
///
/// Made once per model and method: it validates every skinned primitive, takes the file's
/// centers of rotation or computes them once (CoR), and loads each primitive on the backend
/// (a GPU uploads it). [`SceneSkinner::skin`] then samples nothing itself: give it a [`Pose`]
/// ([`Model::pose`]) and it refreshes each skin's palette, applies morph targets, and skins every
/// primitive into buffers it keeps, allocating only for morphed primitives and the palettes'
/// matrices. Results are in the space of the scene (the skinned node's own transform is ignored,
/// as the glTF spec says).
pub struct SceneSkinner<'m, B: SkinBackend> {
    model: &'m Model,
    backend: B,
    options: SceneOptions,
    /// Every skin of the model that a skinned node uses, once.
    skins: Vec<SceneSkin>,
    primitives: Vec<ScenePrimitive<'m, B::Mesh>>,
    posed: Vec<PosedNode>,
    centers_computed: usize,
}

impl<B: SkinBackend> std::fmt::Debug for SceneSkinner<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneSkinner")
            .field("options", &self.options)
            .field("primitives", &self.primitives.len())
            .field("centers_computed", &self.centers_computed)
            .finish_non_exhaustive()
    }
}

impl<'m> SceneSkinner<'m, CpuBackend> {
    /// A skinner on the CPU kernels (see [`SceneSkinner::with_backend`]).
    ///
    /// # Errors
    /// As [`SceneSkinner::with_backend`].
    pub fn cpu(model: &'m Model, options: SceneOptions) -> Result<Self> {
        Self::with_backend(model, CpuBackend, options, &mut |_, _, _| {})
    }
}

impl<'m, B: SkinBackend> SceneSkinner<'m, B> {
    /// Prepares `model` for skinning on `backend` with `options`. For CoR, each primitive the
    /// file carries no centers for gets them computed now, once, with `progress(done, total,
    /// stage)` counting those primitives.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] naming the primitive of a skinned node that has no JOINTS_0;
    /// [`GltfError::Skin`] for the core's errors (the centers' precomputation, the inputs);
    /// [`GltfError::Backend`] when the backend cannot load a primitive.
    pub fn with_backend(
        model: &'m Model,
        backend: B,
        options: SceneOptions,
        progress: &mut dyn FnMut(usize, usize, CorProgress),
    ) -> Result<Self> {
        let cor = options.skin.method == Method::CenterOfRotation;
        let mut skins: Vec<SceneSkin> = Vec::new();
        let mut posed = Vec::new();
        let mut work = Vec::new();
        for node in model.skinned_nodes() {
            let (Some(m), Some(s)) = (model.nodes[node].mesh, model.nodes[node].skin) else {
                continue;
            };
            let slot = match skins.iter().position(|k| k.skin == s) {
                Some(slot) => slot,
                None => {
                    skins.push(SceneSkin {
                        skin: s,
                        prepared: None,
                        path: format!("nodes[{node}].skin (skins[{s}])"),
                    });
                    skins.len() - 1
                }
            };
            let mesh = &model.meshes[m];
            let mut primitives = Vec::with_capacity(mesh.primitives.len());
            for (p, primitive) in mesh.primitives.iter().enumerate() {
                let path = format!("nodes[{node}] -> meshes[{m}].primitives[{p}]");
                let Some(influences) = primitive.influences.as_ref() else {
                    return Err(GltfError::invalid(path, "has no JOINTS_0"));
                };
                let n = primitive.positions.len();
                primitives.push(PosedPrimitive {
                    positions: vec![Vec3::ZERO; n],
                    normals: primitive
                        .normals
                        .as_ref()
                        .filter(|_| options.normals)
                        .map(|_| vec![Vec3::ZERO; n]),
                    tangents: primitive
                        .tangents
                        .as_ref()
                        .filter(|_| options.tangents)
                        .map(|_| vec![Vec4::ZERO; n]),
                    diagnostics: Diagnostics::default(),
                });
                work.push((posed.len(), p, node, slot, primitive, influences, path));
            }
            posed.push(PosedNode {
                node,
                mesh: m,
                skin: s,
                primitives,
            });
        }
        let missing_centers = work
            .iter()
            .filter(|w| cor && w.4.rotation_centers.is_none())
            .count();
        let mut centers_computed = 0;
        let mut primitives = Vec::with_capacity(work.len());
        for (posed_node, p, node, skin, primitive, influences, path) in work {
            let centers = match (&primitive.rotation_centers, cor) {
                (_, false) => None,
                (Some(centers), true) => Some(Cow::Borrowed(centers.as_slice())),
                (None, true) => {
                    match primitives
                        .iter()
                        .find(|done: &&ScenePrimitive<'m, B::Mesh>| {
                            std::ptr::eq(done.primitive, primitive)
                        }) {
                        // A mesh shown by two nodes: its primitive's centers are already computed.
                        Some(done) => done.mesh.rotation_centers().map(|c| Cow::Owned(c.to_vec())),
                        None => {
                            let done = centers_computed;
                            let computed = primitive_rotation_centers(
                                primitive,
                                influences,
                                &options.centers,
                                &mut |stage| progress(done, missing_centers, stage),
                            )
                            .map_err(skin_error(&path))?;
                            centers_computed += 1;
                            Some(Cow::Owned(computed.centers))
                        }
                    }
                }
            };
            if options.skin.method.needs_blend_values()
                && primitive.dq_blend.is_none()
                && options.dq_blend.is_none()
            {
                return Err(GltfError::invalid(
                    path,
                    "the blended method needs blend values: this primitive has no \
                     _SKINBLEND_DQ_BLEND attribute (`skinblend dq-blend` writes one) and no value \
                     for the whole mesh was given (SceneOptions::dq_blend; on the command line \
                     --dq-blend VALUE or --dq-joints NAMES)",
                ));
            }
            let mesh =
                scene_mesh(primitive, influences, centers, &options).map_err(skin_error(&path))?;
            let loaded = backend.load_mesh(&mesh).map_err(backend_error(&path))?;
            primitives.push(ScenePrimitive {
                posed: (posed_node, p),
                node,
                skin,
                primitive,
                mesh,
                morph_weights: None,
                loaded,
                path,
            });
        }
        Ok(Self {
            model,
            backend,
            options,
            skins,
            primitives,
            posed,
            centers_computed,
        })
    }

    /// Skins every skinned node at `pose` (from [`Model::pose`] or [`Model::rest_pose`]) and
    /// returns the results, which stay valid until the next call. Morph targets are applied
    /// first (weights from `pose`), then each skin's palette, prepared with the joints' bind
    /// origins as DQS residual centers.
    ///
    /// # Errors
    /// [`GltfError::Skin`] naming the skin or primitive if the core rejects the data (a
    /// degenerate pose, for example); [`GltfError::Backend`] for the backend's errors.
    pub fn skin(&mut self, pose: &Pose) -> Result<&[PosedNode]> {
        for scene_skin in &mut self.skins {
            let s = scene_skin.skin;
            let palette = self.model.palette(pose, s)?;
            let refreshed = match scene_skin.prepared.as_mut() {
                Some(prepared) => prepared.update(&palette),
                None => prepare(
                    &palette,
                    Some(&self.model.skins[s].joint_centers),
                    &self.options.skin,
                )
                .map(|prepared| scene_skin.prepared = Some(prepared)),
            };
            refreshed.map_err(skin_error(&scene_skin.path))?;
        }
        for scene_primitive in &mut self.primitives {
            let primitive = scene_primitive.primitive;
            let path = &scene_primitive.path;
            // Any primitive with targets goes through `morphed` (which renormalizes normals and
            // tangents), whatever the weights, so that a frame at zero weights is skinned as
            // every other frame of the clip. Its mesh is made and checked again only when the
            // weights change.
            if !primitive.targets.is_empty() {
                let weights = pose
                    .weights
                    .get(scene_primitive.node)
                    .map_or(&[][..], Vec::as_slice);
                if scene_primitive.morph_weights.as_deref() != Some(weights) {
                    let (p, n, t) = morphed(primitive, weights);
                    let options = &self.options;
                    scene_primitive
                        .mesh
                        .set_attributes(
                            p,
                            n.filter(|_| options.normals).map(Cow::Owned),
                            t.filter(|_| options.tangents).map(Cow::Owned),
                        )
                        .map_err(skin_error(path))?;
                    // The attributes may differ from what the backend holds: load them again.
                    scene_primitive.loaded = self
                        .backend
                        .load_mesh(&scene_primitive.mesh)
                        .map_err(backend_error(path))?;
                    scene_primitive.morph_weights = Some(weights.to_vec());
                }
            }
            let Some(palette) = self.skins[scene_primitive.skin].prepared.as_ref() else {
                continue;
            };
            let (node, p) = scene_primitive.posed;
            let out = &mut self.posed[node].primitives[p];
            out.diagnostics = self
                .backend
                .skin_mesh(
                    &mut scene_primitive.loaded,
                    &scene_primitive.mesh,
                    palette,
                    SkinOutputs {
                        positions: &mut out.positions,
                        normals: out.normals.as_deref_mut(),
                        tangents: out.tangents.as_deref_mut(),
                    },
                    self.options.skin.run_options(),
                )
                .map_err(backend_error(path))?;
        }
        Ok(&self.posed)
    }

    /// How many primitives' centers of rotation this skinner computed (the others came from
    /// the file, or the method is not CoR): once per primitive of the model, whatever the
    /// frames and however many nodes show its mesh.
    #[must_use]
    pub fn centers_computed(&self) -> usize {
        self.centers_computed
    }

    /// The backend (for example to read a GPU's adapter name).
    #[must_use]
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The options it was made with.
    #[must_use]
    pub fn options(&self) -> &SceneOptions {
        &self.options
    }
}

impl Model {
    /// Skins every primitive of every skinned node at `pose` with `options`, once: a
    /// [`crate::SceneSkinner`] on the CPU, made and dropped. To skin many frames (and compute
    /// CoR centers once), keep a [`crate::SceneSkinner`] instead.
    ///
    /// Morph targets are applied first (weights from `pose`), then the skin's palette with the
    /// joints' bind origins as DQS residual centers. The skinned node's own transform is
    /// ignored, as the glTF spec says: results are in the space of the scene.
    ///
    /// # Errors
    /// [`GltfError::Skin`] naming the node and primitive if the core rejects the data (a
    /// degenerate pose, for example).
    pub fn skin_scene(&self, pose: &Pose, options: &SkinOptions) -> Result<Vec<PosedNode>> {
        let options = SceneOptions {
            skin: *options,
            ..SceneOptions::default()
        };
        Ok(SceneSkinner::cpu(self, options)?.skin(pose)?.to_vec())
    }
}

/// A primitive's bind pose as `options` asks (normals and tangents where wanted), with its
/// centers and (blended) its blend values, the file's or `options.dq_blend`, checked once.
fn scene_mesh<'a>(
    primitive: &'a Primitive,
    influences: &'a skinblend::Influences,
    centers: Option<Cow<'a, [Vec3]>>,
    options: &SceneOptions,
) -> std::result::Result<SkinMesh<'a>, SkinError> {
    let mut mesh = SkinMesh::new(&primitive.positions[..], influences)?;
    if let Some(normals) = primitive.normals.as_deref().filter(|_| options.normals) {
        mesh = mesh.with_normals(normals)?;
    }
    if let Some(tangents) = primitive.tangents.as_deref().filter(|_| options.tangents) {
        mesh = mesh.with_tangents(tangents)?;
    }
    if options.skin.method.needs_blend_values() {
        mesh = match (&primitive.dq_blend, options.dq_blend) {
            (Some(values), _) => mesh.with_blend_values(&values[..])?,
            (None, Some(value)) => mesh.with_uniform_blend_value(value)?,
            // Refused with the primitive's path before this is called.
            (None, None) => mesh,
        };
    }
    match centers {
        Some(centers) => mesh.with_rotation_centers(centers),
        None => Ok(mesh),
    }
}

fn skin_error(path: &str) -> impl Fn(SkinError) -> GltfError + '_ {
    move |source| GltfError::Skin {
        path: path.to_owned(),
        source,
    }
}

/// A backend's error as [`GltfError::Skin`] when it is the core's, else [`GltfError::Backend`].
fn backend_error<E: std::error::Error + Send + Sync + 'static>(
    path: &str,
) -> impl Fn(E) -> GltfError + '_ {
    move |error| {
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
        match boxed.downcast::<SkinError>() {
            Ok(source) => GltfError::Skin {
                path: path.to_owned(),
                source: *source,
            },
            Err(source) => GltfError::Backend {
                path: path.to_owned(),
                source,
            },
        }
    }
}
