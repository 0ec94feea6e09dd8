//! The evidence report: the core's fixtures rendered side by side per method, the artefact
//! curves plotted against the angle, the evidence table, all in one folder with `index.html`.

use std::path::{Path, PathBuf};

use glam::Vec3;
use skinblend::evidence::{self, EvidenceRow};
use skinblend::fixtures::{self, Fixture};
use skinblend::{CpuBackend, Method};

use crate::color::{self, ColorMap};
use crate::error::{ReportError, Result};
use crate::figure::{self, Panel};
use crate::folder::write_folder_atomically;
use crate::html::{Block, Page, Section};
use crate::image::{write_atomically, RgbImage};
use crate::plot::{self, LinePlot, Marker, Series};
use crate::render::{self, Bounds, Camera, MeshView};

/// A method's colour (Okabe–Ito, readable by colour-blind readers) and marker in plots.
#[must_use]
pub fn method_style(method: Method) -> ([u8; 3], Marker) {
    match method {
        Method::Linear => ([213, 94, 0], Marker::Circle),
        Method::DualQuaternion => ([0, 114, 178], Marker::Triangle),
        Method::CenterOfRotation => ([0, 158, 115], Marker::Cross),
        Method::Blended => ([204, 121, 167], Marker::Square),
    }
}

/// Height of each rendered panel, pixels; the width follows the mesh's aspect.
pub const PANEL_HEIGHT: u32 = 460;

/// The panel size that fits `bounds` at [`PANEL_HEIGHT`] (width clamped to 160..=640).
#[must_use]
pub fn panel_size(bounds: &Bounds) -> (u32, u32) {
    let aspect = Camera::three_quarter_aspect(bounds);
    let width = (PANEL_HEIGHT as f32 * aspect * 1.05)
        .round()
        .clamp(160.0, 640.0) as u32;
    (width, PANEL_HEIGHT)
}

/// What a comparison figure colours its meshes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coloring {
    /// Plain shading.
    None,
    /// Edge-length change against the rest pose ([`color::edge_strain`]), ±25%.
    EdgeStrain,
    /// Surface area change against the rest pose ([`color::area_change`]), ±40%.
    AreaChange,
    /// Distance from the first method's result, % of the bounding-box diagonal.
    DisplacementFromFirst,
}

/// Colour map of [`Coloring::EdgeStrain`].
#[must_use]
pub fn edge_strain_map() -> ColorMap {
    ColorMap::diverging(0.25, "edge length change against the rest pose, %", 100.0)
}

/// Colour map of [`Coloring::AreaChange`].
#[must_use]
pub fn area_change_map() -> ColorMap {
    ColorMap::diverging(0.4, "surface area change against the rest pose, %", 100.0)
}

/// Renders one posed mesh per method side by side, framed alike (the union of their bounds),
/// coloured as `coloring` says, under `heading`.
///
/// `posed[i]` is method `i`'s result; `rest` the rest pose (for strain and area maps).
///
/// # Errors
/// [`ReportError::Request`] for no results or an empty mesh; those of [`render::render`] and
/// [`figure::side_by_side`].
pub fn compare_figure(
    heading: &str,
    rest: &[Vec3],
    triangles: &[[u32; 3]],
    posed: &[(String, Vec<Vec3>)],
    coloring: Coloring,
    displacement_high: f32,
) -> Result<RgbImage> {
    compare_figure_framed(
        heading,
        rest,
        triangles,
        posed,
        coloring,
        displacement_high,
        None,
    )
}

/// [`compare_figure`] with the camera framing `frame` instead of the whole meshes (a close-up;
/// geometry outside is clipped). Displacements stay relative to the whole meshes' diagonal.
///
/// # Errors
/// As [`compare_figure`].
pub fn compare_figure_framed(
    heading: &str,
    rest: &[Vec3],
    triangles: &[[u32; 3]],
    posed: &[(String, Vec<Vec3>)],
    coloring: Coloring,
    displacement_high: f32,
    frame: Option<Bounds>,
) -> Result<RgbImage> {
    let whole = posed
        .iter()
        .filter_map(|(_, p)| Bounds::of(p))
        .reduce(Bounds::union)
        .ok_or_else(|| ReportError::Request {
            what: format!("figure {heading:?}: no finite mesh to frame"),
        })?;
    let bounds = frame.unwrap_or(whole);
    let (width, height) = panel_size(&bounds);
    let camera = Camera::three_quarter(&bounds, width, height);
    let diagonal = whole.diagonal();
    let map = match coloring {
        Coloring::None => None,
        Coloring::EdgeStrain => Some(edge_strain_map()),
        Coloring::AreaChange => Some(area_change_map()),
        Coloring::DisplacementFromFirst => Some(ColorMap::sequential(
            displacement_high,
            &format!(
                "distance from the {} result, % of the bounding-box diagonal",
                posed[0].0
            ),
            100.0,
        )),
    };
    let mut panels = Vec::with_capacity(posed.len());
    for (label, positions) in posed {
        let values = match coloring {
            Coloring::None => None,
            Coloring::EdgeStrain => Some(color::edge_strain(rest, positions, triangles)),
            Coloring::AreaChange => Some(color::area_change(rest, positions, triangles)),
            Coloring::DisplacementFromFirst => {
                Some(color::displacement(&posed[0].1, positions, diagonal))
            }
        };
        let colors = match (&values, &map) {
            (Some(v), Some(m)) => Some((v.as_slice(), m)),
            _ => None,
        };
        let image = render::render(
            &MeshView {
                name: &format!("{heading}, {label}"),
                positions,
                triangles,
                colors,
            },
            &camera,
        )?;
        panels.push(Panel {
            title: label.clone(),
            image,
        });
    }
    figure::side_by_side(heading, &panels, map.as_ref())
}

/// Skins `fixture` at `angle_deg` with `method` as the evidence table does (the core's
/// [`evidence::skin_fixture`] on the CPU: default options, the fixture's joint centers;
/// `rotation_centers` for CoR) and returns the positions (only positions are skinned).
///
/// # Errors
/// [`ReportError::Skin`].
pub fn skin_fixture(
    fixture: &Fixture,
    angle_deg: f32,
    method: Method,
    rotation_centers: &[Vec3],
) -> Result<Vec<Vec3>> {
    let what = || {
        format!(
            "skinning {} at {angle_deg}° with {}",
            fixture.name,
            method.name()
        )
    };
    let centers = if method.needs_rotation_centers() {
        rotation_centers
    } else {
        &[]
    };
    let mesh = evidence::fixture_mesh(fixture, centers)
        .map_err(ReportError::skin(what()))?
        .without_normals()
        .without_tangents();
    Ok(
        evidence::skin_fixture(&CpuBackend, &mut (), &mesh, fixture, angle_deg, method)
            .map_err(ReportError::skin(what()))?
            .positions,
    )
}

/// One rendered fixture figure of the report.
#[derive(Debug, Clone, Copy)]
struct FixtureFigure {
    fixture: fn() -> Fixture,
    angles_deg: &'static [f32],
    coloring: Coloring,
    /// Added to the file name after the angle.
    suffix: &'static str,
}

const FIGURES: [FixtureFigure; 4] = [
    FixtureFigure {
        fixture: fixtures::twist_fine,
        angles_deg: &[0.0, 90.0, 135.0, 180.0],
        coloring: Coloring::AreaChange,
        suffix: "",
    },
    FixtureFigure {
        fixture: fixtures::twist_fine,
        angles_deg: &[180.0],
        coloring: Coloring::EdgeStrain,
        suffix: "_edges",
    },
    FixtureFigure {
        fixture: fixtures::bend_fine,
        angles_deg: &[45.0, 90.0, 135.0],
        coloring: Coloring::AreaChange,
        suffix: "",
    },
    FixtureFigure {
        fixture: fixtures::shear_cap,
        angles_deg: &[0.0, 90.0],
        coloring: Coloring::DisplacementFromFirst,
        suffix: "",
    },
];

/// Angles of the plotted curves, degrees: 0 to 180 in steps of 5.
#[must_use]
pub fn plot_angles_deg() -> Vec<f32> {
    (0..=36).map(|i| i as f32 * 5.0).collect()
}

/// Writes the evidence report into `dir` (created if missing): the renders, the plots and
/// `index.html` last. Returns the files written, in order.
///
/// The report is built beside `dir` and moved into place whole
/// ([`write_folder_atomically`]): a failure leaves an earlier report at `dir` as it was.
///
/// # Errors
/// Those of [`write_folder_atomically`] (a `dir` that is neither missing, empty nor a report);
/// those of the core (a bug), the renderer and the plots.
pub fn write_report(dir: &Path) -> Result<Vec<PathBuf>> {
    write_folder_atomically(dir, write_report_into)
}

/// [`write_report`] into the existing folder `dir`.
fn write_report_into(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut save = |name: &str, image: &RgbImage| -> Result<String> {
        let path = dir.join(name);
        image.write_png(&path)?;
        written.push(path);
        Ok(name.to_owned())
    };
    let labels: Vec<&str> = Method::ALL.iter().map(|&m| m.label()).collect();
    let methods_text = labels.join(" | ");

    let mut render_blocks = Vec::new();
    for figure in FIGURES {
        let fixture = (figure.fixture)();
        let centers = evidence::fixture_rotation_centers(&fixture).map_err(ReportError::skin(
            format!("centers of rotation of {}", fixture.name),
        ))?;
        for &angle in figure.angles_deg {
            let posed = Method::ALL
                .iter()
                .map(|&m| {
                    Ok((
                        m.label().to_owned(),
                        skin_fixture(&fixture, angle, m, &centers)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            let heading = format!("{} at {angle}°: {methods_text}", fixture.name);
            let image = compare_figure(
                &heading,
                &fixture.positions,
                &fixture.triangles,
                &posed,
                figure.coloring,
                0.05,
            )?;
            let name = save(
                &format!("{}_{angle:03}{}.png", fixture.name, figure.suffix),
                &image,
            )?;
            render_blocks.push(Block::Figure {
                alt: heading.clone(),
                caption: fixture_caption(&fixture, angle, figure.coloring),
                src: name,
            });
        }
    }

    let mut plot_blocks = Vec::new();
    for (name, plot, caption) in plots()? {
        let file = save(name, &plot::draw(&plot)?)?;
        plot_blocks.push(Block::Figure {
            src: file,
            alt: plot.title.clone(),
            caption,
        });
    }

    let rows = evidence::rows().map_err(ReportError::skin("the evidence table"))?;
    let page = Page {
        title: "skinblend evidence: LBS, DQS and centers of rotation side by side".to_owned(),
        intro: format!(
            "Every picture and number here comes from the procedural rigs of the skinblend core \
             (cylinders of radius {} m and length {} m along +Y), skinned by each method ({}) with \
             the same inputs. Renders use a fixed three-quarter orthographic camera framing all \
             methods alike, so the same pixel is the same place in every panel.",
            fixtures::REST_RADIUS,
            fixtures::LENGTH,
            methods_text
        ),
        sections: vec![
            Section {
                heading: "Renders".to_owned(),
                blocks: render_blocks,
            },
            Section {
                heading: "Plots".to_owned(),
                blocks: plot_blocks,
            },
            Section {
                heading: "Tables".to_owned(),
                blocks: vec![evidence_table(&rows), reference_table(&rows)],
            },
        ],
    };
    let index = dir.join("index.html");
    write_atomically(&index, page.render().as_bytes())?;
    written.push(index);
    Ok(written)
}

fn fixture_caption(fixture: &Fixture, angle: f32, coloring: Coloring) -> String {
    match (fixture.name, coloring) {
        ("twist_fine", _) if angle == 0.0 => "The bind pose: every method returns the input, so the three panels are identical and uncoloured (no triangle changed area). The reference for the twists below.".to_owned(),
        ("twist_fine", Coloring::EdgeStrain) => format!(
            "The same {angle}° twist coloured by edge-length change. DQS and CoR keep the ring round, but the triangles of the twisted band shear, so the edges across it lengthen (red): a mean edge ratio above 1. Near LBS's neck the edges around the ring shrink while those along the cylinder stretch towards the collapsed centre."
        ),
        ("twist_fine", _) => format!(
            "Joint 1 twisted {angle}° about the bone; colour is the change of surface area around each vertex. Look at the middle of each cylinder: LBS pinches it (the candy wrapper: the surface shrinks, blue; at 180° the joint ring collapses onto the axis), while DQS and CoR keep it round and its area nearly unchanged."
        ),
        ("bend_fine", _) => format!(
            "Joint 1 bent {angle}° about +X; colour is the change of surface area around each vertex. Look at the elbow's outer corner: LBS flattens it and loses volume there (the collapse), DQS swells it into a rounder, larger knuckle (the bulge), CoR stays closer to the LBS silhouette without its collapse. Blue on the inside of the bend is skin folding."
        ),
        _ => format!(
            "The shear-and-cap rig at {angle}°: joints with uniform scale, non-uniform scale, shear and a mirror, blended with their neighbours. Colour is each vertex's distance from the LBS result (the LBS panel is the reference, all zero): look where DQS and CoR move away from LBS, at the blends between the non-rigid joints and at the mirrored, twisting top."
        ),
    }
}

/// The three evidence plots: file name, plot, caption.
fn plots() -> Result<Vec<(&'static str, LinePlot, String)>> {
    let twist = fixtures::twist_fine();
    let bend = fixtures::bend_fine();
    let twist_centers = evidence::fixture_rotation_centers(&twist)
        .map_err(ReportError::skin("centers of rotation of twist_fine"))?;
    let bend_centers = evidence::fixture_rotation_centers(&bend)
        .map_err(ReportError::skin("centers of rotation of bend_fine"))?;
    let curve = |fixture: &Fixture, centers: &[Vec3], value: &dyn Fn(&EvidenceRow) -> f64| {
        Method::ALL
            .iter()
            .map(|&method| {
                let (color, marker) = method_style(method);
                let points = plot_angles_deg()
                    .into_iter()
                    .map(|angle| {
                        let row = evidence::measure_with_centers(fixture, angle, method, centers)
                            .map_err(ReportError::skin(format!(
                            "measuring {} at {angle}° with {}",
                            fixture.name,
                            method.name()
                        )))?;
                        Ok((f64::from(angle), value(&row)))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Series {
                    name: method.label().to_owned(),
                    color,
                    marker,
                    points,
                })
            })
            .collect::<Result<Vec<_>>>()
    };
    Ok(vec![
        (
            "candy_wrapper_radius.png",
            LinePlot {
                title: "Candy wrapper: joint-ring radius against twist (twist_fine)".to_owned(),
                x_label: "twist angle, degrees".to_owned(),
                y_label: "smallest ring radius, % of rest".to_owned(),
                series: curve(&twist, &twist_centers, &|r| r.candy_wrapper_ratio * 100.0)?,
                reference_y: Some(100.0),
                y_include: Some((0.0, 100.0)),
                legend_lower_left: true,
            },
            "The smallest distance of the 0.5/0.5 joint ring from the bone axis as the joint twists. LBS falls to 0% at 180° (the ring collapses: the candy wrapper); DQS and CoR stay at 100% (their lines coincide: CoR is dashed over DQS).".to_owned(),
        ),
        (
            "bend_edge_ratio.png",
            LinePlot {
                title: "Mean edge ratio against bend (bend_fine)".to_owned(),
                x_label: "bend angle, degrees".to_owned(),
                y_label: "mean posed / rest edge length".to_owned(),
                series: curve(&bend, &bend_centers, &|r| r.edge_ratio.mean)?,
                reference_y: Some(1.0),
                y_include: None,
                legend_lower_left: false,
            },
            "Mean posed ÷ rest length over the triangles' edges as the elbow bends (1 = unchanged, grey line). Every method stretches the outside of the elbow; DQS and CoR stretch it most (the skin swells out there: the bulge), LBS least because its elbow collapses instead.".to_owned(),
        ),
        (
            "bend_volume_ratio.png",
            LinePlot {
                title: "Volume ratio against bend (bend_fine, capped)".to_owned(),
                x_label: "bend angle, degrees".to_owned(),
                y_label: "posed / rest volume".to_owned(),
                series: curve(&bend, &bend_centers, &|r| r.volume_ratio.unwrap_or(f64::NAN))?,
                reference_y: Some(1.0),
                y_include: None,
                legend_lower_left: true,
            },
            "Enclosed volume ÷ rest volume of the capped cylinder as it bends (1 = kept, grey line). LBS loses the most (about 7% at 180°: the collapsing elbow); DQS keeps the most, its bulge making up for the fold; CoR lies between.".to_owned(),
        ),
    ])
}

fn evidence_table(rows: &[EvidenceRow]) -> Block {
    let headers = [
        "fixture",
        "angle, °",
        "method",
        "ring radius, % of rest",
        "edge ratio min",
        "edge ratio mean",
        "edge ratio max",
        "volume ratio",
        "pinch (min bone distance / radius)",
        "bulge (max bone distance / radius)",
        "non-rigid joints",
        "sign flips",
    ];
    Block::Table {
        caption: "The evidence table (skinblend evidence): every fixture, angle and method"
            .to_owned(),
        headers: headers.iter().map(|h| (*h).to_owned()).collect(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.fixture.to_owned(),
                    format!("{}", r.angle_deg),
                    r.method.label().to_owned(),
                    format!("{:.1}", r.candy_wrapper_ratio * 100.0),
                    format!("{:.3}", r.edge_ratio.min),
                    format!("{:.3}", r.edge_ratio.mean),
                    format!("{:.3}", r.edge_ratio.max),
                    r.volume_ratio
                        .map_or_else(|| "–".to_owned(), |v| format!("{v:.3}")),
                    format!("{:.3}", r.bone_distance_ratio.min),
                    format!("{:.3}", r.bone_distance_ratio.max),
                    r.diagnostics.non_rigid_joints.to_string(),
                    r.diagnostics.sign_flips.to_string(),
                ]
            })
            .collect(),
    }
}

fn reference_table(rows: &[EvidenceRow]) -> Block {
    Block::Table {
        caption: "Reference figures for twist_coarse at 180° beside skinblend's".to_owned(),
        headers: ["measurement", "reference", "skinblend", "agrees", "remark"]
            .iter()
            .map(|h| (*h).to_owned())
            .collect(),
        rows: evidence::reference_comparison(rows)
            .into_iter()
            .map(|c| {
                vec![
                    c.what.to_owned(),
                    c.reference.to_owned(),
                    c.ours,
                    if c.agrees { "yes" } else { "NO" }.to_owned(),
                    c.remark.to_owned(),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the twist DQS and CoR keep the ring alike: the candy-wrapper plot draws CoR dashed
    /// over DQS and says so; on the bend they differ, and every line is solid.
    #[test]
    fn the_report_plots_mark_coinciding_lines() {
        let plots = plots().expect("plots");
        for (name, plot, _) in &plots {
            let styles = plot::series_styles(plot);
            let dashed: Vec<&str> = styles
                .iter()
                .filter(|s| s.dashed())
                .map(|s| s.label.as_str())
                .collect();
            if *name == "candy_wrapper_radius.png" {
                assert_eq!(dashed, ["CoR (dashed: coincides with DQS)"], "{name}");
            } else {
                assert!(dashed.is_empty(), "{name}: {dashed:?}");
            }
        }
    }
}
