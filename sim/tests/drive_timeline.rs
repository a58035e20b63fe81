//! `turnsim drive` leaves `timeline.html` in every run directory: wall-clock lanes for
//! the client, the signal, the requests served and each tool process, with an orphan's
//! effect after its client's exit drawn as an alarm; self-contained, well-formed.

use crate::drive_support;
use crate::timeline_support;

use drive_support::*;
use timeline_support::*;
use turnsim::testing::drive::profiles::Interrupt;

#[test]
fn an_orphaned_tool_is_drawn_running_on_after_its_client_exited() {
    let p = test_client(&["--orphan-setsid"]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigterm), "timeline-orphan");
    let html = std::fs::read_to_string(r.dir.join("timeline.html")).expect("the run has a picture");
    let svg = roxmltree::Document::parse(svg_text(&html)).expect("the svg is well-formed XML");
    let names = lanes(&svg);
    assert_eq!(
        names[..3],
        ["client", "signals and keys", "requests served"]
    );
    assert_eq!(names.last().map(String::as_str), Some("left after exit"));
    let orphan = &r.first.orphans[0];
    assert!(names.contains(&format!("tool {}", orphan.id)), "{names:?}");
    // The client's two invocations and its exit after SIGTERM.
    assert_eq!(
        titles(&svg, "span").len(),
        0,
        "spans carry their title on the group"
    );
    let exits = titles(&svg, "exit-mark");
    assert!(
        exits
            .iter()
            .any(|t| t.starts_with("first client ended: exit 143")),
        "{exits:?}"
    );
    let signals = titles(&svg, "sig-mark");
    assert_eq!(signals.len(), 1, "{signals:?}");
    assert!(signals[0].contains(": SIGTERM sent;"), "{signals:?}");
    assert_eq!(
        titles(&svg, "req-mark").len()
            + titles(&svg, "bad-mark")
                .iter()
                .filter(|t| t.contains("request #"))
                .count(),
        r.requests
    );
    // The orphan: its effect after the exit is an alarm with the gap in words.
    let effect = orphan.effect_ms.expect("the harness waited for the effect");
    let gap = effect - r.first.end_ms;
    let alarms = titles(&svg, "alarm");
    assert!(
        alarms
            .iter()
            .any(|a| a.starts_with(&format!("orphan: tool {}", orphan.id))
                && a.contains(&format!("{gap} ms after its client exited"))),
        "{alarms:?}"
    );
    let ran_on: Vec<_> = svg
        .descendants()
        .filter(|n| n.attribute("class") == Some("span badspan"))
        .collect();
    assert!(!ran_on.is_empty(), "the time it ran on is drawn as wrong");
    assert_self_contained(&html);
}

#[test]
fn a_clean_run_has_a_picture_without_alarms() {
    let p = test_client(&[]);
    let r = drive(&p, seed_with(&p, Interrupt::Sigint), "timeline-clean");
    assert!(r.failing().is_empty(), "{}", r.text());
    let html = std::fs::read_to_string(r.dir.join("timeline.html")).expect("the run has a picture");
    let svg = roxmltree::Document::parse(svg_text(&html)).expect("the svg parses");
    assert_eq!(titles(&svg, "alarm"), Vec::<String>::new());
    assert_eq!(titles(&svg, "sig-mark").len(), 1);
    assert_self_contained(&html);
}
