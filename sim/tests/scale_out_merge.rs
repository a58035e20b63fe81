//! Scale-out: the summaries of a sharded run merge into the summary of one run over
//! the same seeds (digest, counts, failures), a time-boxed shard names exactly the
//! seeds it ran, and `turnsim merge` refuses summaries that cannot come from one fleet.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use turnsim::Reference;
use turnsim::{Batch, run_batch};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scale-out-merge-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn turnsim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("turnsim runs")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("summary written");
    serde_json::from_str(&text).expect("summary is JSON")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The summary without what legitimately differs between a fleet and one machine:
/// the wall clock, and where each failure's scenario file went.
fn results(mut v: Value) -> Value {
    v.as_object_mut().expect("object").remove("wall_clock");
    for f in v["failures"].as_array_mut().expect("failures") {
        f.as_object_mut().expect("failure").remove("scenario");
    }
    v
}

/// Runs `0..600` of a canary as four shards, each in its own directory as on its own
/// machine, and as one run; returns (the merge's output, its JSON, the single run's
/// output, its JSON).
fn four_shards_and_one_run(dir: &Path, engine: &str) -> (Output, Value, Output, Value) {
    let mut summaries = Vec::new();
    for k in 0..4 {
        let machine = dir.join(format!("machine-{k}"));
        std::fs::create_dir_all(&machine).expect("machine directory");
        let shard = format!("{k}/4");
        let out = turnsim(
            &machine,
            &[
                "run",
                "--engine",
                engine,
                "--seeds",
                "0..600",
                "--shard",
                &shard,
                "--jobs",
                "2",
                "--quiet",
                "--max-failures",
                "1000",
                "--summary-json",
                "summary.json",
            ],
        );
        assert!(out.status.code().is_some(), "shard {k} ended by a signal");
        summaries.push(machine.join("summary.json").display().to_string());
    }
    let merged_path = dir.join("merged.json").display().to_string();
    let mut args = vec!["merge"];
    args.extend(summaries.iter().map(String::as_str));
    args.extend(["--json", &merged_path]);
    let merged = turnsim(dir, &args);
    let single = turnsim(
        dir,
        &[
            "run",
            "--engine",
            engine,
            "--seeds",
            "0..600",
            "--jobs",
            "1",
            "--quiet",
            "--max-failures",
            "1000",
            "--summary-json",
            "single.json",
        ],
    );
    (
        merged,
        read_json(&dir.join("merged.json")),
        single,
        read_json(&dir.join("single.json")),
    )
}

fn digest_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find(|l| l.trim_start().starts_with("digest "))
        .expect("a digest line")
        .to_string()
}

#[test]
fn four_shards_merge_into_the_summary_of_one_run_failures_and_all() {
    let dir = scratch("canary");
    let (merged, m, single, s) = four_shards_and_one_run(&dir, "stale_completion_applied");
    assert_eq!(merged.status.code(), Some(1), "{}", stderr(&merged));
    assert_eq!(single.status.code(), Some(1), "{}", stderr(&single));
    assert!(m["counts"]["failed"].as_u64().expect("failed") > 0);
    assert_eq!(m["digest"], s["digest"]);
    assert_eq!(digest_line(&merged), digest_line(&single));
    assert_eq!(results(m.clone()), results(s));
    assert_eq!(m["wall_clock"]["summaries"], 4);
    for f in m["failures"].as_array().expect("failures") {
        let seed = f["seed"].as_u64().expect("seed");
        let file = f["scenario"].as_str().expect("a scenario file");
        let machine = dir.join(format!("machine-{}", seed % 4));
        assert!(machine.join(file).is_file(), "seed {seed}: {file}");
    }
}

#[test]
fn a_merged_passing_fleet_exits_zero_and_names_the_whole_range() {
    let dir = scratch("reference");
    let (merged, m, single, s) = four_shards_and_one_run(&dir, "reference");
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    assert_eq!(single.status.code(), Some(0));
    assert_eq!(results(m.clone()), results(s));
    assert_eq!(
        m["requested"],
        serde_json::json!([{"seeds": "0..600", "shard": null}])
    );
    assert_eq!(
        m["ran"],
        serde_json::json!([{"first": 0, "step": 1, "count": 600}])
    );
    let text = String::from_utf8_lossy(&merged.stdout);
    assert!(text.contains("seeds that ran: [--seeds 0..600]"), "{text}");
}

/// Two shard summaries of `0..40` in `dir`: `a.json` (0/2) and `b.json` (1/2).
fn two_summaries(dir: &Path) {
    for (k, name) in [(0, "a.json"), (1, "b.json")] {
        let shard = format!("{k}/2");
        let out = turnsim(
            dir,
            &[
                "run",
                "--seeds",
                "0..40",
                "--shard",
                &shard,
                "--quiet",
                "--summary-json",
                name,
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

/// A change made to a summary file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

fn edit(dir: &Path, from: &str, to: &str, change: impl Fn(&mut Value)) {
    let mut v = read_json(&dir.join(from));
    change(&mut v);
    std::fs::write(dir.join(to), serde_json::to_string(&v).expect("json")).expect("write");
}

#[test]
fn merge_refuses_a_seed_in_two_summaries_with_a_usage_error() {
    let dir = scratch("overlap");
    two_summaries(&dir);
    let out = turnsim(
        &dir,
        &["merge", "a.json", "b.json", "a.json", "--json", "m.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "turnsim merge: seed 0 is in both a.json (--seeds 0..40 --shard 0/2) and a.json \
         (--seeds 0..40 --shard 0/2); each seed may be in one summary only\n"
    );
    assert!(
        !dir.join("m.json").exists(),
        "nothing is written on a refusal"
    );
    let whole = turnsim(
        &dir,
        &[
            "run",
            "--seeds",
            "30..50",
            "--quiet",
            "--summary-json",
            "c.json",
        ],
    );
    assert_eq!(whole.status.code(), Some(0));
    let out = turnsim(&dir, &["merge", "a.json", "b.json", "c.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "turnsim merge: seed 30 is in both a.json (--seeds 0..40 --shard 0/2) and c.json \
         (--seeds 30..50); each seed may be in one summary only\n"
    );
}

#[test]
fn merge_refuses_two_versions_or_two_configurations() {
    let dir = scratch("inconsistent");
    two_summaries(&dir);
    edit(&dir, "b.json", "b-version.json", |v| {
        v["turnsim_version"] = "0.0.9".into()
    });
    let out = turnsim(&dir, &["merge", "a.json", "b-version.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("a.json was written by turnsim 0.1.0 and b-version.json by turnsim 0.0.9"),
        "{}",
        stderr(&out)
    );
    edit(&dir, "b.json", "b-engine.json", |v| {
        v["options"]["engine"] = "marker_twice".into()
    });
    let out = turnsim(&dir, &["merge", "a.json", "b-engine.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("ran with different engines"),
        "{}",
        stderr(&out)
    );
    edit(&dir, "b.json", "b-det.json", |v| {
        v["options"]["check_determinism"] = true.into()
    });
    let out = turnsim(&dir, &["merge", "a.json", "b-det.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--check-determinism"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_summary_that_disagrees_with_itself_is_a_file_error_naming_the_field() {
    let dir = scratch("corrupt");
    two_summaries(&dir);
    let cases: [(&str, Edit, &str); 5] = [
        (
            "seeds",
            Box::new(|v| v["counts"]["seeds"] = 21.into()),
            "counts.seeds is 21 but `ran` holds 20 seeds",
        ),
        (
            "digest",
            Box::new(|v| v["digest"] = "0".repeat(64).into()),
            "but digest_sum and counts.seeds give",
        ),
        (
            "format",
            Box::new(|v| v["format"] = "other".into()),
            "not a turnsim summary file",
        ),
        (
            "unknown",
            Box::new(|v| v["extra"] = 1.into()),
            "unknown field `extra`",
        ),
        (
            "fault",
            Box::new(|v| v["faults"]["no_such"] = 1.into()),
            "faults.no_such",
        ),
    ];
    for (name, change, want) in cases {
        let file = format!("bad-{name}.json");
        edit(&dir, "a.json", &file, change);
        let out = turnsim(&dir, &["merge", &file, "b.json"]);
        assert_eq!(out.status.code(), Some(6), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("turnsim merge: {file}: ")),
            "{name}: {err}"
        );
        assert!(err.contains(want), "{name}: {err}");
    }
    let out = turnsim(&dir, &["merge", "missing.json"]);
    assert_eq!(out.status.code(), Some(6));
    assert!(
        stderr(&out).contains("missing.json: cannot read it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_time_boxed_shard_names_exactly_the_seeds_it_ran() {
    let dir = scratch("time");
    let out = turnsim(
        &dir,
        &[
            "run",
            "--seeds",
            "5..100000000",
            "--shard",
            "2/3",
            "--time",
            "1s",
            "--jobs",
            "2",
            "--quiet",
            "--summary-json",
            "boxed.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let boxed = read_json(&dir.join("boxed.json"));
    assert_eq!(boxed["stopped"], serde_json::json!(["time"]));
    let ran = &boxed["ran"][0];
    let count = ran["count"].as_u64().expect("count");
    assert!(count > 0, "a 1s budget runs at least the first seed");
    assert_eq!(
        (ran["first"].as_u64(), ran["step"].as_u64()),
        (Some(7), Some(3))
    );
    let last = 7 + 3 * (count - 1);
    // The rest of the shard, up to its last seed (99999997, so the range ends one past).
    assert_eq!(
        boxed["not_run"],
        serde_json::json!([{"seeds": format!("{}..99999998", last + 3), "shard": "0/3"}])
    );
    assert_eq!(boxed["counts"]["not_started"], 33_333_331 - count);
    // The seeds it names, run again on one job without a budget: the same digest.
    let again = turnsim(
        &dir,
        &[
            "run",
            "--seeds",
            &format!("5..{}", last + 1),
            "--shard",
            "2/3",
            "--jobs",
            "1",
            "--quiet",
            "--summary-json",
            "again.json",
        ],
    );
    assert_eq!(again.status.code(), Some(0));
    let again = read_json(&dir.join("again.json"));
    assert_eq!(again["counts"]["seeds"], count);
    assert_eq!(again["digest"], boxed["digest"]);
}

#[test]
fn a_stopped_batch_ran_a_prefix_of_its_seeds_whatever_the_jobs() {
    let seeds: Vec<u64> = (0..60).map(|i| 1000 + 7 * i).collect();
    for jobs in [1, 3] {
        for budget in [0u64, 1, 5, 17] {
            let calls = std::sync::atomic::AtomicU64::new(0);
            let stop = || calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= budget;
            let (summary, digests) = run_batch(&Batch {
                factory: &Reference,
                seeds: seeds.clone(),
                jobs,
                check_determinism: false,
                stop: &stop,
                progress: &|_, _| {},
            })
            .expect("batch runs");
            let ran: Vec<u64> = digests.iter().map(|(s, _)| *s).collect();
            assert_eq!(
                ran,
                seeds[..summary.seeds as usize],
                "jobs {jobs}, budget {budget}"
            );
            assert!(summary.seeds <= budget, "jobs {jobs}, budget {budget}");
            assert_eq!(summary.seeds + summary.skipped, 60);
        }
    }
}

#[test]
fn a_summary_path_that_cannot_be_written_is_a_file_error_before_any_seed_runs() {
    let dir = scratch("unwritable");
    std::fs::write(dir.join("plain-file"), b"").expect("file");
    let out = turnsim(
        &dir,
        &[
            "run",
            "--seeds",
            "0..10",
            "--quiet",
            "--summary-json",
            "plain-file/s.json",
        ],
    );
    assert_eq!(out.status.code(), Some(6));
    assert!(
        stderr(&out).starts_with("turnsim run: --summary-json plain-file: cannot write there: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(out.stdout, b"", "no seed ran");
    std::fs::create_dir(dir.join("a-dir")).expect("dir");
    let out = turnsim(
        &dir,
        &["run", "--seeds", "0..10", "--summary-json", "a-dir"],
    );
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(
        stderr(&out),
        "turnsim run: --summary-json a-dir: is a directory; expected a file name\n"
    );
}
