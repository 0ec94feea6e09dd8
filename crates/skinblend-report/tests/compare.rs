//! The comparison report of a glTF animation: a full report for every sample model, its
//! per-frame numbers as CSV, a report replaced whole or not at all, and a plain statement where
//! the methods agree.
//!
//! Sample-model tests skip with a message when ../shared/models is missing, except under
//! `CI=true`, where they fail. Few frames keep them affordable in CI.

use std::collections::BTreeMap;
use std::path::Path;

use skinblend::Influences;
use skinblend_gltf::Model;
use skinblend_report::compare::{
    write_model_report, write_report, CompareOptions, CompareSummary, Progress, Stage,
    AGREEMENT_SHARE, FRAMES_CSV,
};
use skinblend_testkit::{file_names, models_dir, ScratchDir, SAMPLES};

/// Few frames: enough for a loop's two ends, a middle and the plots' lines.
fn few_frames() -> CompareOptions {
    CompareOptions {
        frames: 5,
        picked_frames: 2,
        ..CompareOptions::default()
    }
}

/// Every file of `dir` and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    file_names(dir)
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(dir.join(&name)).expect("file");
            (name, bytes)
        })
        .collect()
}

/// Checks that `dir` holds a full report: `index.html` last, every image it names present and
/// a PNG, every PNG on the page, the CSV linked; returns the page.
fn assert_full_report(dir: &Path, summary: &CompareSummary) -> String {
    let index = dir.join("index.html");
    assert_eq!(summary.files.last(), Some(&index), "index.html last");
    let html = std::fs::read_to_string(&index).expect("index.html");
    let pngs: Vec<String> = file_names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert!(
        pngs.len() >= 3,
        "{}: renders and plots: {pngs:?}",
        dir.display()
    );
    for name in &pngs {
        let bytes = std::fs::read(dir.join(name)).expect("png");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        assert!(
            html.contains(&format!("src=\"{name}\"")),
            "{name} on the page"
        );
    }
    assert_eq!(
        html.matches("<img ").count(),
        pngs.len(),
        "every image once"
    );
    assert!(
        html.contains(&format!("href=\"{FRAMES_CSV}\"")),
        "the CSV is linked"
    );
    let mut expected = file_names(dir);
    expected.retain(|n| n != "index.html");
    assert!(expected.iter().all(|n| !n.starts_with('.')), "{expected:?}");
    html
}

/// Parses `frames.csv` into its header and rows of optional numbers (empty cells are `None`).
fn parse_csv(dir: &Path) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
    let text = std::fs::read_to_string(dir.join(FRAMES_CSV)).expect("frames.csv");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("header")
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|line| {
            let cells: Vec<Option<f64>> = line
                .split(',')
                .map(|cell| {
                    (!cell.is_empty())
                        .then(|| cell.parse::<f64>().unwrap_or_else(|_| panic!("{cell:?}")))
                })
                .collect();
            assert_eq!(cells.len(), header.len(), "{line}");
            cells
        })
        .collect();
    (header, rows)
}

fn every_sample_model_gives_a_full_report_with_its_numbers_as_csv() {
    let Some(models) = models_dir() else { return };
    let root = ScratchDir::new("compare-sample-models");
    for model in SAMPLES {
        let name = model.split('/').next().expect("name");
        let dir = root.join(name);
        let summary = write_report(&models.join(model), &few_frames(), &dir, &mut |_| {})
            .unwrap_or_else(|e| panic!("{model}: {e}"));
        let html = assert_full_report(&dir, &summary);
        assert!(!summary.methods_agree, "{model}: the methods blend joints");
        let volume_plotted = html.contains("frame_volume_ratio.png");
        let volume_explained = html.contains("volume ratio is left out");
        assert!(
            volume_plotted != volume_explained,
            "{model}: the volume ratio is plotted or its absence explained"
        );

        let (header, rows) = parse_csv(&dir);
        assert_eq!(&header[..2], ["frame", "time_s"]);
        assert!(header.contains(&"max_distance_DQS_LBS_percent".to_owned()));
        assert!(header.contains(&"mean_edge_ratio_CoR".to_owned()));
        assert_eq!(rows.len(), summary.frames.len(), "{model}: a row per frame");
        let max_column = header
            .iter()
            .position(|h| h == "max_distance_DQS_LBS_percent")
            .expect("column");
        let volume_column = header
            .iter()
            .position(|h| h == "volume_ratio_LBS")
            .expect("column");
        for (row, frame) in rows.iter().zip(&summary.frames) {
            assert_eq!(row[0], Some(frame.frame as f64));
            // Written as the f32 it is: it reads back to the same f32.
            assert_eq!(row[1].map(|t| t as f32), Some(frame.time_s));
            assert_eq!(
                row[max_column],
                Some(frame.max_displacement[0].1 * 100.0),
                "{model}: the CSV holds the full-precision numbers, in percent"
            );
            assert_eq!(row[volume_column], frame.volume_ratio[0]);
        }
        if volume_explained {
            assert!(
                rows.iter().all(|r| r[volume_column].is_none()),
                "{model}: no volume, empty cells"
            );
        }
    }
    // The reports are left in the target folder for a look.
}

fn a_failed_or_interrupted_compare_leaves_the_earlier_report_as_it_was() {
    let Some(models) = models_dir() else { return };
    let root = ScratchDir::new("compare-replace");
    let dir = root.join("report");
    let model = models.join("RiggedSimple/RiggedSimple.glb");
    write_report(&model, &few_frames(), &dir, &mut |_| {}).expect("a good report");
    let good = snapshot(&dir);
    assert!(good.contains_key("index.html"));

    // A compare that fails before writing anything.
    let unknown = CompareOptions {
        animation: Some("no such animation".to_owned()),
        ..few_frames()
    };
    assert!(write_report(&model, &unknown, &dir, &mut |_| {}).is_err());
    assert!(
        snapshot(&dir) == good,
        "the good report is byte-identical; the folder now holds {:?}",
        file_names(&dir)
    );

    // A compare interrupted halfway through writing (as by Ctrl-C): the first rendered
    // figure is in the partial folder when the run stops.
    let mut renders = 0;
    let interrupted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        write_report(
            &model,
            &CompareOptions {
                frames: 7,
                ..few_frames()
            },
            &dir,
            &mut |p: Progress| {
                if p.stage == Stage::Rendering {
                    renders += 1;
                    panic!("interrupted after {} figures", p.done);
                }
            },
        )
    }));
    assert!(interrupted.is_err(), "the run was interrupted");
    assert_eq!(renders, 1, "it stopped after writing a figure");
    assert!(
        snapshot(&dir) == good,
        "the good report is byte-identical; the folder now holds {:?}",
        file_names(&dir)
    );
    assert_eq!(
        file_names(&root),
        ["report"],
        "no partial folder is left behind"
    );

    // A folder of other files is never replaced.
    let other = root.join("other");
    std::fs::create_dir_all(&other).expect("folder");
    std::fs::write(other.join("notes.txt"), b"mine").expect("write");
    let refused = write_report(&model, &few_frames(), &other, &mut |_| {}).expect_err("refused");
    assert!(refused.to_string().contains("other"), "{refused}");
    assert_eq!(file_names(&other), ["notes.txt"]);

    // And a later good run replaces the report whole.
    let summary = write_report(
        &model,
        &CompareOptions {
            frames: 3,
            ..few_frames()
        },
        &dir,
        &mut |_| {},
    )
    .expect("a second good report");
    assert_eq!(parse_csv(&dir).1.len(), 3, "the new report's numbers");
    assert_full_report(&dir, &summary);
    assert_eq!(file_names(&root), ["other", "report"]);
    let _ = std::fs::remove_dir_all(&root);
}

/// `model` with every vertex bound to its heaviest joint alone, with weight 1: a rigid rig,
/// where LBS, DQS and CoR apply the same transform to every vertex.
fn rigid(mut model: Model) -> Model {
    let mut rebound = Vec::new();
    for (m, mesh) in model.meshes().iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let Some(influences) = primitive.influences.as_ref() else {
                continue;
            };
            let joints: Vec<u16> = (0..influences.vertex_count())
                .map(|v| {
                    let (joints, weights) = influences.vertex(v).expect("vertex");
                    let heaviest = (0..weights.len())
                        .max_by(|&a, &b| weights[a].total_cmp(&weights[b]))
                        .expect("a slot");
                    joints[heaviest]
                })
                .collect();
            let weights = vec![1.0; joints.len()];
            let rigid =
                Influences::new(1, joints, weights, influences.joint_count()).expect("rigid");
            rebound.push((m, p, rigid));
        }
    }
    for (m, p, influences) in rebound {
        model.set_influences(m, p, influences).expect("rebind");
    }
    model
}

fn a_rigid_rig_is_reported_as_methods_that_agree() {
    let Some(models) = models_dir() else { return };
    let root = ScratchDir::new("compare-rigid");
    let dir = root.join("report");
    let model = rigid(Model::open(models.join("CesiumMan/CesiumMan.glb")).expect("load"));
    let summary = write_model_report(&model, "rigid CesiumMan", &few_frames(), &dir, &mut |_| {})
        .expect("report");
    let largest = summary
        .frames
        .iter()
        .flat_map(|f| f.max_displacement.iter().map(|&(_, d)| d))
        .fold(0.0f64, f64::max);
    eprintln!("rigid CesiumMan: largest distance between methods {largest:e} of the diagonal");
    assert!(summary.methods_agree, "largest distance {largest}");
    assert!(largest <= AGREEMENT_SHARE);
    let html = assert_full_report(&dir, &summary);
    assert!(html.contains("The methods agree"), "said plainly");
    for claim in ["folds", "swells", "bulge", "collapses"] {
        assert!(!html.contains(claim), "no caption claims {claim:?}");
    }
    let pngs: Vec<String> = file_names(&dir)
        .into_iter()
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert!(
        pngs.iter()
            .filter(|n| n.starts_with("frame_0"))
            .all(|n| n.ends_with("_area.png")),
        "no close-up or distance colouring of nothing: {pngs:?}"
    );
    assert!(pngs.iter().any(|n| n.ends_with("_area.png")), "{pngs:?}");
    // The report is left in the target folder for a look.
}

fn a_looping_clip_shows_its_end_pose_once() {
    let Some(models) = models_dir() else { return };
    let root = ScratchDir::new("compare-loop");
    let dir = root.join("report");
    // The fox's "Survey" clip loops: its last frame is its first pose again. Asking for every
    // one of 5 frames must render 4.
    let options = CompareOptions {
        frames: 5,
        picked_frames: 5,
        ..CompareOptions::default()
    };
    let summary =
        write_report(&models.join("Fox/Fox.glb"), &options, &dir, &mut |_| {}).expect("report");
    let (first, last) = (&summary.frames[0], &summary.frames[4]);
    assert_eq!(
        first.max_displacement, last.max_displacement,
        "the clip loops"
    );
    let ends = summary.picked.iter().filter(|&&f| f == 0 || f == 4).count();
    assert_eq!(ends, 1, "one of the loop's ends: {:?}", summary.picked);
    assert_eq!(summary.picked.len(), 4, "{:?}", summary.picked);
}

fn a_cor_compare_over_48_frames_computes_centers_once_per_primitive() {
    let Some(models) = models_dir() else { return };
    let scratch = ScratchDir::new("compare-centers-once");
    let dir = scratch.join("report");
    let file = models.join("CesiumMan/CesiumMan.glb");
    let model = skinblend_gltf::Model::open(&file).expect("model");
    let mut primitives: Vec<(usize, usize)> = model
        .skinned_nodes()
        .iter()
        .filter_map(|&n| model.nodes()[n].mesh)
        .flat_map(|m| (0..model.meshes()[m].primitives.len()).map(move |p| (m, p)))
        .collect();
    primitives.sort_unstable();
    primitives.dedup();
    let options = CompareOptions {
        frames: 48,
        picked_frames: 1,
        ..CompareOptions::default()
    };
    let summary = write_report(&file, &options, &dir, &mut |_| {}).expect("report");
    assert_eq!(summary.frames.len(), 48);
    assert_eq!(
        summary.rotation_centers_computed,
        primitives.len(),
        "centers of rotation computed more than once per primitive over 48 frames"
    );
}

skinblend_testkit::test_main!(
    every_sample_model_gives_a_full_report_with_its_numbers_as_csv,
    a_failed_or_interrupted_compare_leaves_the_earlier_report_as_it_was,
    a_rigid_rig_is_reported_as_methods_that_agree,
    a_looping_clip_shows_its_end_pose_once,
    a_cor_compare_over_48_frames_computes_centers_once_per_primitive,
);
