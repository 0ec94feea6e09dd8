//! The per-frame curves: plots, the CSV file and the HTML table.

use skinblend::Method;

use crate::evidence::method_style;
use crate::html::Block;
use crate::plot::{LinePlot, Marker, Series};

use super::types::FrameMetrics;

pub(super) const PAIR_COLORS: [[u8; 3]; 3] = [[204, 121, 167], [230, 159, 0], [86, 180, 233]];
pub(super) const PAIR_MARKERS: [Marker; 3] = [Marker::Circle, Marker::Triangle, Marker::Cross];

/// A per-frame plot, or why it is left out.
pub(super) enum FramePlot {
    /// Draw `plot` into `file`, shown with `caption`.
    Drawn {
        file: &'static str,
        plot: LinePlot,
        caption: String,
    },
    /// A sentence for the page saying which metric is left out and why.
    LeftOut { why: String },
}

pub(super) fn frame_plots(
    frames: &[FrameMetrics],
    methods: &[Method],
    pairs: &[(usize, usize)],
    animation: &str,
    methods_agree: bool,
) -> Vec<FramePlot> {
    // Where the methods agree, there is no collapse or bulge to point at: the lines coincide.
    let agreeing = "The methods agree on this model, so their lines coincide.";
    let label = |m: usize| methods[m].label();
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
        plots.push(FramePlot::Drawn {
            file: "frame_displacement.png",
            plot: LinePlot {
                title: format!("Largest distance between methods per frame ({animation})"),
                x_label: "time, s".to_owned(),
                y_label: "max vertex distance, % of bbox diagonal".to_owned(),
                series,
                reference_y: None,
                y_include: Some((0.0, 0.0)),
                legend_lower_left: false,
            },
            caption: format!(
                "For each frame, the largest distance between corresponding vertices of two methods' results, as a share of the model's bounding-box diagonal. {}",
                if methods_agree {
                    "Every distance here is within the agreement threshold stated above: rounding, not a difference between the methods."
                } else {
                    "Peaks are the poses where the choice of method shows; the frames rendered above are the highest peaks of the first pair."
                }
            ),
        });
    }
    let per_method = |value: &dyn Fn(&FrameMetrics, usize) -> Option<f64>| {
        methods
            .iter()
            .enumerate()
            .map(|(m, &method)| {
                let (color, marker) = method_style(method);
                Series {
                    name: method.label().to_owned(),
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
    let has_value = |series: &[Series]| {
        series
            .iter()
            .any(|s| s.points.iter().any(|&(_, y)| y.is_finite()))
    };
    let volume = per_method(&|f, m| f.volume_ratio[m]);
    plots.push(if has_value(&volume) {
        FramePlot::Drawn {
            file: "frame_volume_ratio.png",
            plot: LinePlot {
                title: format!("Volume ratio per frame ({animation})"),
                x_label: "time, s".to_owned(),
                y_label: "posed / bind-pose volume".to_owned(),
                series: volume,
                reference_y: Some(1.0),
                y_include: None,
                legend_lower_left: false,
            },
            caption: format!(
                "Signed volume of all skinned triangles ÷ that of the bind pose, per frame and method (1 = kept, grey line). {} For an open mesh this is only indicative (see the note at the top).",
                if methods_agree {
                    agreeing
                } else {
                    "LBS tends to lose volume where joints twist and bend; DQS tends to keep or gain it."
                }
            ),
        }
    } else {
        FramePlot::LeftOut {
            why: "The volume ratio is left out: the skinned triangles enclose no volume in the bind pose (their signed volume is zero, as for an open, flat or symmetric surface), so there is nothing to compare the posed volume with.".to_owned(),
        }
    });
    let edges = per_method(&|f, m| f.mean_edge_ratio[m]);
    plots.push(if has_value(&edges) {
        FramePlot::Drawn {
            file: "frame_edge_ratio.png",
            plot: LinePlot {
                title: format!("Mean edge ratio per frame ({animation})"),
                x_label: "time, s".to_owned(),
                y_label: "mean posed / bind-pose edge length".to_owned(),
                series: edges,
                reference_y: Some(1.0),
                y_include: None,
                legend_lower_left: false,
            },
            caption: format!(
                "Mean posed ÷ bind-pose length over the triangles' edges (1 = unchanged). {}",
                if methods_agree {
                    agreeing
                } else {
                    "Below 1 the skin shrinks (LBS's collapse), above 1 it stretches (DQS's bulge)."
                }
            ),
        }
    } else {
        FramePlot::LeftOut {
            why: "The mean edge ratio is left out: no triangle edge has a length in the bind pose, so there is no ratio to take.".to_owned(),
        }
    });
    plots
}

/// [`FRAMES_CSV`](super::FRAMES_CSV): the header row and one row per frame, columns as
/// [`FRAMES_CSV_COLUMNS`](super::FRAMES_CSV_COLUMNS) says.
pub(super) fn frames_csv(
    frames: &[FrameMetrics],
    labels: &[&str],
    pairs: &[(usize, usize)],
) -> String {
    let mut header = vec!["frame".to_owned(), "time_s".to_owned()];
    for &(i, j) in pairs {
        header.push(format!("max_distance_{}_{}_percent", labels[j], labels[i]));
        header.push(format!("rms_distance_{}_{}_percent", labels[j], labels[i]));
    }
    header.extend(labels.iter().map(|l| format!("volume_ratio_{l}")));
    header.extend(labels.iter().map(|l| format!("mean_edge_ratio_{l}")));
    let mut csv = header.join(",");
    csv.push('\n');
    let optional = |v: Option<f64>| {
        v.filter(|v| v.is_finite())
            .map_or_else(String::new, |v| v.to_string())
    };
    for f in frames {
        let mut row = vec![f.frame.to_string(), f.time_s.to_string()];
        for (max, rms) in f.max_displacement.iter().zip(&f.rms_displacement) {
            row.push((max.1 * 100.0).to_string());
            row.push((rms.1 * 100.0).to_string());
        }
        row.extend(f.volume_ratio.iter().map(|&v| optional(v)));
        row.extend(f.mean_edge_ratio.iter().map(|&v| optional(v)));
        csv.push_str(&row.join(","));
        csv.push('\n');
    }
    csv
}

pub(super) fn frame_table(
    frames: &[FrameMetrics],
    labels: &[&str],
    pairs: &[(usize, usize)],
) -> Block {
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
