//! `--gpu` as a user runs it: `evidence --gpu` gives the CPU's rows, `pose --gpu` the CPU's
//! file, `bench --gpu` prints its rows. Without an adapter these print why and pass, unless
//! `SKINBLEND_REQUIRE_GPU=1` (set in CI), when they fail.

mod support;

use skinblend::Method;
use support::run;

/// GPU against CPU for measurements derived from vertices that agree within 1e-5 relative
/// (see skinblend-gpu's GPU_VS_CPU); ratios of lengths keep that order.
const GPU_VS_CPU: f64 = 1e-5;

/// Runs a `--gpu` command; `None` (with a message) when it failed for want of an adapter and
/// the GPU is not required.
fn gpu_run(args: &[&str]) -> Option<String> {
    let (code, stdout, stderr) = run(args);
    if code != 0 && stderr.contains("no GPU adapter") {
        skinblend_testkit::skip_without_gpu(stderr.trim());
        return None;
    }
    assert_eq!(code, 0, "{args:?}: {stderr}");
    Some(stdout)
}

fn evidence_on_the_gpu_gives_the_cpu_rows() {
    let Some(gpu) = gpu_run(&["evidence", "--gpu", "--json"]) else {
        return;
    };
    let (code, cpu, stderr) = run(&["evidence", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let gpu: serde_json::Value = serde_json::from_str(&gpu).expect("GPU JSON");
    let cpu: serde_json::Value = serde_json::from_str(&cpu).expect("CPU JSON");
    let (gpu, cpu) = (
        gpu.as_array().expect("array"),
        cpu.as_array().expect("array"),
    );
    assert_eq!(gpu.len(), cpu.len());
    for (g, c) in gpu.iter().zip(cpu) {
        let (g, c) = (g.as_object().expect("row"), c.as_object().expect("row"));
        assert_eq!(g.keys().collect::<Vec<_>>(), c.keys().collect::<Vec<_>>());
        for (key, expected) in c {
            let found = &g[key];
            match (expected.as_f64(), found.as_f64()) {
                (Some(e), Some(f)) if expected.is_f64() => assert!(
                    (e - f).abs() <= GPU_VS_CPU * e.abs().max(1.0),
                    "{key}: CPU {e}, GPU {f} in {c:?}"
                ),
                // Counts (diagnostics, edge counts), names and nulls: exactly equal.
                _ => assert_eq!(found, expected, "{key} in {c:?}"),
            }
        }
    }
}

fn evidence_table_on_the_gpu_names_the_adapter() {
    let Some(stdout) = gpu_run(&["evidence", "--gpu"]) else {
        return;
    };
    let note = stdout
        .lines()
        .find(|l| l.starts_with("GPU: "))
        .expect("a GPU line");
    assert!(note.contains("largest relative difference"), "{note}");
}

fn pose_on_the_gpu_writes_the_cpu_file() {
    let Some(models) = skinblend_testkit::models_dir() else {
        return;
    };
    let model = models.join("CesiumMan/CesiumMan.glb");
    let dir = skinblend_testkit::ScratchDir::new("gpu-cli");
    let model = model.to_string_lossy().into_owned();
    // CoR: the model carries no centers, so both sides compute them (deterministically).
    // Blended: one value for every vertex (the model carries none).
    for method in Method::names() {
        let gpu_out = dir.join(format!("gpu_{method}.obj"));
        let cpu_out = dir.join(format!("cpu_{method}.obj"));
        let gpu_path = gpu_out.to_string_lossy().into_owned();
        let cpu_path = cpu_out.to_string_lossy().into_owned();
        let blend: &[&str] = if method == Method::Blended.name() {
            &["--dq-blend", "0.5"]
        } else {
            &[]
        };
        let args = [
            &["pose", &model, "--time", "1.0", "--method", method][..],
            blend,
            &["-o"],
        ]
        .concat();
        let (code, _, stderr) = run(&[&args[..], &[&cpu_path]].concat());
        assert_eq!(code, 0, "{stderr}");
        let Some(_) = gpu_run(&[&args[..], &[&gpu_path, "--gpu"]].concat()) else {
            return;
        };
        let vertices = |path: &std::path::Path| -> Vec<f64> {
            std::fs::read_to_string(path)
                .expect("obj")
                .lines()
                .filter(|l| l.starts_with("v "))
                .flat_map(|l| {
                    l.split_whitespace()
                        .skip(1)
                        .map(|x| x.parse::<f64>().expect("number"))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let (g, c) = (vertices(&gpu_out), vertices(&cpu_out));
        assert!(!c.is_empty());
        assert_eq!(g.len(), c.len());
        // The model is about 1.5 m tall: judge each coordinate against the model's size.
        let scale = c.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for (g, c) in g.iter().zip(&c) {
            assert!(
                (g - c).abs() <= GPU_VS_CPU * scale,
                "{method}: GPU {g}, CPU {c}"
            );
        }
    }
}

fn bench_gpu_prints_kernel_end_to_end_and_copy_floor() {
    let Some(stdout) = gpu_run(&[
        "bench",
        "--gpu",
        "--vertices",
        "2000",
        "--influences",
        "1,8",
        "--frames",
        "1",
        "--json",
    ]) else {
        return;
    };
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let rows = rows.as_array().expect("array");
    // 1 size × 2 influence counts × 2 attribute sets × every method.
    assert_eq!(rows.len(), 4 * Method::ALL.len());
    for method in Method::names() {
        assert!(
            rows.iter().any(|row| row["method"] == method),
            "no {method} row"
        );
    }
    for row in rows {
        for key in ["end_to_end_mvps", "copy_floor_mvps", "share_of_floor"] {
            let value = row[key].as_f64().unwrap_or(f64::NAN);
            assert!(value.is_finite() && value > 0.0, "{key} in {row}");
        }
        assert_eq!(row["vertices"], 2000);
    }
}

fn bench_gpu_quick_runs_fewer_sizes_and_frames() {
    // --quick alone: 10k and 100k vertices (not 1M); 1 frame to keep the test short.
    let Some(stdout) = gpu_run(&[
        "bench",
        "--gpu",
        "--quick",
        "--influences",
        "1",
        "--frames",
        "1",
        "--json",
    ]) else {
        return;
    };
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let mut sizes: Vec<u64> = rows
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["vertices"].as_u64().unwrap())
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert_eq!(sizes, [10_000, 100_000]);
    // --quick with sizes given: 3 frames per case instead of 10.
    let Some(stdout) = gpu_run(&[
        "bench",
        "--gpu",
        "--quick",
        "--vertices",
        "2000",
        "--influences",
        "1",
        "--json",
    ]) else {
        return;
    };
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    for row in rows.as_array().expect("array") {
        assert_eq!(row["frames"], 3, "{row}");
        assert_eq!(row["vertices"], 2000, "{row}");
    }
}

skinblend_testkit::test_main!(
    evidence_on_the_gpu_gives_the_cpu_rows,
    evidence_table_on_the_gpu_names_the_adapter,
    pose_on_the_gpu_writes_the_cpu_file,
    bench_gpu_prints_kernel_end_to_end_and_copy_floor,
    bench_gpu_quick_runs_fewer_sizes_and_frames,
);
