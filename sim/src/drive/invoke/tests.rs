//! The invocation's orphan rules and the environment it does not pass on.

use super::{Invocation, inherited_out};

/// A client invocation that started at +0 and exited at `end_ms`.
fn exited_at(end_ms: i64) -> Invocation {
    Invocation {
        argv: vec!["client".into()],
        start_ms: 0,
        end_ms,
        ..Invocation::default()
    }
}

/// The ledger's boot clock read as run time (a run that started at boot).
fn at(boot_ms: u64) -> i64 {
    i64::try_from(boot_ms).unwrap_or(0)
}

#[test]
fn a_tool_that_wrote_its_effect_after_the_exit_is_an_orphan_even_if_gone_within_the_grace() {
    use super::super::tool::{Event, Kind};
    use super::effects_after_exit;
    let ev = |kind, id: &str, boot_ms| Event {
        kind,
        id: id.into(),
        boot_ms,
        pid: 40,
        pgid: 40,
        sid: 40,
        ppid: 1,
    };
    // t0 = 1000 on the boot clock; the client exited at +5000.
    let events = [
        ev(Kind::Start, "toolu_1", 1100),
        ev(Kind::Effect, "toolu_1", 3000), // before the exit: no orphan
        ev(Kind::Start, "toolu_2", 3100),
        ev(Kind::Effect, "toolu_2", 6150), // 150 ms after the exit
        ev(Kind::Start, "toolu_3", 6500),  // started after the exit
        ev(Kind::Effect, "toolu_3", 7000),
    ];
    let rel = |b: u64| i64::try_from(b).unwrap_or(0) - 1000;
    let found = effects_after_exit(&events, rel, 5000, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let o = &found[0];
    assert_eq!(o.id, "toolu_2");
    assert_eq!((o.start_ms, o.effect_ms), (Some(2100), Some(5150)));
    assert!(o.finished_in_grace && !o.killed_by_harness);
    // One the process table already showed is not counted twice.
    assert!(effects_after_exit(&events, rel, 5000, &found).is_empty());
}

#[test]
fn an_effect_written_after_the_watch_is_an_orphan_of_the_invocation_it_outlived() {
    use super::super::tool::{Event, Kind};
    use super::{add_late_effects, effects_after_exit};
    let ev = |kind, id: &str, boot_ms| Event {
        kind,
        id: id.into(),
        boot_ms,
        pid: 41,
        pgid: 41,
        sid: 41,
        ppid: 1,
    };
    // The watch saw nothing (its orphans are empty); the final ledger shows a tool
    // started at +2000 writing its effect at +6815, 1815 ms after the exit at +5000.
    let events = [
        ev(Kind::Start, "toolu_4", 2000),
        ev(Kind::Effect, "toolu_4", 6815),
    ];
    let mut first = exited_at(5000);
    add_late_effects(&mut first, &events, at);
    assert_eq!(first.orphans.len(), 1);
    assert_eq!(first.orphans[0].id, "toolu_4");
    assert_eq!(first.orphans[0].effect_ms, Some(6815));
    // Read again, it is not counted twice; an invocation never run gets none.
    add_late_effects(&mut first, &events, at);
    assert_eq!(first.orphans.len(), 1);
    let mut never = Invocation::default();
    add_late_effects(&mut never, &events, at);
    assert!(never.orphans.is_empty());
    // A call of its own whose script stamped its start only after the exit (slow
    // to start under load) and its effect later is an orphan too; the watch,
    // which cannot tell whose such a call is, leaves it alone.
    let slow = [
        ev(Kind::Start, "toolu_5", 5040),
        ev(Kind::Effect, "toolu_5", 6540),
    ];
    let mut first = exited_at(5000);
    assert!(effects_after_exit(&slow, at, 5000, &[]).is_empty());
    add_late_effects(&mut first, &slow, at);
    assert_eq!(first.orphans.len(), 1);
    assert_eq!(first.orphans[0].id, "toolu_5");
    assert_eq!(first.orphans[0].start_ms, Some(5040));
}

#[test]
fn provider_and_home_overrides_of_every_client_family_are_not_inherited() {
    for name in [
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CONFIG_DIR",
        "OPENCODE_CONFIG",
        "OPENAI_BASE_URL",
        "CODEX_HOME",
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "XDG_CONFIG_HOME",
    ] {
        assert!(inherited_out(name), "{name}");
    }
    for name in ["PATH", "LANG", "TERM"] {
        assert!(!inherited_out(name), "{name}");
    }
}
