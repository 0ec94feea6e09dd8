//! The report of a user's glTF model over an animation: every method skinned at evenly spaced
//! frames, per-frame displacement between methods and volume and edge ratios, the frames where
//! the methods differ most rendered side by side, and `index.html`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::Vec3;
use skinblend::cor::{self, CorOptions};
use skinblend::metrics;
use skinblend::{prepare, skin_into, Method, SkinInput, SkinOptions, SkinOutputs};
use skinblend_gltf::{morphed, Model, Pose};

use crate::error::{ReportError, Result};
use crate::evidence::{compare_figure_framed, method_label, method_style, Coloring};
use crate::html::{Block, Page, Section};
use crate::image::write_atomically;
use crate::plot::{self, LinePlot, Marker, Series};
use crate::render::Bounds;

/// What [`write_report`] does and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Animation name or index; `None`: the first.
    pub animation: Option<String>,
    /// Frames sampled evenly from the animation's start to its end, both included (at least 1).
    pub frames: usize,
    /// Methods, in column order; the first is the reference for displacements and the first
    /// two pick the frames. Default: [`Method::ALL`].
    pub methods: Vec<Method>,
    /// How many frames to render (those where the first two methods differ most).
    pub picked_frames: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            animation: None,
            frames: 48,
            methods: Method::ALL.to_vec(),
            picked_frames: 3,
        }
    }
}

/// Which part of the work a [`Progress`] report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Precomputing centers of rotation, one step per primitive.
    CentersOfRotation,
    /// Skinning every method at every frame, one step per frame.
    Skinning,
    /// Rendering the picked frames, one step per figure.
    Rendering,
}

impl Stage {
    /// A short description for a progress bar.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Stage::CentersOfRotation => "centers of rotation",
            Stage::Skinning => "skinning frames",
            Stage::Rendering => "rendering frames",
        }
    }
}

/// `done` of `total` steps of `stage` are finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The stage.
    pub stage: Stage,
    /// Steps finished.
    pub done: usize,
    /// Steps in the stage.
    pub total: usize,
}

/// One frame's measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMetrics {
    /// Frame number, from 0.
    pub frame: usize,
    /// Animation time, seconds.
    pub time_s: f32,
    /// Per method pair `(i, j)`, `i < j`: largest vertex distance ÷ the bounding-box diagonal
    /// of method `i`'s result.
    pub max_displacement: Vec<((usize, usize), f64)>,
    /// Per method pair: root-mean-square vertex distance ÷ the same diagonal.
    pub rms_displacement: Vec<((usize, usize), f64)>,
    /// Per method: posed ÷ rest signed volume of all skinned triangles (`None` for zero rest
    /// volume). Only a true volume for a closed mesh.
    pub volume_ratio: Vec<Option<f64>>,
    /// Per method: mean posed ÷ rest length of the triangles' edges.
    pub mean_edge_ratio: Vec<Option<f64>>,
}

/// What [`write_report`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareSummary {
    /// Files written, `index.html` last.
    pub files: Vec<PathBuf>,
    /// The animation's name (or `#index`).
    pub animation: String,
    /// Every frame's measurements.
    pub frames: Vec<FrameMetrics>,
    /// The frames rendered, most different first.
    pub picked: Vec<usize>,
    /// Skinned vertices and triangles over all primitives.
    pub vertex_count: usize,
    /// Triangles over all skinned primitives.
    pub triangle_count: usize,
    /// Whether every edge is shared by exactly two triangles (volume is then meaningful).
    pub closed: bool,
}

/// One skinned primitive of the scene and where its vertices start in the joined mesh.
struct Part {
    node: usize,
    mesh: usize,
    primitive: usize,
    skin: usize,
    offset: usize,
    rotation_centers: Option<Vec<Vec3>>,
}

/// Every skinned primitive with triangles, joined into one mesh.
struct Scene {
    parts: Vec<Part>,
    rest: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

/// Skins `file` over an animation with every method, measures each frame, renders the frames
/// where the methods differ most, plots the per-frame curves and writes `index.html` into `dir`
/// (created if missing; every file written atomically, `index.html` last). `progress` is called
/// as work advances.
///
/// # Errors
/// [`ReportError::Gltf`] for a file that does not load or an unknown animation;
/// [`ReportError::Request`] for no animation, no skinned triangles, zero frames or no methods;
/// [`ReportError::Skin`]; those of rendering, plotting and writing.
pub fn write_report(
    file: &Path,
    options: &CompareOptions,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<CompareSummary> {
    let request = |what: String| ReportError::Request { what };
    if options.frames == 0 {
        return Err(request("--frames must be at least 1".to_owned()));
    }
    if options.methods.is_empty() {
        return Err(request("no method to compare".to_owned()));
    }
    let shown = file.display().to_string();
    let gltf_error = |what: String| move |source| ReportError::Gltf { what, source };
    let model = Model::open(file).map_err(gltf_error("loading".to_owned()))?;
    let animation = match &options.animation {
        Some(name) => model
            .find_animation(name)
            .map_err(gltf_error(format!("{shown}: --animation {name}")))?,
        None if model.animations.is_empty() => {
            return Err(request(format!(
                "{shown} has no animation to compare the methods over"
            )))
        }
        None => 0,
    };
    let clip = &model.animations[animation];
    let animation_name = clip.name.clone().unwrap_or_else(|| format!("#{animation}"));
    let scene = build_scene(&model, &options.methods, &shown, progress)?;
    if scene.triangles.is_empty() {
        return Err(request(format!(
            "{shown} has no skinned triangles to compare"
        )));
    }
    let times_s: Vec<f32> = (0..options.frames)
        .map(|i| {
            if options.frames == 1 {
                clip.start_s
            } else {
                clip.start_s + (clip.end_s - clip.start_s) * i as f32 / (options.frames - 1) as f32
            }
        })
        .collect();
    let pairs: Vec<(usize, usize)> = (0..options.methods.len())
        .flat_map(|i| (i + 1..options.methods.len()).map(move |j| (i, j)))
        .collect();
    let mut frames = Vec::with_capacity(times_s.len());
    for (frame, &time_s) in times_s.iter().enumerate() {
        let posed = skin_frame(&model, &scene, animation, time_s, &options.methods, &shown)?;
        frames.push(measure_frame(
            &scene, frame, time_s, &posed, &pairs, &shown,
        )?);
        progress(Progress {
            stage: Stage::Skinning,
            done: frame + 1,
            total: times_s.len(),
        });
    }
    let picked = pick_frames(&frames, options.picked_frames);

    std::fs::create_dir_all(dir).map_err(|e| ReportError::io(dir, e))?;
    let mut written = Vec::new();
    let labels: Vec<&str> = options.methods.iter().map(|&m| method_label(m)).collect();
    let methods_text = labels.join(" | ");
    let reference = labels[0];
    let displacement_high = picked
        .iter()
        .filter_map(|&f| first_pair_max(&frames[f]))
        .fold(0.0f64, f64::max)
        .max(1e-4) as f32;
    let figure_total = picked.len() * 3;
    let mut render_blocks = Vec::new();
    for (rank, &frame) in picked.iter().enumerate() {
        let time_s = times_s[frame];
        let posed = skin_frame(&model, &scene, animation, time_s, &options.methods, &shown)?;
        let named: Vec<(String, Vec<Vec3>)> =
            labels.iter().map(|l| (*l).to_owned()).zip(posed).collect();
        let largest = first_pair_max(&frames[frame]).unwrap_or(0.0) * 100.0;
        let closeup = closeup_bounds(&named);
        for (kind, coloring, framed) in [
            ("area", Coloring::AreaChange, None),
            ("displacement", Coloring::DisplacementFromFirst, None),
            ("closeup", Coloring::AreaChange, closeup),
        ] {
            if kind == "closeup" && framed.is_none() {
                continue;
            }
            let heading = if framed.is_some() {
                format!("frame {frame} (t = {time_s:.3} s), close-up where the methods differ most: {methods_text}")
            } else {
                format!("frame {frame} (t = {time_s:.3} s): {methods_text}")
            };
            let image = compare_figure_framed(
                &heading,
                &scene.rest,
                &scene.triangles,
                &named,
                coloring,
                displacement_high,
                framed,
            )?;
            let name = format!("frame_{frame:04}_{kind}.png");
            let path = dir.join(&name);
            image.write_png(&path)?;
            written.push(path);
            let caption = match (coloring, framed) {
                (Coloring::AreaChange, Some(_)) => format!(
                    "A close-up of the same frame around the vertices where {} and {} are furthest apart, same colours (surface area change against the bind pose). Compare the silhouettes: where LBS folds in or flattens, DQS swells out (the bulge); CoR keeps the shape without either as far as its centers allow.",
                    labels[0],
                    labels.get(1).copied().unwrap_or(labels[0])
                ),
                (Coloring::AreaChange, None) => format!(
                    "Rank {} of the frames where {} and {} differ most (largest vertex distance {largest:.2}% of the model's size). Colour is the change of surface area against the bind pose: look at the joints; blue where a method pinches or collapses the skin (LBS at twisting and bending joints), red where it swells (DQS's bulge).",
                    rank + 1,
                    labels[0],
                    labels.get(1).copied().unwrap_or(labels[0])
                ),
                _ => format!(
                    "The same frame coloured by each vertex's distance from the {reference} result, as a share of the bounding-box diagonal (the {reference} panel is the reference, all zero). Look at which joints light up: that is where choosing a method matters for this model."
                ),
            };
            render_blocks.push(Block::Figure {
                src: name,
                alt: heading,
                caption,
            });
            progress(Progress {
                stage: Stage::Rendering,
                done: written.len(),
                total: figure_total,
            });
        }
    }

    let mut plot_blocks = Vec::new();
    for (name, plot, caption) in frame_plots(&frames, &options.methods, &pairs, &animation_name) {
        let path = dir.join(name);
        plot::draw(&plot)?.write_png(&path)?;
        written.push(path);
        plot_blocks.push(Block::Figure {
            src: name.to_owned(),
            alt: plot.title.clone(),
            caption,
        });
    }

    let closed = is_closed(&scene.triangles);
    let page = Page {
        title: format!("skinblend compare: {}", file_name(file)),
        intro: format!(
            "{shown}, animation {animation_name:?} ({:.3} s to {:.3} s) sampled at {} evenly spaced frames and skinned by each method ({methods_text}) with the same palettes: {} skinned vertices, {} triangles in {} primitives. Renders use a fixed three-quarter orthographic camera framing all methods alike. The mesh is {}.",
            clip.start_s,
            clip.end_s,
            options.frames,
            scene.rest.len(),
            scene.triangles.len(),
            scene.parts.len(),
            if closed {
                "closed, so its volume ratio is a true volume"
            } else {
                "not closed (some edges do not have exactly two triangles), so its volume ratio is only indicative"
            }
        ),
        sections: vec![
            Section {
                heading: "Where the methods differ most".to_owned(),
                blocks: render_blocks,
            },
            Section {
                heading: "Over the animation".to_owned(),
                blocks: plot_blocks,
            },
            Section {
                heading: "Per frame".to_owned(),
                blocks: vec![frame_table(&frames, &labels, &pairs)],
            },
        ],
    };
    let index = dir.join("index.html");
    write_atomically(&index, page.render().as_bytes())?;
    written.push(index);
    Ok(CompareSummary {
        files: written,
        animation: animation_name,
        frames,
        picked,
        vertex_count: scene.rest.len(),
        triangle_count: scene.triangles.len(),
        closed,
    })
}

fn file_name(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn build_scene(
    model: &Model,
    methods: &[Method],
    shown: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<Scene> {
    let mut scene = Scene {
        parts: Vec::new(),
        rest: Vec::new(),
        triangles: Vec::new(),
    };
    let mut pending = Vec::new();
    for node in model.skinned_nodes() {
        let (Some(mesh), Some(skin)) = (model.nodes[node].mesh, model.nodes[node].skin) else {
            continue;
        };
        let Some(mesh_data) = model.meshes.get(mesh) else {
            continue;
        };
        for (p, primitive) in mesh_data.primitives.iter().enumerate() {
            if primitive.influences.is_none() {
                continue;
            }
            let triangles = primitive.triangles();
            if triangles.is_empty() {
                continue;
            }
            let offset = scene.rest.len();
            let base = offset as u32;
            scene
                .triangles
                .extend(triangles.iter().map(|t| t.map(|v| v + base)));
            scene.rest.extend_from_slice(&primitive.positions);
            pending.push(triangles);
            scene.parts.push(Part {
                node,
                mesh,
                primitive: p,
                skin,
                offset,
                rotation_centers: None,
            });
        }
    }
    if methods.contains(&Method::CenterOfRotation) {
        let total = scene.parts.len();
        for (done, (part, triangles)) in scene.parts.iter_mut().zip(&pending).enumerate() {
            let primitive = &model.meshes[part.mesh].primitives[part.primitive];
            if let Some(centers) = &primitive.rotation_centers {
                // Precomputed and carried by the file (`skinblend centers`).
                part.rotation_centers = Some(centers.clone());
            } else if let Some(influences) = primitive.influences.as_ref() {
                let centers = cor::rotation_centers(
                    &primitive.positions,
                    triangles,
                    influences,
                    &CorOptions::default(),
                )
                .map_err(ReportError::skin(format!(
                    "{shown}: centers of rotation of meshes[{}].primitives[{}]",
                    part.mesh, part.primitive
                )))?;
                part.rotation_centers = Some(centers.centers);
            }
            progress(Progress {
                stage: Stage::CentersOfRotation,
                done: done + 1,
                total,
            });
        }
    }
    Ok(scene)
}

/// The joined positions of every part at `time_s`, one vector per method.
fn skin_frame(
    model: &Model,
    scene: &Scene,
    animation: usize,
    time_s: f32,
    methods: &[Method],
    shown: &str,
) -> Result<Vec<Vec<Vec3>>> {
    let pose: Pose = model
        .pose(Some(animation), time_s)
        .map_err(|source| ReportError::Gltf {
            what: format!("{shown}: pose at {time_s} s"),
            source,
        })?;
    let mut palettes: HashMap<usize, Vec<glam::Mat4>> = HashMap::new();
    let mut results = Vec::with_capacity(methods.len());
    for &method in methods {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let mut out = vec![Vec3::ZERO; scene.rest.len()];
        let mut prepared_by_skin = HashMap::new();
        for part in &scene.parts {
            let what = || {
                format!(
                    "{shown}: nodes[{}] -> meshes[{}].primitives[{}] at {time_s} s with {}",
                    part.node,
                    part.mesh,
                    part.primitive,
                    method.name()
                )
            };
            let prepared = match prepared_by_skin.entry(part.skin) {
                std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::hash_map::Entry::Vacant(entry) => {
                    let palette = match palettes.entry(part.skin) {
                        std::collections::hash_map::Entry::Occupied(p) => p.into_mut(),
                        std::collections::hash_map::Entry::Vacant(p) => {
                            p.insert(model.palette(&pose, part.skin).map_err(|source| {
                                ReportError::Gltf {
                                    what: what(),
                                    source,
                                }
                            })?)
                        }
                    };
                    let centers = &model.skins[part.skin].joint_centers;
                    entry.insert(
                        prepare(palette, Some(centers), &options)
                            .map_err(ReportError::skin(what()))?,
                    )
                }
            };
            let primitive = &model.meshes[part.mesh].primitives[part.primitive];
            let Some(influences) = primitive.influences.as_ref() else {
                continue;
            };
            let (positions, _, _) = morphed(primitive, &pose.weights[part.node]);
            let mut input = SkinInput::new(&positions, None, None, influences)
                .map_err(ReportError::skin(what()))?;
            if method == Method::CenterOfRotation {
                if let Some(centers) = part.rotation_centers.as_deref() {
                    input = input
                        .with_rotation_centers(centers)
                        .map_err(ReportError::skin(what()))?;
                }
            }
            let end = part.offset + positions.len();
            skin_into(
                &input,
                prepared,
                SkinOutputs::positions(&mut out[part.offset..end]),
            )
            .map_err(ReportError::skin(what()))?;
        }
        results.push(out);
    }
    Ok(results)
}

fn measure_frame(
    scene: &Scene,
    frame: usize,
    time_s: f32,
    posed: &[Vec<Vec3>],
    pairs: &[(usize, usize)],
    shown: &str,
) -> Result<FrameMetrics> {
    let what = || format!("{shown}: measuring frame {frame}");
    let mut max_displacement = Vec::with_capacity(pairs.len());
    let mut rms_displacement = Vec::with_capacity(pairs.len());
    for &(i, j) in pairs {
        let d = metrics::displacement(&posed[i], &posed[j]).map_err(ReportError::skin(what()))?;
        max_displacement.push(((i, j), d.map_or(0.0, |d| d.max_relative)));
        rms_displacement.push(((i, j), d.map_or(0.0, |d| d.rms_relative)));
    }
    let mut volume_ratio = Vec::with_capacity(posed.len());
    let mut mean_edge_ratio = Vec::with_capacity(posed.len());
    for positions in posed {
        volume_ratio.push(
            metrics::volume_ratio(&scene.rest, positions, &scene.triangles)
                .map_err(ReportError::skin(what()))?,
        );
        mean_edge_ratio.push(
            metrics::triangle_edge_ratios(&scene.rest, positions, &scene.triangles)
                .map_err(ReportError::skin(what()))?
                .map(|s| s.mean),
        );
    }
    Ok(FrameMetrics {
        frame,
        time_s,
        max_displacement,
        rms_displacement,
        volume_ratio,
        mean_edge_ratio,
    })
}

/// Share of the largest LBS–DQS distance above which a vertex is in the close-up.
const CLOSEUP_SHARE: f32 = 0.5;

/// A box around the vertices where the first two results are furthest apart (distance at least
/// [`CLOSEUP_SHARE`] of the largest), in every method's pose, made a cube with room around it
/// and at least a sixth of the whole model's size. `None` with fewer than two results or where
/// they do not differ.
fn closeup_bounds(posed: &[(String, Vec<Vec3>)]) -> Option<Bounds> {
    let (first, second) = (&posed.first()?.1, &posed.get(1)?.1);
    let whole = Bounds::of(first)?;
    let distances: Vec<f32> = first
        .iter()
        .zip(second)
        .map(|(a, b)| a.distance(*b))
        .collect();
    let largest = distances.iter().copied().fold(0.0f32, f32::max);
    if largest.is_nan() || largest <= 0.0 {
        return None;
    }
    let selected: Vec<Vec3> = distances
        .iter()
        .enumerate()
        .filter(|(_, &d)| d >= CLOSEUP_SHARE * largest)
        .flat_map(|(v, _)| posed.iter().filter_map(move |(_, p)| p.get(v).copied()))
        .collect();
    let around = Bounds::of(&selected)?;
    let center = (around.min + around.max) / 2.0;
    let half = ((around.max - around.min).max_element() * 0.8).max(whole.diagonal() / 12.0);
    Some(Bounds {
        min: center - Vec3::splat(half),
        max: center + Vec3::splat(half),
    })
}

fn first_pair_max(frame: &FrameMetrics) -> Option<f64> {
    frame.max_displacement.first().map(|&(_, d)| d)
}

/// The `count` frames where the first two methods differ most (largest vertex distance), at
/// least a tenth of the animation apart so that one motion is not shown three times; most
/// different first. With one method, the first frames.
#[must_use]
fn pick_frames(frames: &[FrameMetrics], count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..frames.len()).collect();
    order.sort_by(|&a, &b| {
        let (da, db) = (
            first_pair_max(&frames[a]).unwrap_or(0.0),
            first_pair_max(&frames[b]).unwrap_or(0.0),
        );
        db.total_cmp(&da).then(a.cmp(&b))
    });
    let gap = (frames.len() / 10).max(1);
    let mut picked: Vec<usize> = Vec::with_capacity(count);
    for candidate in order {
        if picked.len() == count {
            break;
        }
        if picked.iter().all(|&p| p.abs_diff(candidate) >= gap) {
            picked.push(candidate);
        }
    }
    picked
}

/// Whether every undirected edge belongs to exactly two triangles.
fn is_closed(triangles: &[[u32; 3]]) -> bool {
    let mut uses: HashMap<(u32, u32), u32> = HashMap::new();
    for t in triangles {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *uses.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    !uses.is_empty() && uses.values().all(|&n| n == 2)
}

const PAIR_COLORS: [[u8; 3]; 3] = [[204, 121, 167], [230, 159, 0], [86, 180, 233]];
const PAIR_MARKERS: [Marker; 3] = [Marker::Circle, Marker::Triangle, Marker::Cross];

fn frame_plots(
    frames: &[FrameMetrics],
    methods: &[Method],
    pairs: &[(usize, usize)],
    animation: &str,
) -> Vec<(&'static str, LinePlot, String)> {
    let label = |m: usize| method_label(methods[m]);
    let mut plots = Vec::new();
    if !pairs.is_empty() {
        let series = pairs
            .iter()
            .enumerate()
            .map(|(k, &(i, j))| Series {
                name: format!("{} vs {}", label(j), label(i)),
                color: PAIR_COLORS[k % PAIR_COLORS.len()],
                marker: PAIR_MARKERS[k % PAIR_MARKERS.len()],
                points: frames
                    .iter()
                    .map(|f| (f64::from(f.time_s), f.max_displacement[k].1 * 100.0))
                    .collect(),
            })
            .collect();
        plots.push((
            "frame_displacement.png",
            LinePlot {
                title: format!("Largest distance between methods per frame ({animation})"),
                x_label: "time, s".to_owned(),
                y_label: "max vertex distance, % of bbox diagonal".to_owned(),
                series,
                reference_y: None,
                y_include: Some((0.0, 0.0)),
                legend_lower_left: false,
            },
            "For each frame, the largest distance between corresponding vertices of two methods' results, as a share of the model's bounding-box diagonal. Peaks are the poses where the choice of method shows; the frames rendered above are the highest peaks of the first pair.".to_owned(),
        ));
    }
    let per_method = |value: &dyn Fn(&FrameMetrics, usize) -> Option<f64>| {
        methods
            .iter()
            .enumerate()
            .map(|(m, &method)| {
                let (color, marker) = method_style(method);
                Series {
                    name: method_label(method).to_owned(),
                    color,
                    marker,
                    points: frames
                        .iter()
                        .map(|f| (f64::from(f.time_s), value(f, m).unwrap_or(f64::NAN)))
                        .collect(),
                }
            })
            .collect::<Vec<_>>()
    };
    plots.push((
        "frame_volume_ratio.png",
        LinePlot {
            title: format!("Volume ratio per frame ({animation})"),
            x_label: "time, s".to_owned(),
            y_label: "posed / bind-pose volume".to_owned(),
            series: per_method(&|f, m| f.volume_ratio[m]),
            reference_y: Some(1.0),
            y_include: None,
            legend_lower_left: false,
        },
        "Signed volume of all skinned triangles ÷ that of the bind pose, per frame and method (1 = kept, grey line). LBS tends to lose volume where joints twist and bend; DQS tends to keep or gain it. For an open mesh this is only indicative (see the note at the top).".to_owned(),
    ));
    plots.push((
        "frame_edge_ratio.png",
        LinePlot {
            title: format!("Mean edge ratio per frame ({animation})"),
            x_label: "time, s".to_owned(),
            y_label: "mean posed / bind-pose edge length".to_owned(),
            series: per_method(&|f, m| f.mean_edge_ratio[m]),
            reference_y: Some(1.0),
            y_include: None,
            legend_lower_left: false,
        },
        "Mean posed ÷ bind-pose length over the triangles' edges (1 = unchanged). Below 1 the skin shrinks (LBS's collapse), above 1 it stretches (DQS's bulge).".to_owned(),
    ));
    plots
}

fn frame_table(frames: &[FrameMetrics], labels: &[&str], pairs: &[(usize, usize)]) -> Block {
    let mut headers = vec!["frame".to_owned(), "time, s".to_owned()];
    for &(i, j) in pairs {
        headers.push(format!("max {}–{}, %", labels[j], labels[i]));
        headers.push(format!("rms {}–{}, %", labels[j], labels[i]));
    }
    for l in labels {
        headers.push(format!("volume {l}"));
    }
    for l in labels {
        headers.push(format!("edge mean {l}"));
    }
    let optional = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:.4}"));
    let rows = frames
        .iter()
        .map(|f| {
            let mut row = vec![f.frame.to_string(), format!("{:.3}", f.time_s)];
            for (max, rms) in f.max_displacement.iter().zip(&f.rms_displacement) {
                row.push(format!("{:.3}", max.1 * 100.0));
                row.push(format!("{:.3}", rms.1 * 100.0));
            }
            row.extend(f.volume_ratio.iter().map(|&v| optional(v)));
            row.extend(f.mean_edge_ratio.iter().map(|&v| optional(v)));
            row
        })
        .collect();
    Block::Table {
        caption: "Every frame: distances between methods (% of the bounding-box diagonal), volume and mean edge ratios against the bind pose".to_owned(),
        headers,
        rows,
    }
}
