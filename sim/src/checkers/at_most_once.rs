//! `at_most_once`: no tool-use id is executed twice, across any number of crashes.
//!
//! A tool's effects (a file written, a payment sent) happen when it starts; a runtime
//! that re-runs a pending call after a restart repeats them.
//!
//! A second start under one id is reported as what it is: the same call run again, or
//! a different call (another name or input) under an id the engine kept although the
//! provider had used it before. The second is a violation too (a ledger keyed on the
//! id cannot tell the two apart, and a history holding the id twice is refused by the
//! Messages API), but the finding must not claim a re-run that never happened.

use std::collections::BTreeMap;

use super::{Check, Checker, Ctx, Event, Invariant};

#[derive(Default)]
pub struct AtMostOnce {
    /// The name and input of the first call started under each id.
    first: BTreeMap<String, (String, String)>,
}

impl Checker for AtMostOnce {
    fn invariant(&self) -> Invariant {
        Invariant::AtMostOnce
    }

    fn events(&self) -> u32 {
        use super::on;
        on::DISPATCHED
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        let Event::Dispatched { op, call, starts } = event else {
            return None;
        };
        // The bytes `to_string` gives (`Display` is the compact serializer), written by
        // core's writer (serde_json's bytes; strings escaped a word at a time rather
        // than a byte at a time), per dispatch.
        let input = turnsim_core::json::to_string(&call.input).unwrap_or_default();
        if *starts <= 1 {
            self.first
                .insert(call.id.clone(), (call.name.clone(), input));
            return Some(Ok(()));
        }
        Some(Err(match self.first.get(&call.id) {
            Some((name, first)) if *name != call.name || *first != input => format!(
                "tool-use id {} started for two different calls: first {name} {first}, now {} {input} (by {op}); the engine kept an id the provider had already used, so the two cannot be told apart by it",
                call.id, call.name
            ),
            _ => format!(
                "tool call {} ({}) started {starts} times; this start by {op}",
                call.id, call.name
            ),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::{OperationId, ToolCall};

    fn start(c: &mut AtMostOnce, name: &str, path: &str, starts: usize) -> Option<Check> {
        let call = ToolCall {
            id: "exec_0".into(),
            name: name.into(),
            input: serde_json::json!({ "path": path }),
        };
        let ctx = Ctx::empty(1);
        let event = Event::Dispatched {
            op: OperationId(starts as u64),
            call: &call,
            starts,
        };
        c.observe(&ctx, &event)
    }

    #[test]
    fn the_same_call_started_again_is_a_rerun() {
        let mut c = AtMostOnce::default();
        assert_eq!(start(&mut c, "read_file", "a", 1), Some(Ok(())));
        assert_eq!(
            start(&mut c, "read_file", "a", 2),
            Some(Err(
                "tool call exec_0 (read_file) started 2 times; this start by op#2".into()
            ))
        );
    }

    #[test]
    fn a_different_call_under_a_used_id_is_named_as_such_not_as_a_rerun() {
        let mut c = AtMostOnce::default();
        assert_eq!(start(&mut c, "read_file", "a", 1), Some(Ok(())));
        assert_eq!(
            start(&mut c, "search", "a", 2),
            Some(Err("tool-use id exec_0 started for two different calls: first read_file {\"path\":\"a\"}, now search {\"path\":\"a\"} (by op#2); the engine kept an id the provider had already used, so the two cannot be told apart by it".into()))
        );
    }
}
