//! The scale-out examples in docs/scale-out/ are real: both parse as YAML, every
//! turnsim command in them uses flags the CLI has, and run as local processes the way
//! the manifests run them (the turnsim binary, one process per shard, the shard from
//! `JOB_COMPLETION_INDEX` or the matrix, `--summary-json`, then `turnsim merge`), the
//! merged summary has the digest and counts of one run over the whole range.

use clap::CommandFactory;
use serde_json::Value as Json;
use serde_norway::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The range the local runs use instead of the manifests' (the flags stay theirs).
const LOCAL_SEEDS: &str = "0..300";

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("scale-out-yaml-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/scale-out")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every YAML document in `text`.
fn documents(text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("not YAML: {e}")))
        .collect()
}

fn get<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, key| {
        v.get(*key)
            .unwrap_or_else(|| panic!("no {key} in {path:?}"))
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("expected a string, got {other:?}"),
    }
}

/// The turnsim commands of a shell script: (subcommand, long flags), with backslash
/// continuations joined.
fn turnsim_commands(script: &str) -> Vec<(String, Vec<String>)> {
    let joined = script.replace("\\\n", " ");
    let mut found = Vec::new();
    for line in joined.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if *w == "turnsim" && i + 1 < words.len() {
                let flags = words[i + 2..]
                    .iter()
                    .filter(|w| w.starts_with("--"))
                    .map(|w| w.split('=').next().unwrap_or(w).to_string())
                    .collect();
                found.push((words[i + 1].to_string(), flags));
            }
        }
    }
    found
}

/// Asserts each turnsim command in `script` names a real subcommand and real flags.
fn assert_real_flags(script: &str, want: &[&str]) {
    let cli = turnsim::cli::Cli::command();
    let commands = turnsim_commands(script);
    let names: Vec<&str> = commands.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(names, want, "in {script}");
    for (sub, flags) in &commands {
        let sub_cmd = cli
            .find_subcommand(sub)
            .unwrap_or_else(|| panic!("turnsim has no subcommand {sub}"));
        let known: Vec<String> = sub_cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for flag in flags {
            assert!(known.contains(flag), "turnsim {sub} has no flag {flag}");
        }
    }
}

/// A script run as the manifests run it: `sh -c`, the turnsim binary first on PATH.
fn sh(script: &str, dir: &Path, env: &BTreeMap<String, String>) -> std::process::Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_turnsim"))
        .parent()
        .expect("bin dir");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .envs(env)
        .env("PATH", path)
        .output()
        .expect("sh runs")
}

/// One run of the whole local range: the summary a single machine writes.
fn single_run(dir: &Path) -> Json {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .current_dir(dir)
        .args([
            "run",
            "--seeds",
            LOCAL_SEEDS,
            "--quiet",
            "--summary-json",
            "single.json",
        ])
        .output()
        .expect("turnsim runs");
    assert_eq!(out.status.code(), Some(0));
    read_json(&dir.join("single.json"))
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

fn assert_merged_is_single(merged: &Json, single: &Json) {
    assert_eq!(merged["digest"], single["digest"]);
    assert_eq!(merged["counts"], single["counts"]);
    assert_eq!(merged["ran"], single["ran"]);
    assert_eq!(merged["requested"], single["requested"]);
    assert_eq!(merged["faults"], single["faults"]);
    assert_eq!(merged["coverage"], single["coverage"]);
    assert_eq!(merged["counts"]["seeds"], 300);
}

/// The container of the one Job in `docs` whose name is `name`: (job, script, env).
fn k8s_job(docs: &[Value], name: &str) -> (Value, String, BTreeMap<String, String>) {
    let job = docs
        .iter()
        .find(|d| text(get(d, &["kind"])) == "Job" && text(get(d, &["metadata", "name"])) == name)
        .unwrap_or_else(|| panic!("no Job {name}"))
        .clone();
    let containers = get(&job, &["spec", "template", "spec", "containers"]);
    let container = containers.get(0).expect("a container");
    let command: Vec<String> = get(container, &["command"])
        .as_sequence()
        .expect("command list")
        .iter()
        .map(text)
        .collect();
    assert_eq!(command, ["sh", "-c"]);
    let script = text(get(container, &["args"]).get(0).expect("one script"));
    let env = get(container, &["env"])
        .as_sequence()
        .expect("env list")
        .iter()
        .map(|e| (text(get(e, &["name"])), text(get(e, &["value"]))))
        .collect();
    (job, script, env)
}

#[test]
fn the_kubernetes_indexed_job_shards_and_merges_to_the_single_run_digest() {
    let shards_docs = documents(&example("k8s-job.yaml"));
    let merge_docs = documents(&example("k8s-merge.yaml"));
    let kinds: Vec<String> = shards_docs
        .iter()
        .map(|d| text(get(d, &["kind"])))
        .collect();
    assert_eq!(kinds, ["PersistentVolumeClaim", "Job"]);
    let (job, script, mut env) = k8s_job(&shards_docs, "turnsim-shards");
    assert_eq!(text(get(&job, &["spec", "completionMode"])), "Indexed");
    let completions: u64 = text(get(&job, &["spec", "completions"]))
        .parse()
        .expect("number");
    assert_eq!(env["JOB_COMPLETION_COUNT"], completions.to_string());
    assert_real_flags(&script, &["run"]);
    let (_, merge_script, merge_env) = k8s_job(&merge_docs, "turnsim-merge");
    assert_real_flags(&merge_script, &["merge"]);

    let dir = scratch("k8s");
    let results = dir.join("results");
    env.insert("SEEDS".into(), LOCAL_SEEDS.into());
    env.insert("RESULTS".into(), results.display().to_string());
    for k in 0..completions {
        let mut pod_env = env.clone();
        pod_env.insert("JOB_COMPLETION_INDEX".into(), k.to_string());
        let out = sh(&script, &dir, &pod_env);
        assert_eq!(
            out.status.code(),
            Some(0),
            "pod {k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary = read_json(&results.join(format!("shard-{k}/summary.json")));
        assert_eq!(
            summary["requested"][0]["shard"],
            format!("{k}/{completions}")
        );
    }
    let mut merge_env = merge_env;
    merge_env.insert("RESULTS".into(), results.display().to_string());
    let out = sh(&merge_script, &dir, &merge_env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = read_json(&results.join("merged.json"));
    assert_eq!(merged["wall_clock"]["summaries"], completions);
    assert_merged_is_single(&merged, &single_run(&dir));
}

#[test]
fn the_github_actions_matrix_shards_uploads_and_merges_to_the_single_run_digest() {
    let docs = documents(&example("gha-matrix.yml"));
    let wf = &docs[0];
    let mut env: BTreeMap<String, String> = get(wf, &["env"])
        .as_mapping()
        .expect("env map")
        .iter()
        .map(|(k, v)| (text(k), text(v)))
        .collect();
    let matrix: Vec<String> = get(wf, &["jobs", "shard", "strategy", "matrix", "shard"])
        .as_sequence()
        .expect("matrix list")
        .iter()
        .map(text)
        .collect();
    let n = matrix.len();
    assert_eq!(env["SHARDS"], n.to_string());
    assert_eq!(matrix, (0..n).map(|k| k.to_string()).collect::<Vec<_>>());
    let run_steps = |job: &str| -> Vec<Value> {
        get(wf, &["jobs", job, "steps"])
            .as_sequence()
            .expect("steps")
            .iter()
            .filter(|s| s.get("run").is_some_and(|r| text(r).contains("turnsim ")))
            .cloned()
            .collect()
    };
    let shard_steps = run_steps("shard");
    assert_eq!(shard_steps.len(), 1, "one step runs the shard");
    let script = text(get(&shard_steps[0], &["run"]));
    assert_real_flags(&script, &["run"]);
    let merge_steps = run_steps("merge");
    assert_eq!(merge_steps.len(), 1, "one step merges");
    let merge_script = text(get(&merge_steps[0], &["run"]));
    assert_real_flags(&merge_script, &["merge"]);
    let uses: Vec<String> = get(wf, &["jobs", "shard", "steps"])
        .as_sequence()
        .expect("steps")
        .iter()
        .filter_map(|s| s.get("uses").map(text))
        .collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("actions/upload-artifact@")),
        "{uses:?}"
    );

    let dir = scratch("gha");
    env.insert("SEEDS".into(), LOCAL_SEEDS.into());
    let downloads = dir.join("merge/shards");
    for k in &matrix {
        let runner = dir.join(format!("runner-{k}"));
        std::fs::create_dir_all(&runner).expect("runner workspace");
        let script = script.replace("${{ matrix.shard }}", k);
        assert!(
            !script.contains("${{"),
            "an expression the test does not fill: {script}"
        );
        let out = sh(&script, &runner, &env);
        assert_eq!(
            out.status.code(),
            Some(0),
            "shard {k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // upload-artifact of results/, download-artifact into shards/<artifact name>/
        let artifact = downloads.join(format!("turnsim-shard-{k}"));
        std::fs::create_dir_all(&artifact).expect("artifact directory");
        std::fs::copy(
            runner.join("results/summary.json"),
            artifact.join("summary.json"),
        )
        .expect("summary uploaded");
    }
    let out = sh(&merge_script, &dir.join("merge"), &env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = read_json(&dir.join("merge/merged.json"));
    assert_eq!(merged["wall_clock"]["summaries"], n as u64);
    assert_merged_is_single(&merged, &single_run(&dir));
}

#[test]
fn the_flag_scan_sees_continued_lines_and_every_command() {
    let found = turnsim_commands(
        "turnsim run --seeds 0..9 \\\n  --summary-json=x.json\nturnsim merge a b --json m",
    );
    assert_eq!(
        found,
        [
            (
                "run".to_string(),
                vec!["--seeds".to_string(), "--summary-json".to_string()]
            ),
            ("merge".to_string(), vec!["--json".to_string()]),
        ]
    );
}
