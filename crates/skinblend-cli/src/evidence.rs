//! `skinblend evidence`: LBS, DQS and CoR measured on the built-in rigs, as a table that fits
//! 100 columns (`--wide`: one row per fixture and angle, methods side by side; `--json`: the rows
//! for scripts), then the reference figures of another engine's DQS documentation beside ours.

use std::io::Write;

use anyhow::Result;
use skinblend::evidence::{self, EvidenceRow, ReferenceComparison};

use crate::gpu;

pub fn run(json: bool, wide: bool, on_gpu: bool) -> Result<()> {
    let (rows, gpu_note) = if on_gpu {
        let gpu = gpu::evidence_rows()?;
        let cpu_methods: Vec<&str> = gpu.cpu_methods.iter().map(|m| m.name()).collect();
        let note = format!(
            "GPU: {}; largest relative difference of GPU from CPU vertices {:.1e}{}\n",
            gpu.adapter,
            gpu.max_relative_difference,
            if cpu_methods.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} on the CPU: this adapter cannot run its kernel)",
                    cpu_methods.join(", ")
                )
            }
        );
        (gpu.rows, Some(note))
    } else {
        (evidence::rows()?, None)
    };
    let mut out = std::io::stdout().lock();
    if json {
        let array: Vec<serde_json::Value> = rows.iter().map(row_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&array)?)?;
    } else {
        let comparisons = evidence::reference_comparison(&rows);
        if wide {
            write!(out, "{}", evidence_table(&rows))?;
            write!(out, "\n{}", reference_table(&comparisons))?;
        } else {
            write!(out, "{}", evidence_table_narrow(&rows))?;
            write!(out, "\n{}", reference_table_narrow(&comparisons))?;
        }
        if let Some(note) = gpu_note {
            let note = if wide {
                note
            } else {
                wrap(&note, NARROW_COLUMNS)
            };
            write!(out, "\n{note}")?;
        }
    }
    Ok(())
}

fn row_json(row: &EvidenceRow) -> serde_json::Value {
    serde_json::json!({
        "fixture": row.fixture,
        "angle_deg": row.angle_deg,
        "method": row.method.name(),
        "candy_wrapper_ratio": row.candy_wrapper_ratio,
        "edge_ratio_min": row.edge_ratio.min,
        "edge_ratio_mean": row.edge_ratio.mean,
        "edge_ratio_max": row.edge_ratio.max,
        "edge_count": row.edge_ratio.count,
        "volume_ratio": row.volume_ratio,
        "ring_distance_ratio_min": row.ring_distance_ratio.min,
        "ring_distance_ratio_max": row.ring_distance_ratio.max,
        "ring_pair_count": row.ring_distance_ratio.count,
        "bone_distance_ratio_min": row.bone_distance_ratio.min,
        "bone_distance_ratio_max": row.bone_distance_ratio.max,
        "non_rigid_joints": row.diagnostics.non_rigid_joints,
        "sign_flips": row.diagnostics.sign_flips,
        "singular_normal_matrices": row.diagnostics.singular_normal_matrices,
        "unweighted_vertices": row.diagnostics.unweighted_vertices,
    })
}

/// The side-by-side table: one line per fixture and angle, LBS | DQS | CoR per metric.
fn evidence_table(rows: &[EvidenceRow]) -> String {
    let mut text = String::new();
    text.push_str(
        "Each cell is LBS | DQS | CoR (centers of rotation). radius: smallest distance of the joint\n\
         ring from its axis, as a share of the rest radius (the candy wrapper). edges: posed/rest\n\
         length over the triangles' edges (three per triangle) min / mean / max. volume: posed/rest\n\
         (closed meshes). ring pairs: posed/rest distance over all joint-ring pairs, min..max. bone:\n\
         distance of blended vertices from the posed bones / rest radius, min (pinch) and max\n\
         (bulge). diag: non-rigid joints, sign flips, singular normal matrices.\n\n",
    );
    text.push_str(&format!(
        "{:<13} {:>5}  {:>24}  {:>56}  {:>21}  {:>46}  {:>21}  {:>21}  {}\n",
        "fixture",
        "angle",
        "radius",
        "edges min/mean/max",
        "volume",
        "ring pairs",
        "pinch",
        "bulge",
        "diag"
    ));
    let methods = skinblend::Method::ALL.len();
    for group in rows.chunks(methods) {
        debug_assert!(group.iter().map(|r| r.method).eq(skinblend::Method::ALL));
        let Some(first) = group.first() else { continue };
        let cells = |cell: &dyn Fn(&EvidenceRow) -> String| {
            group.iter().map(cell).collect::<Vec<_>>().join(" | ")
        };
        let volume = |r: &EvidenceRow| r.volume_ratio.map_or("-".into(), |v| format!("{v:.3}"));
        let edges = |r: &EvidenceRow| {
            format!(
                "{:.3}/{:.3}/{:.3}",
                r.edge_ratio.min, r.edge_ratio.mean, r.edge_ratio.max
            )
        };
        let ring = |r: &EvidenceRow| {
            format!(
                "{:.4}..{:.4}",
                r.ring_distance_ratio.min, r.ring_distance_ratio.max
            )
        };
        let diag = |r: &EvidenceRow| {
            format!(
                "{}/{}/{}",
                r.diagnostics.non_rigid_joints,
                r.diagnostics.sign_flips,
                r.diagnostics.singular_normal_matrices
            )
        };
        text.push_str(&format!(
            "{:<13} {:>4}°  {:>24}  {:>56}  {:>21}  {:>46}  {:>21}  {:>21}  {}\n",
            first.fixture,
            first.angle_deg,
            cells(&|r| format!("{:.1}%", r.candy_wrapper_ratio * 100.0)),
            cells(&edges),
            cells(&volume),
            cells(&ring),
            cells(&|r| format!("{:.3}", r.bone_distance_ratio.min)),
            cells(&|r| format!("{:.3}", r.bone_distance_ratio.max)),
            cells(&diag),
        ));
    }
    text
}

/// Heading of the reference figures: what they are and where they come from.
const REFERENCE_HEADING: &str =
    "Reference figures for twist_coarse at 180° (from another engine's \
                                 DQS documentation) beside skinblend's:";

/// The reference figures beside ours, one line each (wide: about 130 columns).
fn reference_table(comparisons: &[ReferenceComparison]) -> String {
    let mut text = format!("{REFERENCE_HEADING}\n");
    text.push_str(&format!(
        "{:<62} {:>24} {:>24}  {}\n",
        "measurement", "reference", "skinblend", "agrees"
    ));
    for c in comparisons {
        text.push_str(&format!(
            "{:<62} {:>24} {:>24}  {}{}\n",
            c.what,
            c.reference,
            c.ours,
            if c.agrees { "yes" } else { "NO" },
            if c.remark.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.remark)
            }
        ));
    }
    text
}

/// Columns the default output of `evidence` fits in.
pub(crate) const NARROW_COLUMNS: usize = 100;

/// The reference figures beside ours in [`NARROW_COLUMNS`]: the measurement on one line, the
/// figures indented below it.
fn reference_table_narrow(comparisons: &[ReferenceComparison]) -> String {
    let mut text = wrap(REFERENCE_HEADING, NARROW_COLUMNS);
    for c in comparisons {
        text.push_str(&wrap(c.what, NARROW_COLUMNS));
        let line = format!(
            "    reference {}, skinblend {}: {}{}",
            c.reference,
            c.ours,
            if c.agrees { "agrees" } else { "DIFFERS" },
            if c.remark.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.remark)
            }
        );
        text.push_str(&wrap(&line, NARROW_COLUMNS));
    }
    text
}

/// The table in [`NARROW_COLUMNS`]: one line per fixture, angle and method.
fn evidence_table_narrow(rows: &[EvidenceRow]) -> String {
    let mut text = String::new();
    text.push_str(&wrap(
        "One line per fixture, angle and method (LBS, DQS, CoR: centers of rotation). radius: \
         smallest distance of the joint ring from its axis, as a share of the rest radius (the \
         candy wrapper). edges: posed/rest length over the triangles' edges, min/mean/max. \
         volume: posed/rest (closed meshes). ring pairs: posed/rest distance over all joint-ring \
         pairs, min..max. pinch, bulge: distance of blended vertices from the posed bones / rest \
         radius, min and max. diag: non-rigid joints/sign flips/singular normal matrices. \
         --wide: LBS | DQS | CoR side by side; --json: every figure.",
        NARROW_COLUMNS,
    ));
    text.push('\n');
    text.push_str(&format!(
        "{:<12}  {:>5}  {:<3}  {:>6}  {:>17}  {:>6}  {:>14}  {:>5}  {:>5}  {}\n",
        "fixture", "angle", "", "radius", "edges", "volume", "ring pairs", "pinch", "bulge", "diag"
    ));
    let mut previous: Option<(&str, f32)> = None;
    for r in rows {
        let key = (r.fixture, r.angle_deg);
        let (fixture, angle) = if previous == Some(key) {
            (String::new(), String::new())
        } else {
            (r.fixture.to_owned(), format!("{}°", r.angle_deg))
        };
        previous = Some(key);
        let method = r.method.label();
        text.push_str(&format!(
            "{:<12}  {:>5}  {:<3}  {:>6}  {:>17}  {:>6}  {:>14}  {:>5.3}  {:>5.3}  {}/{}/{}\n",
            fixture,
            angle,
            method,
            format!("{:.1}%", r.candy_wrapper_ratio * 100.0),
            format!(
                "{:.3}/{:.3}/{:.3}",
                r.edge_ratio.min, r.edge_ratio.mean, r.edge_ratio.max
            ),
            r.volume_ratio.map_or("-".into(), |v| format!("{v:.3}")),
            format!(
                "{:.4}..{:.4}",
                r.ring_distance_ratio.min, r.ring_distance_ratio.max
            ),
            r.bone_distance_ratio.min,
            r.bone_distance_ratio.max,
            r.diagnostics.non_rigid_joints,
            r.diagnostics.sign_flips,
            r.diagnostics.singular_normal_matrices,
        ));
    }
    text
}

/// `text` as lines of at most `columns` characters, broken at spaces (a word longer than a
/// line stays whole); continuation lines keep the first line's indentation. Ends with a
/// newline.
fn wrap(text: &str, columns: usize) -> String {
    let indent: String = text.chars().take_while(|c| *c == ' ').collect();
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let width = line.chars().count();
        if width > 0 && width + 1 + word.chars().count() > columns {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if line.is_empty() {
            line.push_str(&indent);
        } else {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}
