//! `turnsim run` keeps what it found: failures are written as they are found, Ctrl-C
//! prints the summary of what ran, `--stop-after` stops the run, `--max-failures`
//! caps the scenarios of each invariant without hiding another's, and the failure
//! list is compact.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-interrupt-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn ctrl_c_keeps_the_failures_found_and_prints_the_summary() {
    let out = scratch("ctrl-c");
    let child = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["run", "--engine", "marker_twice", "--seeds", "0..10000000"])
        .args([
            "--max-failures",
            "100000000",
            "--jobs",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("turnsim starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while scenario_files(&out).len() < 2 {
        assert!(Instant::now() < deadline, "no failure written within 120 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let output = child.wait_with_output().expect("turnsim ends");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("interrupted (Ctrl-C): the seeds that ran are summarised below\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("turnsim summary (engine: marker_twice)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" not started (interrupted by Ctrl-C)\n"),
        "{stdout}"
    );
    let files = scenario_files(&out);
    assert!(files.len() >= 2, "{files:?}");
    for f in &files {
        let name = f.file_name().expect("a name").to_string_lossy().to_string();
        assert!(stdout.contains(&name), "{name} not listed in:\n{stdout}");
        turnsim::load_scenario(f).expect("a written scenario loads whole");
    }
}

#[test]
fn stop_after_stops_the_run_and_the_list_is_compact() {
    let out = scratch("stop-after");
    let output = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["run", "--engine", "marker_twice", "--seeds", "0..100000"])
        .args(["--stop-after", "3", "--jobs", "1", "--quiet", "--out"])
        .arg(&out)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .output()
        .expect("turnsim runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let files = scenario_files(&out);
    assert_eq!(
        files.len(),
        3,
        "one job stops right after the third: {files:?}"
    );
    assert!(
        stdout.contains(" not started (--stop-after reached)\n"),
        "{stdout}"
    );
    // One full report (options and last steps), then one line per other failure.
    assert_eq!(stdout.matches("last steps:").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("FAIL seed ").count(), 1, "{stdout}");
    assert!(
        stdout.contains("2 more failing seed(s), in seed order:\n"),
        "{stdout}"
    );
    let list_start = stdout.find("in seed order:\n").expect("the list") + 15;
    let lines: Vec<&str> = stdout[list_start..].lines().take(2).collect();
    for line in lines {
        assert!(line.starts_with("  seed "), "{line}");
        assert!(line.contains(": marker_once at step "), "{line}");
        assert!(line.contains("  turnsim replay "), "{line}");
    }
}

#[test]
fn max_failures_caps_each_invariants_scenarios_and_the_run_goes_on() {
    let out = scratch("max-failures");
    let output = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["run", "--engine", "marker_twice", "--seeds", "0..300"])
        .args(["--max-failures", "2", "--jobs", "1", "--quiet", "--out"])
        .arg(&out)
        .env_remove("TURNSIM_SEED")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("JOB_COMPLETION_COUNT")
        .output()
        .expect("turnsim runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    // Every seed ran: failures no longer stop the run.
    assert!(stdout.contains("  seeds        300 run, "), "{stdout}");
    assert!(!stdout.contains("not started"), "{stdout}");
    assert_eq!(scenario_files(&out).len(), 2, "two of its one invariant");
    let table = stdout
        .split("failures by invariant (first seed, count):\n")
        .nth(1)
        .expect("the table by invariant");
    let row = table.lines().next().expect("one row");
    assert!(row.starts_with("  marker_once "), "{row}");
    assert!(
        row.ends_with(" not saved (--max-failures 2 per invariant)"),
        "{row}"
    );
}
