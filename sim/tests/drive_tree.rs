//! A tool is its whole process tree: a child a tool command leaves behind and that
//! outlives the client fails `orphaned_tool` with the child's pid, command line and
//! lifetime, in the verdict, the report and the timeline; a child that ends before
//! the client does is no finding.

use crate::drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::report::Outcome;

#[test]
fn a_child_a_tool_left_behind_that_outlives_the_client_is_its_orphan_named_with_its_lifetime() {
    // Each tool first forks `sleep 20` through a subshell that exits at once: the
    // child is reparented while the tool runs, and lives long past the client.
    let p = test_client(&["--tool-child-ms", "20000"]);
    let r = drive_quiet(&p, 2, "tree-orphan");
    assert_eq!(r.outcome, Outcome::Fail, "{}", r.text());
    assert_eq!(status(&r, "orphaned_tool"), Status::Fail, "{}", r.text());
    assert_eq!(status(&r, "stray_process"), Status::Pass, "{}", r.text());
    // Both calls of the first invocation left one; each is named with its tool.
    assert_eq!(r.first.orphans.len(), 2, "{}", r.text());
    for o in &r.first.orphans {
        assert!(o.script_gone, "{o:?}");
        let children: Vec<_> = o
            .survivors
            .iter()
            .filter(|s| s.command == "sleep 20.000")
            .collect();
        assert_eq!(children.len(), 1, "{o:?}");
        let c = children[0];
        assert!(c.killed_by_harness, "{c:?}");
        assert!(
            c.start_ms <= r.first.end_ms && c.end_ms > r.first.end_ms,
            "{c:?}"
        );
        assert!(
            r.first
                .killed
                .iter()
                .any(|k| k.pid == c.pid && k.tool.as_deref() == Some(o.id.as_str())),
            "{}",
            r.text()
        );
    }
    let d = details(&r, "orphaned_tool");
    let first = r.first.orphans[0].survivors[0].pid;
    assert!(
        d.iter().any(|d| d.contains(&format!(
            "pid {first} (`sleep 20.000`, in the tool's process group"
        )) && d.contains("ran until the harness killed it at +")),
        "{}",
        r.text()
    );
    let html = std::fs::read_to_string(r.dir.join("timeline.html")).unwrap_or_default();
    assert!(html.contains(&format!("pid {first} ran on")), "timeline");
    assert!(html.contains("sleep 20.000"), "timeline");
    // The reproduction needs no turnsim and follows the tree the same way.
    let out = std::process::Command::new("python3")
        .arg(r.dir.join("repro.py"))
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("REPRODUCED orphaned_tool: pid ")
            && text.contains("(`sleep 20.000`) of tool ")
            && text.contains("was alive 300 ms after the client exited"),
        "{text}"
    );
}

#[test]
fn a_child_that_ends_before_the_client_is_no_orphan() {
    // The near miss: the same fork, but the child sleeps 0.2 s of the tool's 1.5 s.
    let p = test_client(&["--tool-child-ms", "200"]);
    let r = drive_quiet(&p, 2, "tree-near-miss");
    assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
    assert!(r.first.orphans.is_empty(), "{}", r.text());
    assert!(
        r.first
            .killed
            .iter()
            .all(|k| !k.command.starts_with("sleep")),
        "{}",
        r.text()
    );
}
