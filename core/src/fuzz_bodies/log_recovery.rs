//! The `log_recovery` body: scripted sessions, record soup and damaged logs restored.
//!
//! Guarantee: restoring any log either fails with an error or yields a session whose
//! history is valid and whose recovery is idempotent, so a torn or hostile log can
//! never panic the engine or make it reissue an operation.

use super::*;

/// The log a restore leaves behind: `log` with a torn tail cut and the records the
/// restore asked to persist appended.
fn apply_outputs(log: &[u8], outputs: &[Output]) -> Vec<u8> {
    let mut out = log.to_vec();
    for o in outputs {
        match o {
            Output::TruncateLog { len } => out.truncate(*len),
            Output::Persist { bytes } => out.extend_from_slice(bytes),
            _ => {}
        }
    }
    out
}

/// Restores `log`; when that succeeds, restoring again from the log the first
/// restore left behind must give the same session and ask for nothing more. Returns
/// whether the first restore succeeded.
fn check_restore(config: &SessionConfig, log: &[u8]) -> Option<Session> {
    let _ = decode_log(log);
    let (first, outputs) = Session::restore(config.clone(), log).ok()?;
    assert!(first.is_idle(), "a restored session is not idle");
    let after = apply_outputs(log, &outputs);
    let (second, again) = match Session::restore(config.clone(), &after) {
        Ok(x) => x,
        Err(e) => panic!("restoring a second time fails: {e}"),
    };
    assert!(
        first.to_bytes() == second.to_bytes(),
        "restoring twice differs from restoring once"
    );
    let more: Vec<&Output> = again
        .iter()
        .filter(|o| matches!(o, Output::Persist { .. } | Output::TruncateLog { .. }))
        .collect();
    assert!(more.is_empty(), "a second restore asks to write {more:?}");
    Some(first)
}

/// A well-formed reply to `op` as stream events: start, maybe thinking, text, some
/// tool calls, the stop reason, stop.
fn reply_events(g: &mut Gen<'_>) -> Drawn<Vec<StreamEvent>> {
    let mut events = vec![StreamEvent::MessageStart];
    let mut index = 0;
    if g.below(4)? == 0 {
        events.push(StreamEvent::BlockStart {
            index,
            block: BlockStart::Thinking,
        });
        events.push(StreamEvent::ThinkingDelta {
            index,
            thinking: "hmm".into(),
        });
        events.push(StreamEvent::SignatureDelta {
            index,
            signature: "sig".into(),
        });
        events.push(StreamEvent::BlockStop { index });
        index += 1;
    }
    events.push(StreamEvent::BlockStart {
        index,
        block: BlockStart::Text,
    });
    for _ in 0..=g.below(3)? {
        events.push(StreamEvent::TextDelta {
            index,
            text: g.text()?,
        });
    }
    events.push(StreamEvent::BlockStop { index });
    index += 1;
    let calls = g.below(4)?;
    for _ in 0..calls {
        let id = g.tool_id()?;
        let name = g.name()?;
        events.push(StreamEvent::BlockStart {
            index,
            block: BlockStart::ToolUse { id, name },
        });
        let json = if g.below(8)? == 0 {
            "{\"path\":".to_string()
        } else {
            "{\"path\":\"a\"}".to_string()
        };
        events.push(StreamEvent::InputJsonDelta {
            index,
            partial_json: json,
        });
        events.push(StreamEvent::BlockStop { index });
        index += 1;
    }
    let stop_reason = match (calls, g.below(4)?) {
        (0, 0) => StopReason::MaxTokens,
        (0, _) | (_, 0) => StopReason::EndTurn,
        _ => StopReason::ToolUse,
    };
    events.push(StreamEvent::MessageDelta {
        stop_reason,
        usage: g.usage()?,
    });
    events.push(StreamEvent::MessageStop);
    Ok(events)
}

/// Any one stream event.
fn any_event(g: &mut Gen<'_>) -> Drawn<StreamEvent> {
    let index = g.below(4)?;
    Ok(match g.below(10)? {
        0 => StreamEvent::MessageStart,
        1 => StreamEvent::BlockStart {
            index,
            block: match g.below(4)? {
                0 => BlockStart::Text,
                1 => BlockStart::Thinking,
                2 => BlockStart::RedactedThinking { data: g.text()? },
                _ => BlockStart::ToolUse {
                    id: g.tool_id()?,
                    name: g.name()?,
                },
            },
        },
        2 => StreamEvent::TextDelta {
            index,
            text: g.text()?,
        },
        3 => StreamEvent::ThinkingDelta {
            index,
            thinking: g.text()?,
        },
        4 => StreamEvent::SignatureDelta {
            index,
            signature: g.text()?,
        },
        5 => StreamEvent::InputJsonDelta {
            index,
            partial_json: g.text()?,
        },
        6 => StreamEvent::BlockStop { index },
        7 => StreamEvent::MessageDelta {
            stop_reason: StopReason::EndTurn,
            usage: g.usage()?,
        },
        8 => StreamEvent::MessageStop,
        _ => StreamEvent::Error {
            kind: "overloaded_error".into(),
            message: g.text()?,
        },
    })
}

/// Drives a session with inputs decoded from `g` and returns its log. Along the way:
/// a refused input leaves the session unchanged, and a delivery for an operation that
/// is not outstanding returns nothing and changes nothing.
fn scripted_session(g: &mut Gen<'_>, config: &SessionConfig) -> Drawn<Vec<u8>> {
    let mut session = Session::new(config.clone());
    let mut log = Vec::new();
    let mut last_op = OperationId(0);
    for _ in 0..24 {
        if g.u.is_empty() {
            break;
        }
        let pending = session.pending_operation();
        let current = pending.op();
        if let Some(op) = current {
            last_op = op;
        }
        let op = match g.below(6)? {
            0 => last_op,
            1 => OperationId(last_op.0.saturating_sub(1)),
            _ => current.unwrap_or(last_op),
        };
        let inputs: Vec<Input> = match g.below(10)? {
            0 | 1 => vec![Input::Prompt {
                text: g.text()?,
                now: "2026-01-01T00:00:00Z".into(),
            }],
            2 | 3 => {
                let events = reply_events(g)?;
                let keep = if g.below(4)? == 0 {
                    g.below(events.len() + 1)?
                } else {
                    events.len()
                };
                events
                    .into_iter()
                    .take(keep)
                    .map(|event| Input::Stream { op, event })
                    .collect()
            }
            4 => vec![Input::Stream {
                op,
                event: any_event(g)?,
            }],
            5 | 6 => {
                let calls = match &pending {
                    PendingOperation::Tools { calls, .. } => calls.clone(),
                    _ => vec![g.call()?],
                };
                let mut outcomes = g.results(&calls)?;
                if g.below(4)? == 0 {
                    outcomes.truncate(g.below(outcomes.len() + 1)?);
                }
                outcomes
                    .into_iter()
                    .map(|outcome| Input::ToolResult { op, outcome })
                    .collect()
            }
            7 => vec![Input::Cancel { cause: g.cause()? }],
            8 => match g.below(3)? {
                0 => vec![Input::Compact { summary: g.text()? }],
                1 => vec![Input::Rewind {
                    index: g.below(session.history().len() + 2)?,
                }],
                _ => vec![Input::Configure {
                    system: g.text()?,
                    tools: vec![ToolSpec {
                        name: g.name()?,
                        description: g.text()?,
                        input_schema: serde_json::json!({"type": "object"}),
                    }]
                    .into(),
                    thinking: None,
                }],
            },
            _ => vec![Input::Stream {
                op,
                event: StreamEvent::Error {
                    kind: "api_error".into(),
                    message: g.text()?,
                },
            }],
        };
        for input in inputs {
            let before = session.to_bytes();
            let stale = match &input {
                Input::Stream { op, .. } | Input::ToolResult { op, .. } => {
                    session.pending_operation().op() != Some(*op)
                }
                _ => false,
            };
            match session.handle(input) {
                Ok(outputs) => {
                    if stale {
                        assert!(outputs.is_empty(), "a stale delivery produced {outputs:?}");
                        assert!(
                            session.to_bytes() == before,
                            "a stale delivery changed the session"
                        );
                    }
                    for o in outputs {
                        if let Output::Persist { bytes } = o {
                            log.extend_from_slice(&bytes);
                        }
                    }
                }
                Err(_) => assert!(
                    session.to_bytes() == before,
                    "a refused input changed the session"
                ),
            }
        }
    }
    Ok(log)
}

/// Records of any kind, well framed, whatever they mean together.
fn record_soup(g: &mut Gen<'_>) -> Drawn<Vec<u8>> {
    let mut log = Vec::new();
    for _ in 0..16 {
        if g.u.is_empty() {
            break;
        }
        let op = OperationId(u64::from(u8::arbitrary(&mut g.u)? % 8));
        let record = match g.below(12)? {
            0 => Record::Configure {
                system: g.text()?,
                tools: Vec::new().into(),
                thinking: None,
            },
            1 => {
                let baseline = g.below(6)?;
                let message = g.message(Role::User)?;
                Record::TurnStart {
                    baseline,
                    messages: vec![message],
                    pending: PendingOperation::Generation { op },
                }
            }
            2 | 3 => {
                let role = if g.flag()? {
                    Role::Assistant
                } else {
                    Role::User
                };
                let message = g.message(role)?;
                let pending = match g.below(3)? {
                    0 => PendingOperation::None,
                    1 => PendingOperation::Generation { op },
                    _ => PendingOperation::Tools {
                        op,
                        calls: message.tool_calls(),
                    },
                };
                Record::Append {
                    messages: vec![message],
                    pending,
                }
            }
            4 => Record::Draft {
                op,
                base_len: g.below(6)?,
            },
            5 => Record::DraftText {
                op,
                text: g.text()?,
            },
            6 => Record::ToolResult {
                op,
                outcome: ToolOutcome {
                    tool_use_id: g.tool_id()?,
                    content: g.result_content()?,
                    is_error: g.flag()?,
                },
            },
            7 => Record::Receipt {
                op,
                digest: g.text()?,
            },
            8 => Record::Reset {
                messages: vec![g.message(Role::User)?],
                compacted: vec![g.text()?],
            },
            9 => Record::Rewind { len: g.below(6)? },
            10 => Record::TurnEnd {
                outcome: TurnOutcome::Crashed,
            },
            _ => {
                // A payload that is framed correctly but may not be a record at all.
                log.extend(encode_frame(take(&mut g.u, 64)?));
                continue;
            }
        };
        log.extend(encode_record(&record));
    }
    Ok(log)
}

/// Damage to a log: none, a cut (a torn write), a flipped byte, or both.
fn damage(g: &mut Gen<'_>, log: &mut Vec<u8>) -> Drawn<(bool, bool)> {
    let how = g.below(4)?;
    let cut = how & 1 == 1;
    let flip = how & 2 == 2;
    if cut {
        let at = usize::from(u16::arbitrary(&mut g.u)?) % (log.len() + 1);
        log.truncate(at);
    }
    if flip && !log.is_empty() {
        let at = usize::from(u16::arbitrary(&mut g.u)?) % log.len();
        let bit = 1u8 << (u8::arbitrary(&mut g.u)? % 8);
        log[at] ^= bit;
    }
    Ok((cut, flip && !log.is_empty()))
}

/// `log_recovery`: the input itself as a log, then a log built from the same bytes
/// (a scripted session's, or well-framed records of any kind), possibly cut short or
/// with a byte flipped. Decoding and restoring never panic; restoring twice equals
/// restoring once; a real session's log cut anywhere (a torn write) restores to a
/// valid history.
pub fn log_recovery(data: &[u8]) {
    let config = SessionConfig::default();
    check_restore(&config, data);
    drawn(recover_built(&mut Gen::new(data), &config));
}

/// The second half of [`log_recovery`]: a log built from the bytes, maybe damaged.
fn recover_built(g: &mut Gen<'_>, config: &SessionConfig) -> Drawn<()> {
    if g.flag()? {
        let mut log = scripted_session(g, config)?;
        let (_, flipped) = damage(g, &mut log)?;
        let restored = check_restore(config, &log);
        if !flipped {
            let Some(session) = restored else {
                let err = Session::restore(config.clone(), &log).err();
                panic!("a session's log cut short does not restore: {err:?}");
            };
            if let Err(e) = validate_history(session.history()) {
                panic!("a restored history is invalid: {e}");
            }
        }
    } else {
        let mut log = record_soup(g)?;
        damage(g, &mut log)?;
        check_restore(config, &log);
    }
    Ok(())
}
