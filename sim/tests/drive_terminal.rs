//! `turnsim drive`'s interactive mode against the test client's terminal UI: the
//! prompt is typed into a pty, the scheduled key (Esc, Ctrl+C) goes into the
//! terminal when the ledger says a tool has run long enough, and the client leaves
//! on `/exit` once idle (its busy line not drawn for as long); a client that lets
//! its tool run on after the key is found, and a request without tools after the
//! key is reported as the UI's own, not failed.

use crate::drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::{Interrupt, Profile};
use turnsim::testing::drive::report::{Outcome, RunReport};
use turnsim::testing::drive::run::{RunFile, Schedule};

#[test]
fn a_key_in_the_terminal_interrupts_the_tool_and_the_resumed_history_keeps_the_call() {
    let p = test_client_tui(&[]);
    for want in [Interrupt::Esc, Interrupt::CtrlC] {
        let r = drive(&p, seed_with(&p, want), "tui-clean");
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
        let sent = r.signal_sent.as_ref().expect("the key was typed");
        assert_eq!(sent.interrupt, want, "{}", r.text());
        assert_eq!(sent.running.len(), 1, "{}", r.text());
        // It stayed up after the key and left on the exit command, with code 0.
        assert_eq!(r.first.exit_code, Some(0), "{}", r.text());
        let log = r.first.terminal.as_ref().expect("a terminal log");
        let (ready, prompt, exit) = (
            log.ready_ms.expect("ready seen"),
            log.prompt_ms.expect("prompt typed"),
            log.exit_ms.expect("exit typed"),
        );
        assert!(
            ready <= prompt && prompt < sent.at_ms && sent.at_ms < exit,
            "{log:?}"
        );
        assert_eq!(log.hung_up_ms, None, "{}", r.text());
        for checker in ["started_call_represented", "no_effect_after_cancel"] {
            assert_eq!(status(&r, checker), Status::Pass, "{checker}: {}", r.text());
        }
        assert!(r.dir.join("first.screen").is_file());
    }
}

#[test]
fn a_client_that_ignores_the_key_and_lets_its_tool_finish_fails_no_effect_after_cancel() {
    let p = test_client_tui(&["--ignore-sigint"]);
    let r = drive(&p, seed_with(&p, Interrupt::CtrlC), "tui-ignore");
    assert_eq!(
        status(&r, "no_effect_after_cancel"),
        Status::Fail,
        "{}",
        r.text()
    );
    let o = r
        .observations
        .iter()
        .find(|o| o.name == "no_effect_after_cancel")
        .expect("checker present");
    assert!(
        o.details
            .iter()
            .any(|d| d.contains("was running at Ctrl+C") && d.contains("wrote its effect")),
        "{o:?}"
    );
}

#[test]
fn a_tui_still_drawing_its_busy_line_after_the_key_is_not_told_to_exit() {
    // The client winds its turn down for 6 s after the key: nothing sent, no tool
    // alive, only its busy line drawn. A quiet server is not a closed turn.
    let p = test_client_tui(&["--busy-after-key", "6000"]);
    let r = drive(&p, seed_with(&p, Interrupt::Esc), "tui-busy");
    assert_eq!(r.outcome, Outcome::Pass, "{}", r.text());
    let sent = r.signal_sent.as_ref().expect("the key was typed");
    let log = r.first.terminal.as_ref().expect("a terminal log");
    let busy = log.busy_last_ms.expect("the busy line was seen");
    let exit = log.exit_ms.expect("exit typed");
    assert!(busy >= sent.at_ms + 5500, "{log:?} key at {}", sent.at_ms);
    assert!(exit >= busy + 3900, "{log:?}");
    assert_eq!(log.hung_up_ms, None, "{}", r.text());
    assert_eq!(r.first.exit_code, Some(0), "{}", r.text());
}

#[test]
fn a_request_without_tools_after_the_key_is_reported_not_failed() {
    let p = test_client_tui(&["--side-request-after-key"]);
    let r = drive(&p, seed_with(&p, Interrupt::CtrlC), "tui-side");
    assert_eq!(
        status(&r, "no_effect_after_cancel"),
        Status::Info,
        "{}",
        r.text()
    );
    let d = details(&r, "no_effect_after_cancel");
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(
        d[0],
        "informational: 1 request(s) without tools after the key, none going on with the turn"
    );
    assert!(
        d[1].contains("sent after Ctrl+C")
            && d[1].ends_with("it declared no tools (the UI's own request)"),
        "{d:?}"
    );
    assert_eq!(r.outcome, Outcome::Info, "{}", r.text());
}

/// One quiet run (one tool call, no fault, no key) of `p` with its terminal hung up
/// `hang_up_after_ms` after the exit command.
fn quiet_with_hang_up(p: &Profile, hang_up_after_ms: u64, name: &str) -> RunReport {
    let schedule = Schedule {
        seed: 0,
        fault: None,
        fault_at: 0,
        rounds: 1,
        interrupt: None,
        interrupt_at_tool: 0,
        interrupt_delay_ms: 0,
        tool_ms: TOOL_MS,
    };
    let mut file = RunFile::new(p.clone(), schedule, TIMEOUT_SECS);
    file.terminal.as_mut().expect("a terminal").hang_up_after_ms = hang_up_after_ms;
    turnsim::drive::drive_one(&file, &temp_dir(name), "test", 0).expect("the run completes")
}

#[test]
fn the_hang_up_waits_as_long_as_the_terminal_says_a_client_takes_to_leave() {
    // The client takes 5 s to leave after `/exit`.
    let p = test_client_tui(&["--slow-exit", "5000"]);
    let r = quiet_with_hang_up(&p, 12_000, "tui-slow-exit");
    let log = r.first.terminal.as_ref().expect("a terminal log");
    assert_eq!(log.hung_up_ms, None, "{}", r.text());
    assert_eq!(r.first.exit_code, Some(0), "{}", r.text());
    let exit = log.exit_ms.expect("exit typed");
    assert!(
        r.first.end_ms >= exit + 5000,
        "{log:?} end {}",
        r.first.end_ms
    );
    // A terminal that waits 2 s hangs it up: SIGHUP, exit 129, recorded as such.
    let r = quiet_with_hang_up(&p, 2000, "tui-hung-up");
    let log = r.first.terminal.as_ref().expect("a terminal log");
    let hung = log.hung_up_ms.expect("hung up");
    assert!(hung >= log.exit_ms.expect("exit typed") + 2000, "{log:?}");
    assert_eq!(r.first.exit_code, Some(129), "{}", r.text());
}
