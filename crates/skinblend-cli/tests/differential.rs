//! Differential test against the Khronos glTF-Validator: structural mutants of the sample models
//! and of a small generated file, each checked by the validator and by `skinblend info` and
//! `skinblend pose`.
//!
//! The contract, for every mutant:
//! - the validator reports an error → `info` and `pose` both exit 1 with one line on stderr that
//!   names the file (no panic, no hang, no output file);
//! - the validator reports no error → `info` and `pose` exit 0 and the posed export passes the
//!   validator too, or the refusal is on [`KNOWN_STRICTER`] with its reason.
//!
//! Anything else fails the test, which prints the counts per class and each disagreement (file,
//! mutation, validator codes, skinblend's line). Deterministic: mutant `i` depends only on the
//! seed and `i`. Environment:
//! - `SKINBLEND_DIFF_COUNT` mutants (default [`DEFAULT_COUNT`], sized for CI);
//! - `SKINBLEND_DIFF_SEED` (default [`DEFAULT_SEED`]);
//! - `SKINBLEND_DIFF_KEEP=DIR` writes the mutants into DIR and keeps them (they are also kept,
//!   in a temporary folder named in the output, when the test fails).
//!
//! Needs node and `npm ci --prefix tools` (the validator); required under `CI=true`. The sample
//! models come from `../shared/models` (required under `CI=true`; without them only the
//! generated file is mutated).
//!
//! Run longer by hand:
//! `SKINBLEND_DIFF_COUNT=3000 cargo test --release -p skinblend-cli --test differential -- --nocapture`

#[path = "../../skinblend-gltf/tests/common/mod.rs"]
mod common;
#[path = "differential/doc.rs"]
mod doc;
#[path = "differential/mutations.rs"]
mod mutations;
#[path = "differential/runs.rs"]
mod runs;
#[path = "differential/structure.rs"]
mod structure;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use skinblend_testkit::{ScratchDir, SAMPLES};

use doc::{Doc, Rng};
use mutations::MUTATIONS;
use runs::{run_skinblend, validate, Outcome};

/// Mutants in a default run, sized for CI: 1000 take about 40 s with the validator in a debug
/// build on two cores (`time cargo test -p skinblend-cli --test differential`).
const DEFAULT_COUNT: u64 = 1000;
/// The default seed.
const DEFAULT_SEED: u64 = 11;
/// Files the validator accepts and skinblend refuses on purpose: the text of skinblend's error
/// and why. Short by design; each entry is a decision, not a bug.
const KNOWN_STRICTER: &[(&str, &str)] = &[
    (
        "required extension not supported",
        "the specification says a loader MUST refuse a file whose extensionsRequired it does not \
         implement; the validator only warns that it does not know the extension",
    ),
    (
        "interpolation: invalid",
        "an interpolation other than STEP, LINEAR or CUBICSPLINE cannot be sampled; the \
         validator only warns (the schema allows other strings for extensions)",
    ),
    (
        "is not invertible",
        "a singular inverse bind matrix has no bind pose to skin from (no joint origin for \
         DQS or CoR); the validator does not check invertibility",
    ),
    (
        "attributes[\"POSITION\"]: required value missing",
        "a primitive without POSITION has nothing to skin or draw; the specification allows it \
         (an extension may supply the geometry) but skinblend implements none that does",
    ),
    (
        "target.path: invalid",
        "a channel path other than translation, rotation, scale or weights names no property \
         skinblend can pose; the validator only warns",
    ),
];

/// Validator error codes for data that skinblend repairs on purpose and reports under
/// `repairs` in `skinblend info` (weights renormalized to sum 1, a joint listed twice merged):
/// a mutant whose every validator error is one of these may be accepted.
const KNOWN_REPAIRED: &[(&str, &str)] = &[
    (
        "ACCESSOR_WEIGHTS_NON_NORMALIZED",
        "weights are renormalized and counted in repairs.vertices_renormalized (quantized \
         weights rarely sum to exactly 1)",
    ),
    (
        "ACCESSOR_JOINTS_INDEX_DUPLICATE",
        "a joint listed twice for a vertex is merged and counted in \
         repairs.vertices_with_repeated_joints",
    ),
];

struct Mutant {
    file: PathBuf,
    posed: PathBuf,
    source: String,
    class: &'static str,
    what: String,
    info: Outcome,
    pose: Outcome,
}

fn sources() -> Vec<(String, Doc)> {
    let mut sources = Vec::new();
    let (strip, ..) = common::strip(4);
    sources.push((
        "strip".to_owned(),
        Doc {
            json: {
                let mut json = strip.json.clone();
                json["buffers"] = json!([{ "byteLength": strip.bin.len() }]);
                json
            },
            bin: strip.bin.clone(),
        },
    ));
    if let Some(dir) = skinblend_testkit::models_dir_if_present() {
        for name in SAMPLES {
            let stem = Path::new(name).file_stem().unwrap().to_string_lossy();
            let bytes = std::fs::read(dir.join(name)).unwrap();
            sources.push((stem.into_owned(), Doc::parse(&bytes)));
        }
    }
    sources
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

fn skinblend_refuses_what_the_khronos_validator_refuses() {
    let Some(script) = skinblend_testkit::gltf_validator() else {
        return;
    };
    let count = env_u64("SKINBLEND_DIFF_COUNT", DEFAULT_COUNT);
    let seed = env_u64("SKINBLEND_DIFF_SEED", DEFAULT_SEED);
    let keep = std::env::var_os("SKINBLEND_DIFF_KEEP").map(PathBuf::from);
    // A scratch folder, or SKINBLEND_DIFF_KEEP's (kept).
    let scratch = keep.is_none().then(|| ScratchDir::new("differential"));
    let dir = match (&keep, &scratch) {
        (Some(keep), _) => {
            let _ = std::fs::remove_dir_all(keep);
            std::fs::create_dir_all(keep).unwrap();
            keep.clone()
        }
        (None, scratch) => scratch.as_ref().expect("a scratch folder").to_path_buf(),
    };

    // The sources themselves must be valid and accepted, or every mutant inherits their faults.
    let sources = sources();
    let source_files: Vec<PathBuf> = sources
        .iter()
        .map(|(name, doc)| {
            let file = dir.join(format!("source-{name}.glb"));
            std::fs::write(&file, doc.glb()).unwrap();
            file
        })
        .collect();
    for (file, verdict) in validate(&script, &source_files) {
        assert!(
            verdict.errors == 0 && verdict.crashed.is_none(),
            "{}: {verdict:?}",
            file.display()
        );
    }

    // The regression files kept from earlier findings (crates/skinblend-gltf/tests/data/validator,
    // tested against the loader in validator_findings.rs) are what the validator says they are.
    let findings_dir =
        skinblend_testkit::repository_root().join("crates/skinblend-gltf/tests/data/validator");
    let mut findings: Vec<PathBuf> = std::fs::read_dir(&findings_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    findings.sort();
    for (file, verdict) in validate(&script, &findings) {
        let accepted = file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("accepted-");
        assert_eq!(
            verdict.errors == 0 && verdict.crashed.is_none(),
            accepted,
            "{}: {:?}",
            file.display(),
            verdict.codes
        );
    }

    // Mutants: source i mod n, a class drawn until one applies.
    let mut mutants = Vec::new();
    for i in 0..count {
        let mut rng = Rng::new(seed, i);
        let (name, source) = &sources[(i % sources.len() as u64) as usize];
        for _ in 0..100 {
            let (class, mutate) = MUTATIONS[rng.below(MUTATIONS.len()).unwrap()];
            let mut doc = source.clone();
            if let Some(what) = mutate(&mut doc, &mut rng) {
                let file = dir.join(format!("{i:05}-{name}-{class}.glb"));
                std::fs::write(&file, doc.glb()).unwrap();
                mutants.push(Mutant {
                    posed: dir.join(format!("{i:05}-{name}-{class}.posed.glb")),
                    file,
                    source: name.clone(),
                    class,
                    what,
                    info: Outcome::Accepted,
                    pose: Outcome::Accepted,
                });
                break;
            }
        }
    }

    // skinblend on every mutant, on every core.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, Outcome, Outcome)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(m) = mutants.get(i) else { break };
                        let file = m.file.to_str().unwrap();
                        let info = run_skinblend(&["info", file], &m.file);
                        let pose = run_skinblend(
                            &[
                                "pose",
                                file,
                                "--time",
                                "0.5",
                                "-o",
                                m.posed.to_str().unwrap(),
                            ],
                            &m.file,
                        );
                        done.push((i, info, pose));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (i, info, pose) in results {
        mutants[i].info = info;
        mutants[i].pose = pose;
    }

    let files: Vec<PathBuf> = mutants.iter().map(|m| m.file.clone()).collect();
    let verdicts = validate(&script, &files);
    let posed: Vec<PathBuf> = mutants
        .iter()
        .filter(|m| m.pose == Outcome::Accepted)
        .map(|m| m.posed.clone())
        .collect();
    let posed_verdicts = validate(&script, &posed);

    // Classify.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_class: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut validator_errors = 0;
    for m in &mutants {
        let verdict = &verdicts[&m.file];
        let invalid = verdict.errors > 0;
        validator_errors += usize::from(invalid);
        if verdict.crashed.is_some()
            && !matches!(m.info, Outcome::Broken(_))
            && !matches!(m.pose, Outcome::Broken(_))
        {
            // No verdict to compare with; skinblend still must not break.
            let outcome = if m.info == Outcome::Accepted && m.pose == Outcome::Accepted {
                "validator crashed, skinblend accepts"
            } else {
                "validator crashed, skinblend refuses"
            };
            *counts.entry(outcome).or_default() += 1;
            *per_class.entry((outcome, m.class)).or_default() += 1;
            continue;
        }
        let refusal = |o: &Outcome| match o {
            Outcome::Refused(line) => Some(line.clone()),
            _ => None,
        };
        let outcome = match (&m.info, &m.pose) {
            (Outcome::Broken(why), _) | (_, Outcome::Broken(why)) => (
                "broken (panic, hang, exit code or message)",
                Some(why.clone()),
            ),
            (Outcome::Refused(_), Outcome::Refused(_)) if invalid => ("agree: both refuse", None),
            (Outcome::Accepted, Outcome::Accepted) if !invalid => {
                let out = &posed_verdicts[&m.posed];
                if out.errors == 0 && out.crashed.is_none() {
                    ("agree: both accept", None)
                } else {
                    (
                        "posed export has validator errors",
                        Some(format!(
                            "{}{}",
                            out.codes.join("; "),
                            out.crashed.clone().unwrap_or_default()
                        )),
                    )
                }
            }
            (Outcome::Accepted, Outcome::Accepted)
                if verdict.codes.iter().all(|code| {
                    KNOWN_REPAIRED
                        .iter()
                        .any(|(known, _)| code.starts_with(&format!("{known} ")))
                }) =>
            {
                ("validator error, skinblend repairs (known)", None)
            }
            (info, pose) if invalid => (
                "validator error, skinblend accepts",
                Some(format!(
                    "info {}, pose {}",
                    refusal(info).unwrap_or_else(|| "accepts".into()),
                    refusal(pose).unwrap_or_else(|| "accepts".into())
                )),
            ),
            (info, pose) => {
                let line = refusal(info).or_else(|| refusal(pose)).unwrap_or_default();
                match KNOWN_STRICTER.iter().find(|(text, _)| line.contains(text)) {
                    Some(_) => ("validator accepts, skinblend refuses (known)", None),
                    None => (
                        "validator accepts, skinblend refuses",
                        Some(format!(
                            "info {}, pose {}",
                            refusal(info).unwrap_or_else(|| "accepts".into()),
                            refusal(pose).unwrap_or_else(|| "accepts".into())
                        )),
                    ),
                }
            }
        };
        *counts.entry(outcome.0).or_default() += 1;
        *per_class.entry((outcome.0, m.class)).or_default() += 1;
        if let Some(detail) = outcome.1 {
            failures.push(format!(
                "{} [{}] {} ({}): {}\n    validator: {}\n    skinblend: {detail}",
                outcome.0,
                m.source,
                m.file.file_name().unwrap().to_string_lossy(),
                m.what,
                m.class,
                if verdict.codes.is_empty() {
                    "no errors".to_owned()
                } else {
                    verdict.codes.join("; ")
                }
            ));
        }
    }
    let mut summary = format!(
        "differential test, seed {seed}: {} mutants of {} sources, {validator_errors} with validator errors\n",
        mutants.len(),
        sources.len()
    );
    for (outcome, n) in &counts {
        summary.push_str(&format!("  {n:5}  {outcome}\n"));
    }
    for ((outcome, class), n) in &per_class {
        if !outcome.starts_with("agree") {
            summary.push_str(&format!("    {n:5}  {outcome}: {class}\n"));
        }
    }
    eprint!("{summary}");
    // Also where CI prints it after `cargo test` (which hides a passing test's output).
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-counts.txt"),
        &summary,
    );
    if !failures.is_empty() {
        // Kept for a look at the mutants that disagree.
        let _ = scratch.map(ScratchDir::keep);
    }
    assert!(
        failures.is_empty(),
        "{} disagreements (mutants kept in {}):\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
}

skinblend_testkit::test_main!(skinblend_refuses_what_the_khronos_validator_refuses,);
