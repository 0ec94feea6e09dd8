//! The report of a user's glTF model over an animation: every method skinned at evenly spaced
//! frames, per-frame displacement between methods and volume and edge ratios (as plots, a
//! table and [`FRAMES_CSV`]), the frames where the methods differ most rendered side by side
//! (no pose twice), or a plain statement where the methods agree, and `index.html`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::Vec3;
use skinblend_gltf::{Model, SceneSkinner};

use crate::error::{ReportError, Result};
use crate::evidence::{compare_figure_framed, Coloring};
use crate::folder::write_folder_atomically;
use crate::html::{Block, Page, Section};
use crate::image::write_atomically;
use crate::plot;

mod curves;
mod frames;
mod types;

use curves::{frame_plots, frame_table, frames_csv, FramePlot};
use frames::{
    closeup_bounds, first_pair_max, is_closed, measure, pick_frames, same_pose, skin_frame,
    Measured,
};
pub use types::{CompareOptions, FrameMetrics, Progress, Stage, AGREEMENT_SHARE, SAME_POSE_SHARE};

/// Name of the per-frame numbers written beside `index.html`.
pub const FRAMES_CSV: &str = "frames.csv";

/// What [`write_report`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareSummary {
    /// Files written, `index.html` last.
    pub files: Vec<PathBuf>,
    /// The animation's name (or `#index`).
    pub animation: String,
    /// Every frame's measurements.
    pub frames: Vec<FrameMetrics>,
    /// The frames rendered, most different first, no two the same pose.
    pub picked: Vec<usize>,
    /// Skinned vertices and triangles over all primitives.
    pub vertex_count: usize,
    /// Triangles over all skinned primitives.
    pub triangle_count: usize,
    /// Whether every edge is shared by exactly two triangles (volume is then meaningful).
    pub closed: bool,
    /// Whether every pair of methods agreed within [`AGREEMENT_SHARE`] at every frame.
    pub methods_agree: bool,
    /// Primitives whose centers of rotation were computed for CoR (once each, however many
    /// frames; 0 when the file carries them or CoR is not compared).
    pub rotation_centers_computed: usize,
}

/// Skins `file` over an animation with every method, measures each frame, renders the frames
/// where the methods differ most, plots the per-frame curves and writes [`FRAMES_CSV`] and
/// `index.html` into `dir`. `progress` is called as work advances.
///
/// The report is built beside `dir` and moved into place whole
/// ([`write_folder_atomically`]): a failure leaves an earlier report at `dir` as it was.
///
/// # Errors
/// [`ReportError::Gltf`] for a file that does not load; those of [`write_model_report`].
pub fn write_report(
    file: &Path,
    options: &CompareOptions,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<CompareSummary> {
    let model = Model::open(file).map_err(|source| ReportError::Gltf {
        what: "loading".to_owned(),
        source,
    })?;
    write_model_report(&model, &file.display().to_string(), options, dir, progress)
}

/// [`write_report`] of a model already loaded (and possibly changed in memory); `source` names
/// it in the report and in errors.
///
/// # Errors
/// [`ReportError::Gltf`] for an unknown animation; [`ReportError::Request`] for no animation,
/// no skinned triangles, zero frames or no methods, or a `dir` that is neither missing, empty
/// nor a report; [`ReportError::Skin`]; those of rendering, plotting and writing.
pub fn write_model_report(
    model: &Model,
    source: &str,
    options: &CompareOptions,
    dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<CompareSummary> {
    let Measured {
        animation,
        animation_name,
        scene,
        mut skinners,
        times_s,
        pairs,
        frames,
    } = measure(model, source, options, progress)?;
    let resolved;
    let options = if options.methods.is_empty() {
        resolved = CompareOptions {
            methods: model.skinnable_methods(options.dq_blend),
            ..options.clone()
        };
        &resolved
    } else {
        options
    };
    let clip = &model.animations()[animation];
    let shown = source;
    let largest = frames
        .iter()
        .flat_map(|f| f.max_displacement.iter().map(|&(_, d)| d))
        .fold(0.0f64, f64::max);
    let methods_agree = largest <= AGREEMENT_SHARE;

    // The picked frames' results, skinned once: for telling poses apart and for the renders.
    let mut posed_frames: HashMap<usize, Vec<Vec<Vec3>>> = HashMap::new();
    let mut posed_at = |frame: usize| -> Result<Vec<Vec<Vec3>>> {
        if let Some(posed) = posed_frames.get(&frame) {
            return Ok(posed.clone());
        }
        let posed = skin_frame(
            model,
            &scene,
            &mut skinners,
            animation,
            times_s[frame],
            shown,
        )?;
        posed_frames.insert(frame, posed.clone());
        Ok(posed)
    };
    let picked = pick_frames(&frames, options.picked_frames, &mut |a, b| {
        Ok(same_pose(&posed_at(a)?, &posed_at(b)?))
    })?;

    let labels: Vec<&str> = options.methods.iter().map(|&m| m.label()).collect();
    let methods_text = labels.join(" | ");
    let closed = is_closed(&scene.triangles);
    let files = write_folder_atomically(dir, |dir| {
        let mut written = Vec::new();
        let reference = labels[0];
        let second = labels.get(1).copied().unwrap_or(reference);
        let displacement_high = picked
            .iter()
            .filter_map(|&f| first_pair_max(&frames[f]))
            .fold(AGREEMENT_SHARE, f64::max) as f32;
        let figure_total = picked.len() * if methods_agree { 1 } else { 3 };
        let mut render_blocks = Vec::new();
        if methods_agree {
            render_blocks.push(Block::Paragraph(format!(
                "The methods agree on this model: over all {} frames, the largest distance between any two methods' results is {}% of the bounding-box diagonal, within the {}% under which this report calls results equal (rounding of 32-bit floats; far below a pixel of these pictures). This happens when no vertex blends joints, for example when every vertex follows a single joint with weight 1 (a rigid rig): LBS, DQS and CoR then apply the same transform, so the artefacts of blending joints cannot appear and any method gives this result; LBS is the cheapest. The frames below show the animation, coloured by surface area change against the bind pose.",
                frames.len(),
                plot::tick_label(largest * 100.0, largest * 100.0 / 10.0),
                plot::tick_label(AGREEMENT_SHARE * 100.0, AGREEMENT_SHARE * 10.0),
            )));
        }
        for (rank, &frame) in picked.iter().enumerate() {
            let time_s = times_s[frame];
            let named: Vec<(String, Vec<Vec3>)> = labels
                .iter()
                .map(|l| (*l).to_owned())
                .zip(posed_at(frame)?)
                .collect();
            let largest_here = first_pair_max(&frames[frame]).unwrap_or(0.0) * 100.0;
            let closeup = if methods_agree {
                None
            } else {
                closeup_bounds(&named)
            };
            let kinds: &[(&str, Coloring)] = if methods_agree {
                &[("area", Coloring::AreaChange)]
            } else {
                &[
                    ("area", Coloring::AreaChange),
                    ("displacement", Coloring::DisplacementFromFirst),
                    ("closeup", Coloring::AreaChange),
                ]
            };
            for &(kind, coloring) in kinds {
                let framed = if kind == "closeup" {
                    match closeup {
                        Some(bounds) => Some(bounds),
                        None => continue,
                    }
                } else {
                    None
                };
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
                let caption = if methods_agree {
                    format!(
                        "Frame {frame} of the animation: the methods agree here (largest distance {}% of the model's size), so the panels are the same. Colour is the change of surface area against the bind pose: blue where the skin shrinks, red where it stretches.",
                        plot::tick_label(largest_here, largest_here / 10.0)
                    )
                } else {
                    match (coloring, framed) {
                        (Coloring::AreaChange, Some(_)) => format!(
                            "A close-up of the same frame around the vertices where {reference} and {second} are furthest apart, same colours (surface area change against the bind pose). Compare the silhouettes: where LBS folds in or flattens, DQS swells out (the bulge); CoR keeps the shape without either as far as its centers allow."
                        ),
                        (Coloring::AreaChange, None) => format!(
                            "Rank {} of the frames where {reference} and {second} differ most (largest vertex distance {}% of the model's size). Colour is the change of surface area against the bind pose: look at the joints; blue where a method pinches or collapses the skin (LBS at twisting and bending joints), red where it swells (DQS's bulge).",
                            rank + 1,
                            plot::tick_label(largest_here, largest_here / 100.0)
                        ),
                        _ => format!(
                            "The same frame coloured by each vertex's distance from the {reference} result, as a share of the bounding-box diagonal (the {reference} panel is the reference, all zero). Look at which joints light up: that is where choosing a method matters for this model."
                        ),
                    }
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

        let mut measurement_blocks = Vec::new();
        for frame_plot in frame_plots(
            &frames,
            &options.methods,
            &pairs,
            &animation_name,
            methods_agree,
        ) {
            match frame_plot {
                FramePlot::Drawn {
                    file,
                    plot,
                    caption,
                } => {
                    let path = dir.join(file);
                    plot::draw(&plot)?.write_png(&path)?;
                    written.push(path);
                    measurement_blocks.push(Block::Figure {
                        src: file.to_owned(),
                        alt: plot.title.clone(),
                        caption,
                    });
                }
                FramePlot::LeftOut { why } => measurement_blocks.push(Block::Paragraph(why)),
            }
        }

        let csv_path = dir.join(FRAMES_CSV);
        write_atomically(&csv_path, frames_csv(&frames, &labels, &pairs).as_bytes())?;
        written.push(csv_path);
        let page = Page {
            title: format!("skinblend compare: {}", file_name(Path::new(shown))),
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
                    "not closed (some edges do not have exactly two triangles), so its volume ratio, where it has one, is only indicative"
                }
            ),
            sections: vec![
                Section {
                    heading: if methods_agree {
                        "The methods agree".to_owned()
                    } else {
                        "Where the methods differ most".to_owned()
                    },
                    blocks: render_blocks,
                },
                Section {
                    heading: "Over the animation".to_owned(),
                    blocks: measurement_blocks,
                },
                Section {
                    heading: "Per frame".to_owned(),
                    blocks: vec![
                        Block::Link {
                            href: FRAMES_CSV.to_owned(),
                            text: FRAMES_CSV.to_owned(),
                            description: FRAMES_CSV_COLUMNS.to_owned(),
                        },
                        frame_table(&frames, &labels, &pairs),
                    ],
                },
            ],
        };
        let index = dir.join("index.html");
        write_atomically(&index, page.render().as_bytes())?;
        written.push(index);
        Ok(written)
    })?;
    Ok(CompareSummary {
        files,
        animation: animation_name,
        frames,
        picked,
        vertex_count: scene.rest.len(),
        triangle_count: scene.triangles.len(),
        closed,
        methods_agree,
        rotation_centers_computed: skinners.iter().map(SceneSkinner::centers_computed).sum(),
    })
}

/// The per-frame measurements of [`write_model_report`] without the report: every method
/// skinned at `options.frames` evenly spaced times of the animation by the scene skinner, and
/// each frame measured (distance between methods, volume and edge ratios, as in
/// [`FRAMES_CSV`]). Returns the animation's name (or `#index`) and the frames. `progress` sees
/// [`Stage::CentersOfRotation`] and [`Stage::Skinning`].
///
/// # Errors
/// As [`write_model_report`], less rendering and writing.
pub fn measure_animation(
    model: &Model,
    source: &str,
    options: &CompareOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(String, Vec<FrameMetrics>)> {
    let measured = measure(model, source, options, progress)?;
    Ok((measured.animation_name, measured.frames))
}

/// What [`FRAMES_CSV`] holds, for the page (and docs/reports.md says the same).
const FRAMES_CSV_COLUMNS: &str = "the numbers of the table below as comma-separated values, one header row, then one row per frame. Columns: frame (from 0); time_s (animation time, seconds); for each pair of methods B and A, max_distance_B_A_percent and rms_distance_B_A_percent (largest and root-mean-square distance between corresponding vertices, % of the bounding-box diagonal of A's result); for each method M, volume_ratio_M (posed ÷ bind-pose signed volume of all skinned triangles; empty where the bind pose has no volume) and mean_edge_ratio_M (mean posed ÷ bind-pose edge length; empty where no edge has length). Numbers are written in full precision with a dot as the decimal mark.";

fn file_name(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame whose first pair is `distance` apart.
    fn frame(frame: usize, distance: f64) -> FrameMetrics {
        FrameMetrics {
            frame,
            time_s: frame as f32,
            max_displacement: vec![((0, 1), distance)],
            rms_displacement: vec![((0, 1), distance / 2.0)],
            volume_ratio: vec![None, None],
            mean_edge_ratio: vec![Some(1.0), Some(1.0)],
        }
    }

    #[test]
    fn a_loops_first_and_last_frame_are_shown_once() {
        // A looping clip: frame 10 is frame 0's pose again, and both differ most.
        let distances = [0.9, 0.1, 0.2, 0.5, 0.3, 0.2, 0.1, 0.4, 0.2, 0.1, 0.9];
        let frames: Vec<FrameMetrics> = distances
            .iter()
            .enumerate()
            .map(|(f, &d)| frame(f, d))
            .collect();
        let mut loop_ends = |a: usize, b: usize| Ok(a.min(b) == 0 && a.max(b) == 10);
        assert_eq!(
            pick_frames(&frames, 3, &mut loop_ends).expect("picked"),
            [0, 3, 7]
        );
        // The same frames without the check show the pose twice.
        let mut never = |_: usize, _: usize| Ok(false);
        assert_eq!(
            pick_frames(&frames, 3, &mut never).expect("picked"),
            [0, 10, 3]
        );
    }

    #[test]
    fn same_pose_is_within_the_named_tolerance() {
        let a = vec![vec![Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)]];
        let diagonal = 1.0;
        let within = vec![vec![
            Vec3::ZERO,
            Vec3::new(1.0 + SAME_POSE_SHARE * diagonal * 0.5, 0.0, 0.0),
        ]];
        let beyond = vec![vec![
            Vec3::ZERO,
            Vec3::new(1.0 + SAME_POSE_SHARE * diagonal * 4.0, 0.0, 0.0),
        ]];
        assert!(same_pose(&a, &within));
        assert!(!same_pose(&a, &beyond));
    }

    /// A 10 × 10 grid in the XY plane, 1 m apart.
    fn grid() -> Vec<Vec3> {
        (0..100)
            .map(|i| Vec3::new((i % 10) as f32, (i / 10) as f32, 0.0))
            .collect()
    }

    #[test]
    fn a_closeup_frames_the_region_that_differs_and_only_that() {
        let reference = grid();
        // The second result moves the vertices around (8, 8) off the plane.
        let mut moved = reference.clone();
        for p in &mut moved {
            if p.x >= 7.0 && p.y >= 7.0 {
                p.z += 0.5;
            }
        }
        let posed = vec![
            ("LBS".to_owned(), reference.clone()),
            ("DQS".to_owned(), moved),
        ];
        let closeup = closeup_bounds(&posed).expect("a region differs");
        for p in reference.iter().filter(|p| p.x >= 7.0 && p.y >= 7.0) {
            assert!(
                p.cmpge(closeup.min).all() && p.cmple(closeup.max).all(),
                "{p} is in the close-up {closeup:?}"
            );
        }
        assert!(
            (closeup.max - closeup.min).max_element() < 0.75 * 9.0,
            "zoomed in: {closeup:?}"
        );
        assert!(
            !Vec3::ZERO.cmpge(closeup.min).all(),
            "the far corner is out"
        );

        // Differences within the agreement threshold (rounding) are no region.
        let mut rounded = reference.clone();
        rounded[99].z += (AGREEMENT_SHARE as f32) * 0.5;
        let agreeing = vec![
            ("LBS".to_owned(), reference.clone()),
            ("DQS".to_owned(), rounded),
        ];
        assert_eq!(closeup_bounds(&agreeing), None);
        // Nor is a difference spread over the whole model.
        let shifted: Vec<Vec3> = reference.iter().map(|p| *p + Vec3::Z).collect();
        let everywhere = vec![("LBS".to_owned(), reference), ("DQS".to_owned(), shifted)];
        assert_eq!(closeup_bounds(&everywhere), None);
    }
}
