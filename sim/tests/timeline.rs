//! `turnsim replay --html` and `turnsim shrink` draw a run as one self-contained HTML
//! picture: a lane per actor, every trace line a mark with its details, every request
//! opening its messages, the violation where it happened beside what it compares; the
//! same bytes every time, and nothing loaded from outside the file.

use crate::timeline_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use timeline_support::*;

fn turnsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .output()
        .expect("the turnsim binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("timeline-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory is created");
    dir
}

fn canary(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../scenarios/canary-{name}.json"))
        .display()
        .to_string()
}

/// Replays the canary with `--html`; the picture's text.
fn picture(name: &str, dir: &Path) -> String {
    let out = dir.join(format!("{name}.html"));
    let (code, stdout, stderr) = turnsim(&[
        "replay",
        &canary(name),
        "--html",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 1, "a canary replays its failure\n{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("timeline: {}", out.display())),
        "{stdout}"
    );
    std::fs::read_to_string(&out).expect("the picture is written")
}

const SIM_LANES: [&str; 6] = [
    "user / host",
    "engine",
    "provider stream",
    "tools",
    "durable log",
    "faults",
];

#[test]
fn a_replayed_canary_draws_six_lanes_and_its_violation_with_its_message() {
    let dir = scratch("crash");
    let html = picture("crash_loses_draft", &dir);
    let svg = roxmltree::Document::parse(svg_text(&html)).expect("the svg is well-formed XML");
    assert_eq!(lanes(&svg), SIM_LANES);
    let message = "text the user saw streamed is not in the history after the interruption: §";
    assert_eq!(
        titles(&svg, "alarm"),
        [format!("shown_survives: step 5: {message}")]
    );
    assert!(html.contains(&format!("<p class=\"message\">step 5: {message}</p>")));
    // The two things it compares: the history before and after the crash.
    assert!(html.contains("<h3>history at the start of step 5 (251 bytes)</h3>"));
    assert!(
        html.contains("<p class=\"first-difference\">First difference at byte 251 (line 2).</p>")
    );
    assert_self_contained(&html);
}

#[test]
fn every_trace_line_is_a_mark_whose_hover_text_holds_it() {
    let dir = scratch("marks");
    let html = picture("marker_twice", &dir);
    let svg = roxmltree::Document::parse(svg_text(&html)).expect("the svg parses");
    let (_, trace, _) = turnsim(&["replay", &canary("marker_twice"), "--trace"]);
    let lines: Vec<&str> = trace.lines().filter(|l| l.starts_with("[step")).collect();
    assert_eq!(lines.len(), 9, "{trace}");
    let mut hover: Vec<String> = titles(&svg, "mark");
    for line in lines {
        let text = line.split_once("ms] ").expect("a world line").1;
        let i = hover
            .iter()
            .position(|h| h.ends_with(&format!("ms: {text}")))
            .unwrap_or_else(|| panic!("no mark for {line:?}"));
        hover.remove(i);
    }
    // What is left is the durable log's writes, which the trace does not print.
    assert!(!hover.is_empty());
    assert!(hover.iter().all(|h| h.contains(": persist ")), "{hover:?}");
}

#[test]
fn every_request_mark_opens_the_messages_that_request_carried() {
    let dir = scratch("requests");
    let html = picture("marker_twice", &dir);
    let links = attribute_values(&html, "href");
    let requests: Vec<&&str> = links.iter().filter(|h| h.starts_with("#req-")).collect();
    assert_eq!(requests, [&"#req-0", &"#req-1"]);
    for (k, id) in ["req-0", "req-1"].iter().enumerate() {
        let open = format!("<details id=\"{id}\"><summary>op#{}", k + 1);
        let at = html.find(&open).unwrap_or_else(|| panic!("no panel {id}"));
        let panel = &html[at..at + html[at..].find("</details>").expect("closed")];
        assert!(
            panel.contains("messages[0]: {&quot;role&quot;:&quot;user&quot;"),
            "{panel}"
        );
    }
}

#[test]
fn a_request_violation_shows_the_request_beside_the_one_it_should_extend() {
    let dir = scratch("prefix");
    let html = picture("time_in_system_prompt", &dir);
    assert!(html.contains("the earlier request"), "{html}");
    assert!(html.contains(", at the violation ("), "{html}");
    // The system prompt is the first line of a request's text: that is what moved.
    let diff = html
        .split("<p class=\"first-difference\">")
        .nth(1)
        .expect("a difference");
    assert!(
        diff.starts_with("First difference at byte ") && diff.contains("(line 1)."),
        "{diff}"
    );
}

#[test]
fn a_scenario_draws_the_same_bytes_every_time() {
    let dir = scratch("same");
    let first = picture("turn_end_not_persisted", &dir);
    let second = picture("turn_end_not_persisted", &dir);
    assert_eq!(first, second);
}

#[test]
fn shrink_writes_a_picture_beside_the_shrunk_scenario() {
    let dir = scratch("shrink");
    let file = dir.join("marker.json");
    std::fs::copy(canary("marker_twice"), &file).expect("the canary is copied");
    let (code, stdout, stderr) =
        turnsim(&["shrink", file.to_str().expect("utf-8"), "--budget", "300"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let html_path = dir.join("marker.min.html");
    assert!(
        stdout.contains(&format!("timeline: {}", html_path.display())),
        "{stdout}"
    );
    let html = std::fs::read_to_string(&html_path).expect("the picture is written");
    let svg = roxmltree::Document::parse(svg_text(&html)).expect("the svg parses");
    assert_eq!(lanes(&svg), SIM_LANES);
    let alarms = titles(&svg, "alarm");
    assert_eq!(alarms.len(), 1);
    assert!(alarms[0].starts_with("marker_once: step "), "{alarms:?}");
    assert_self_contained(&html);
}

#[test]
fn an_unwritable_picture_path_is_a_file_error_not_a_panic() {
    let dir = scratch("unwritable");
    let blocker = dir.join("file");
    std::fs::write(&blocker, "x").expect("written");
    let out = blocker.join("sub/picture.html");
    let (code, stdout, stderr) = turnsim(&[
        "replay",
        &canary("marker_twice"),
        "--html",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 6, "{stdout}{stderr}");
    assert!(stderr.starts_with("--html: cannot write "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
