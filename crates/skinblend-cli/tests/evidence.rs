//! `skinblend evidence` as a user runs it: the table, the seed comparison, and the JSON keys
//! scripts read.

use std::process::Command;

fn skinblend(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_skinblend"))
        .args(args)
        .output()
        .expect("run skinblend");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn table_shows_the_seeds_figures_side_by_side() {
    let (code, stdout, stderr) = skinblend(&["evidence"]);
    assert_eq!(code, 0, "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("twist_coarse") && l.contains("180°"))
        .expect("a twist_coarse 180° row");
    // LBS | DQS | CoR: CoR keeps the ring round like DQS.
    assert!(line.contains("0.0% | 100.0% | 100.0%"), "{line}");
    assert!(line.contains("0.950"), "{line}");
    assert!(line.contains("1.051"), "{line}");
    // Every seed figure agrees.
    let seed_rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("The seed's figures"))
        .skip(2)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(seed_rows.len(), 7, "{stdout}");
    for row in seed_rows {
        assert!(row.contains(" yes"), "seed figure disagrees: {row}");
    }
}

#[test]
fn json_rows_have_the_documented_keys_and_fixture_names() {
    let (code, stdout, stderr) = skinblend(&["evidence", "--json"]);
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
        assert!(["linear", "dq", "cor"].contains(&method), "{method}");
    }
    // Every fixture and angle has one row per method, in the order linear, dq, cor.
    assert_eq!(rows.len() % 3, 0);
    for group in rows.chunks(3) {
        let methods: Vec<&str> = group
            .iter()
            .map(|r| r["method"].as_str().unwrap())
            .collect();
        assert_eq!(methods, ["linear", "dq", "cor"]);
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
    let (code, _, stderr) = skinblend(&["evidence", "--no-such-flag"]);
    assert_eq!(code, 2, "{stderr}");
}
