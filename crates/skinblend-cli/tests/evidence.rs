//! `skinblend evidence` as a user runs it: the table (100 columns, or --wide), the reference
//! figures beside ours, the JSON keys scripts read, and --help wrapped.

mod support;

use skinblend::Method;
use support::run;

#[test]
fn wide_table_shows_the_reference_figures_side_by_side() {
    let (code, stdout, stderr) = run(&["evidence", "--wide"]);
    assert_eq!(code, 0, "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("twist_coarse") && l.contains("180°"))
        .expect("a twist_coarse 180° row");
    // LBS | DQS | CoR: CoR keeps the ring round like DQS.
    assert!(line.contains("0.0% | 100.0% | 100.0%"), "{line}");
    assert!(line.contains("0.950"), "{line}");
    assert!(line.contains("1.051"), "{line}");
    assert!(
        stdout.lines().any(|l| l.chars().count() > 200),
        "--wide is the full table"
    );
    // Every reference figure agrees.
    let reference_rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Reference figures"))
        .skip(2)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(reference_rows.len(), 7, "{stdout}");
    for row in reference_rows {
        assert!(row.contains(" yes"), "reference figure disagrees: {row}");
    }
}

#[test]
fn default_table_fits_100_columns_and_has_every_row() {
    let (code, stdout, stderr) = run(&["evidence"]);
    assert_eq!(code, 0, "{stderr}");
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // One line per fixture, angle and method: 5 + 3 + 5 + 3 + 2 angles × 3 methods.
    let method_lines = stdout
        .lines()
        .filter(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words
                .iter()
                .take(3)
                .any(|w| ["LBS", "DQS", "CoR"].contains(w))
        })
        .count();
    assert_eq!(method_lines, 18 * 3, "{stdout}");
    // The 180° twist of twist_coarse: LBS collapses the ring, DQS keeps it, as the reference
    // figures say.
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("twist_coarse") && l.contains("180°"))
        .expect("twist_coarse 180° rows");
    assert!(
        lines[at].contains("LBS") && lines[at].contains("0.0%"),
        "{}",
        lines[at]
    );
    assert!(lines[at].contains("0.950"), "{}", lines[at]);
    assert!(
        lines[at + 1].contains("DQS") && lines[at + 1].contains("100.0%"),
        "{}",
        lines[at + 1]
    );
    assert!(lines[at + 1].contains("1.051"), "{}", lines[at + 1]);
    // The reference figures: seven, each agreeing.
    assert_eq!(stdout.matches(": agrees").count(), 7, "{stdout}");
    assert!(!stdout.contains("DIFFERS"), "{stdout}");
}

/// Words from how the project was made have no place in what users read.
const MAKING_WORDS: &[&str] = &["seed", "the issue", "session"];

#[test]
fn output_and_help_speak_of_what_the_figures_are() {
    let (_, table, _) = run(&["evidence"]);
    let (_, wide, _) = run(&["evidence", "--wide"]);
    let mut texts = vec![table, wide];
    for command in [
        &[][..],
        &["evidence"][..],
        &["pose"][..],
        &["rigs"][..],
        &["compare"][..],
        &["centers"][..],
        &["info"][..],
        &["bench"][..],
    ] {
        let mut args = command.to_vec();
        args.push("--help");
        let (code, help, stderr) = run(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        // Wrapped: clap's wrap_help keeps help lines to the terminal's width (100 columns when
        // the width is unknown, as here).
        for line in help.lines() {
            assert!(line.chars().count() <= 100, "{args:?}: {line}");
        }
        texts.push(help);
    }
    for text in &texts {
        let lower = text.to_lowercase();
        for word in MAKING_WORDS {
            assert!(!lower.contains(word), "{word:?} in:\n{text}");
        }
    }
    assert!(texts[0].contains("another engine's DQS documentation"));
}

#[test]
fn json_rows_have_the_documented_keys_and_fixture_names() {
    let (code, stdout, stderr) = run(&["evidence", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("a JSON array");
    let keys = [
        "fixture",
        "angle_deg",
        "method",
        "candy_wrapper_ratio",
        "edge_ratio_min",
        "edge_ratio_mean",
        "edge_ratio_max",
        "volume_ratio",
        "ring_distance_ratio_min",
        "ring_distance_ratio_max",
        "bone_distance_ratio_min",
        "bone_distance_ratio_max",
        "non_rigid_joints",
        "sign_flips",
        "singular_normal_matrices",
    ];
    for row in &rows {
        for key in keys {
            assert!(row.get(key).is_some(), "row {row} lacks {key}");
        }
        let method = row["method"].as_str().unwrap();
        assert!(Method::names().contains(&method), "{method}");
    }
    // Every fixture and angle has one row per method, in Method::ALL's order (linear, dq, cor).
    assert_eq!(rows.len() % Method::ALL.len(), 0);
    for group in rows.chunks(Method::ALL.len()) {
        let methods: Vec<&str> = group
            .iter()
            .map(|r| r["method"].as_str().unwrap())
            .collect();
        assert_eq!(methods, Method::names());
        assert!(group.iter().all(|r| r["fixture"] == group[0]["fixture"]));
        assert!(group
            .iter()
            .all(|r| r["angle_deg"] == group[0]["angle_deg"]));
    }
    let mut fixtures: Vec<&str> = rows
        .iter()
        .map(|r| r["fixture"].as_str().unwrap())
        .collect();
    fixtures.dedup();
    assert_eq!(
        fixtures,
        [
            "twist_coarse",
            "bend_coarse",
            "twist_fine",
            "bend_fine",
            "shear_cap"
        ]
    );
    // Open meshes have no volume; closed ones do.
    for row in &rows {
        let open = row["fixture"].as_str().unwrap().ends_with("_coarse");
        assert_eq!(row["volume_ratio"].is_null(), open, "{row}");
    }
    let twist_180 = |method: &str| {
        rows.iter()
            .find(|r| {
                r["fixture"] == "twist_coarse" && r["angle_deg"] == 180.0 && r["method"] == method
            })
            .unwrap()
            .clone()
    };
    assert!(twist_180("linear")["candy_wrapper_ratio"].as_f64().unwrap() < 1e-3);
    assert!((twist_180("dq")["candy_wrapper_ratio"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    assert!(twist_180("cor")["candy_wrapper_ratio"].as_f64().unwrap() >= 0.99);
    // At a 90° bend CoR bulges less than DQS.
    let bend_90 = |method: &str| {
        rows.iter()
            .find(|r| {
                r["fixture"] == "bend_fine" && r["angle_deg"] == 90.0 && r["method"] == method
            })
            .unwrap()["bone_distance_ratio_max"]
            .as_f64()
            .unwrap()
    };
    assert!(bend_90("cor") < bend_90("dq"));
}

#[test]
fn bad_usage_exits_2() {
    let (code, _, stderr) = run(&["evidence", "--no-such-flag"]);
    assert_eq!(code, 2, "{stderr}");
}
