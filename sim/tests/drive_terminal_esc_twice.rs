//! A terminal UI that arms on the first Esc and interrupts only on a second one
//! (opencode's "esc again to interrupt") is interrupted as its user does it: the
//! profile's terminal says how many presses (`esc_presses`), the harness types them
//! 400 ms apart and logs each, and Ctrl+C stays one press. Pressed once, such a UI
//! is not interrupted at all, and the run says so (`no_effect_after_cancel`): the
//! test client's `--esc-twice` plants that behaviour.

use crate::drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::Interrupt;
use turnsim::testing::drive::report::{Outcome, RunReport};
use turnsim::testing::drive::run::{RunFile, Schedule};

fn run_with_presses(want: Interrupt, presses: u32, name: &str) -> RunReport {
    let p = test_client_tui(&["--esc-twice"]);
    let schedule = Schedule::from_seed(seed_with(&p, want), &p, TOOL_MS, &Default::default());
    let mut file = RunFile::new(p, schedule, TIMEOUT_SECS);
    let term = file.terminal.as_mut().expect("an interactive profile");
    assert_eq!(term.esc_presses, 1, "the test client's own terminal");
    term.esc_presses = presses;
    turnsim::drive::drive_one(&file, &temp_dir(name), "test", 0).expect("the run completes")
}

#[test]
fn an_esc_pressed_once_where_the_ui_asks_for_two_leaves_the_tool_running() {
    let r = run_with_presses(Interrupt::Esc, 1, "esc-once");
    assert_eq!(
        status(&r, "no_effect_after_cancel"),
        Status::Fail,
        "{}",
        r.text()
    );
    let log = r.first.terminal.as_ref().expect("a terminal log");
    assert_eq!(log.key_ms.len(), 1, "{log:?}");
    assert!(
        std::fs::read_to_string(r.dir.join("first.screen"))
            .expect("screen kept")
            .contains("esc again to interrupt"),
        "the UI armed and waited"
    );
}

#[test]
fn an_esc_the_ui_asks_for_twice_is_typed_twice_and_interrupts_the_tool() {
    let r = run_with_presses(Interrupt::Esc, 2, "esc-twice");
    assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
    let sent = r.signal_sent.as_ref().expect("the key was typed");
    let log = r.first.terminal.as_ref().expect("a terminal log");
    assert_eq!(log.key_ms.len(), 2, "{log:?}");
    assert_eq!(log.key_ms[0], sent.at_ms, "{log:?}");
    let gap = log.key_ms[1] - log.key_ms[0];
    assert!((400..1400).contains(&gap), "{log:?}");
    for checker in ["started_call_represented", "no_effect_after_cancel"] {
        assert_eq!(status(&r, checker), Status::Pass, "{checker}: {}", r.text());
    }
}

#[test]
fn ctrl_c_is_one_press_whatever_esc_asks_for() {
    let r = run_with_presses(Interrupt::CtrlC, 2, "ctrl-c-once");
    assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
    let log = r.first.terminal.as_ref().expect("a terminal log");
    assert_eq!(log.key_ms.len(), 1, "{log:?}");
}
