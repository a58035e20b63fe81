//! `turnsim drive`'s hygiene against the test client: a tool orphaned in a session
//! of its own is found, waited for until its effect shows after the client exited,
//! and cleaned up with everything else the run left (found by its marker); the
//! same orphan after SIGKILL is informational; a missing or broken client is an
//! environment error; a failing seed is rerun with a full report per rerun and a
//! reproduction script that needs no turnsim; runs go in parallel with a summary.

use crate::drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::{Interrupt, profile};
use turnsim::testing::drive::report::Outcome;

#[test]
fn a_setsid_orphan_after_sigterm_shows_its_effect_after_exit_and_is_cleaned_up() {
    let p = test_client(&["--orphan-setsid"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "orphan");
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.text());
    assert_eq!(status(&r, "orphaned_tool"), Status::Fail, "{}", r.text());
    let o = &r.first.orphans[0];
    assert_eq!(
        o.sid, o.pgid,
        "a session of its own, led by its sh -c: {o:?}"
    );
    let exit = r.first.end_ms;
    let effect = o.effect_ms.expect("the harness waited for the effect");
    assert!(effect > exit, "{}", r.text());
    assert!(!o.killed_by_harness, "{}", r.text());
    let d = &details(&r, "orphaned_tool")[0];
    assert!(d.starts_with("SIGTERM sent at +"), "{d}");
    assert!(
        d.contains(&format!("{} ms after the client exited", effect - exit)),
        "{d}"
    );
    assert!(d.contains("exit 143 = 128 + 15"), "{d}");
    assert_eq!(status(&r, "stray_process"), Status::Fail, "{}", r.text());
    let strays = details(&r, "stray_process");
    assert!(
        strays.iter().any(|d| d.contains("`sleep 600`")),
        "{}",
        r.text()
    );
    assert!(
        strays.iter().all(|d| !d.contains("tool.sh")),
        "{}",
        r.text()
    );
    assert!(
        r.first.killed.iter().any(|k| k.command == "sleep 600"),
        "{}",
        r.text()
    );
    assert!(r.first.leftovers.is_empty() && r.resumed.leftovers.is_empty());
    let repro = r.dir.join("repro.py");
    let out = std::process::Command::new("python3")
        .arg(&repro)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("REPRODUCED orphaned_tool: tool "), "{text}");
    assert!(text.contains("SIGTERM sent"), "{text}");
}

#[test]
fn the_same_orphan_after_sigkill_is_informational_not_a_failure() {
    let p = test_client(&["--orphan-setsid"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigkill), "orphan-kill");
    assert!(r.failing().is_empty(), "{}", r.text());
    assert_eq!(r.outcome, Outcome::Info, "{}", r.text());
    assert_eq!(status(&r, "orphaned_tool"), Status::Info, "{}", r.text());
    assert!(details(&r, "orphaned_tool")[0].starts_with("informational: after SIGKILL"));
}

#[test]
fn a_missing_client_or_a_broken_install_is_an_environment_error() {
    let out = temp_dir("env").display().to_string();
    let (code, _, err) = turnsim(&[
        "--client",
        "custom",
        "--out",
        &out,
        "--",
        "/nonexistent/agent",
        "{prompt}",
    ]);
    assert_eq!(code, 8, "{err}");
    assert!(
        err.contains("client custom: \"/nonexistent/agent\" is not installed"),
        "{err}"
    );
    // A built-in client that is missing names the package that provides it.
    let out_codex = temp_dir("env-codex").display().to_string();
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["drive", "--client", "codex", "--out", &out_codex])
        .env("PATH", "/nonexistent")
        .output()
        .expect("turnsim runs");
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(8), "{err}");
    assert!(
        err.contains("client codex: \"codex\" is not installed or not on PATH; install Codex CLI: `npm install @openai/codex`"),
        "{err}"
    );
    let mut p =
        profile("custom", &["sh".into(), "-c".into(), "exit 127".into()]).expect("custom profile");
    p.interrupts = vec![Interrupt::Sigterm];
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "broken");
    assert_eq!(r.outcome, Outcome::Environment, "{}", r.text());
    assert!(
        r.reason
            .as_deref()
            .is_some_and(|w| w.contains("exited 127 (exit 127: command not found)")),
        "{}",
        r.text()
    );
    let (code, _, err) = turnsim(&[
        "--client", "custom", "--out", &out, "--rerun", "0", "--", "sh", "-c", "exit 127",
    ]);
    assert_eq!(code, 8, "{err}");
    assert!(
        err.contains("environment error, not a client finding"),
        "{err}"
    );
}

#[test]
fn reruns_judge_every_checker_and_parallel_seeds_write_a_summary() {
    let out = temp_dir("batch");
    let o = out.display().to_string();
    let bin = env!("CARGO_BIN_EXE_turnsim-test-client");
    let (code, stdout, err) = turnsim(&[
        "--client",
        "custom",
        "--seeds",
        "0..=2",
        "--jobs",
        "2",
        "--json",
        "--rerun",
        "1",
        "--tool-ms",
        "1200",
        "--timeout",
        "60",
        "--out",
        &o,
        "--",
        bin,
        "--base-url",
        "{base_url}",
        "--history",
        "{work}/history.json",
        "--drop-started-call",
        "{resume}",
        "{prompt}",
    ]);
    let sum: serde_json::Value = serde_json::from_str(&stdout).expect("--json prints JSON");
    assert_eq!(sum["runs"], 3, "{stdout}\n{err}");
    let failed = sum["failed_runs"].as_u64().unwrap_or(0);
    assert_eq!(code, if failed > 0 { 1 } else { 0 }, "{err}");
    assert!(out.join("summary.md").is_file());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap_or_default();
    assert!(md.contains("| class | runs | outcomes |"), "{md}");
    for seed in 0..3 {
        let rep: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("run-{seed}/report.json")))
                .unwrap_or_default(),
        )
        .expect("a report per run");
        if rep["outcome"] == "fail" {
            assert!(
                out.join(format!("run-{seed}/rerun-1/report.json"))
                    .is_file()
            );
            assert!(out.join(format!("run-{seed}/repro.py")).is_file());
            assert_eq!(rep["reruns"]["runs"], 1, "{rep}");
        }
    }
    assert!(failed > 0, "seeds 0..=2 hold a signalled run: {md}");
}

/// The `SigIgn` mask of `/proc/self/status` as written to `path`.
fn ignored_mask(text: &str) -> u64 {
    let hex = text
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .expect("a SigIgn line")
        .trim();
    u64::from_str_radix(hex, 16).expect("hex mask")
}

#[test]
fn a_client_starts_with_sigint_and_sighup_at_their_default_when_the_harness_ignores_them() {
    // SIGHUP, SIGINT, SIGQUIT, SIGTERM: bits 0, 1, 2 and 14 of the mask.
    let bits: u64 = 0b111 | 1 << 14;
    // What `cmd &` in a script (SIGINT, SIGQUIT) or `nohup` (SIGHUP) leaves behind: an
    // ignored disposition, which survives exec. First, that the shell really does so.
    let trap = "trap '' INT HUP QUIT TERM";
    let control = std::process::Command::new("sh")
        .args(["-c", &format!("{trap}; grep SigIgn /proc/self/status")])
        .output()
        .expect("sh runs");
    let mask = ignored_mask(&String::from_utf8_lossy(&control.stdout));
    assert_eq!(mask & bits, bits, "{mask:x}");
    // A harness started that way still starts its client with the defaults.
    let out = temp_dir("sigdfl");
    let status = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "{trap}; exec \"$0\" drive --client custom --rerun 0 --out \"$1\" -- sh -c \"$2\""
            ),
            env!("CARGO_BIN_EXE_turnsim"),
            &out.display().to_string(),
            "grep SigIgn /proc/self/status > {work}/sigign",
        ])
        .status()
        .expect("turnsim runs");
    let written = std::fs::read_to_string(out.join("run-0/work/sigign"))
        .unwrap_or_else(|e| panic!("the client ran ({status}): {e}"));
    let mask = ignored_mask(&written);
    assert_eq!(
        mask & bits,
        0,
        "the client inherited ignored signals: {mask:x}"
    );
}

#[test]
fn a_relative_out_directory_still_gives_the_client_a_home_and_history_that_exist() {
    let parent = temp_dir("relative");
    std::fs::create_dir_all(&parent).expect("temp dir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .current_dir(&parent)
        .args([
            "drive",
            "--client",
            "test-client",
            "--seeds",
            "0..1",
            "--no-signal",
            "1/1",
            "--no-fault",
            "1/1",
            "--tool-ms",
            "200",
            "--rerun",
            "0",
            "--out",
            "rel",
        ])
        .output()
        .expect("turnsim runs");
    let text = String::from_utf8_lossy(&out.stderr);
    // The client runs in `rel/run-0/work`; its history file is `{work}/history.json`.
    let history = parent.join("rel/run-0/work/history.json");
    assert!(history.is_file(), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");
}
