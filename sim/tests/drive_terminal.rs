//! `turnsim drive`'s interactive mode against the test client's terminal UI: the
//! prompt is typed into a pty, the scheduled key (Esc, Ctrl+C) goes into the
//! terminal when the ledger says a tool has run long enough, and the client leaves
//! on `/exit` once idle; a client that lets its tool run on after the key is found.

mod drive_support;

use drive_support::*;
use turnsim::testing::drive::observe::Status;
use turnsim::testing::drive::profiles::Interrupt;
use turnsim::testing::drive::report::Outcome;

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
