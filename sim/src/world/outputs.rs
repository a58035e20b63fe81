//! Carrying out the engine's outputs: persisting to the fake disk, sending requests to
//! the scripted provider, dispatching tools, aborting, ending turns.
//!
//! Guarantee: outputs are carried out in the order the engine gave them, each one hashed
//! into the trace digest before its effects are scheduled, and a crash can strike only
//! between two outputs (or tear the persist in flight), as on a real machine.

use super::*;

impl World<'_> {
    /// Carries out outputs in order; a crash may strike before any of them. Returns
    /// whether all were carried out.
    pub(super) fn execute(&mut self, outputs: Vec<Output>) -> Result<bool, Violation> {
        let turn_end = outputs
            .iter()
            .position(|o| matches!(o, Output::TurnEnded { .. }));
        let wrote = self.restart_depth == 0
            && outputs
                .iter()
                .any(|o| matches!(o, Output::Persist { .. } | Output::TruncateLog { .. }));
        for (i, out) in outputs.into_iter().enumerate() {
            self.events += 1;
            self.d.mark(Tag::Crash);
            if self.restart_depth < 2 && self.roll_crash_per_output() {
                self.crash_cuts_turn_end = turn_end.is_some_and(|end| end >= i);
                self.count_fault(FaultKind::Crash);
                let torn = match &out {
                    Output::Persist { bytes }
                        // Given a crash mid-append, a seed with torn writes tears often.
                        if !bytes.is_empty() && self.roll_torn_write_after_crash() =>
                    {
                        self.count_fault(FaultKind::TornWrite);
                        let keep = self.d.below(bytes.len() as u32) as usize;
                        Some(bytes[..keep].to_vec())
                    }
                    _ => None,
                };
                self.crash(torn)?;
                return Ok(false);
            }
            self.output(out)?;
        }
        if wrote {
            self.writes += 1;
            let rate = self.opts.rates.durable_check;
            if crate::options::FixedRates::picked(self.opts.seed, self.writes, rate) {
                self.check_durable()?;
            }
        }
        Ok(true)
    }

    pub(super) fn output(&mut self, out: Output) -> Step {
        match out {
            Output::Persist { bytes } => {
                self.hash(b"persist", &bytes);
                self.disk.append_synced(&bytes);
                self.record_log_write(bytes.len());
                if let Some((op, digest)) = receipt_in(&bytes) {
                    self.ctx_check(Event::Receipt {
                        op,
                        digest: &digest,
                    })?;
                }
            }
            Output::TruncateLog { len } => {
                self.hash(b"truncate", &(len as u64).to_le_bytes());
                self.note(|| format!("log truncated to {len} bytes"));
                self.disk.truncate(len);
            }
            Output::Send { op, request } => {
                let seen = self.hash_request(&request);
                self.record_request(op, &request);
                self.note(|| {
                    let new = &request.messages[seen.min(request.messages.len())..];
                    format!(
                        "engine sends {op}: {} messages, breakpoints {:?}; new: {}",
                        request.messages.len(),
                        request
                            .cache
                            .breakpoints
                            .iter()
                            .map(|b| b.after_message)
                            .collect::<Vec<_>>(),
                        if new.is_empty() {
                            "none".to_owned()
                        } else {
                            super::show_new_messages(new)
                        }
                    )
                });
                self.outstanding = Some((op, false));
                let body = self.engine.request_body(op);
                self.stream_pos = StreamPos::Unstarted;
                // The request becomes the last one sent by a move, not a copy, once
                // nothing here reads it any more; a violation keeps it too.
                if let Err(violation) = self.ctx_check(Event::Request {
                    op,
                    request: &request,
                    seen,
                    body: body.as_deref(),
                }) {
                    self.last_sent = Some(request);
                    return Err(violation);
                }
                let scripted = self.script.pop_front();
                let refused = crate::provider::refuse_thinking(&request, seen, &self.thinking_seen);
                let tools = Arc::clone(&request.tools);
                let asked = crate::provider::Asked::of(&request);
                self.last_sent = Some(request);
                if let Some(refusal) = refused {
                    // What the real API does with such a request: refuse it whole, at once.
                    self.note(|| format!("provider refuses {op}: {refusal}"));
                    self.turn_requests += 1;
                    let at = self.sched.now() + 1;
                    self.sched.push_at(
                        at,
                        Ev::Provider {
                            op,
                            event: crate::provider::invalid_request(refusal),
                            dup: false,
                        },
                    );
                    return Ok(());
                }
                let plan = plan_response(
                    &mut self.d,
                    &self.opts,
                    self.faults_on,
                    &tools,
                    &mut self.ids,
                    scripted.as_ref(),
                    self.turn_requests,
                    asked,
                );
                self.turn_requests += 1;
                super::shapes::of_reply(&plan.events, &mut self.shapes);
                self.observe_thinking(&plan.events)?;
                self.observe_declined(&plan.events);
                if let Some(kind) = plan.fault {
                    self.count_fault(kind);
                }
                if let Some(kind) = plan.world {
                    self.count_fault(kind);
                }
                if let Some(cut) = plan.cut {
                    self.stream_coverage.insert(cut);
                }
                let mut t = self.sched.now();
                let last = plan.events.len().saturating_sub(1);
                self.d.mark(Tag::Dup);
                for (i, (delay, event)) in plan.events.into_iter().enumerate() {
                    t += delay;
                    if i == last && !plan.hangs && self.roll(FaultKind::DuplicateDelivery) {
                        let later = t + 1 + u64::from(self.d.below(500));
                        self.sched.push_at(
                            later,
                            Ev::Provider {
                                op,
                                event: event.clone(),
                                dup: true,
                            },
                        );
                    }
                    self.sched.push_at(
                        t,
                        Ev::Provider {
                            op,
                            event,
                            dup: false,
                        },
                    );
                }
                if plan.hangs {
                    self.sched.push_at(t + WATCHDOG_MS, Ev::Watchdog { op });
                }
                self.maybe_interrupt(t - self.sched.now());
            }
            Output::Dispatch { op, calls } => {
                self.hash(b"dispatch", op.0.to_le_bytes().as_slice());
                self.outstanding = Some((op, true));
                self.delivered.clear();
                let mut longest = 0;
                for call in &calls {
                    let starts = self.ledger.start(&call.id, op, self.sched.now());
                    self.hash(b"call", call.id.as_bytes());
                    self.note(|| format!("tool {} ({:?}) starts for {op}", call.id, call.name));
                    self.ctx_check(Event::Dispatched { op, call, starts })?;
                    let (latency, outcome, fault) = plan_execution(
                        &mut self.d,
                        &self.opts,
                        self.faults_on,
                        &call.id,
                        &call.name,
                        &self.config.tools,
                    );
                    if let Some(kind) = fault {
                        self.count_fault(kind);
                    }
                    super::shapes::of_result(&outcome, &mut self.shapes);
                    longest = longest.max(latency);
                    self.d.mark(Tag::Dup);
                    if self.roll(FaultKind::DuplicateDelivery) {
                        let later = latency + 1 + u64::from(self.d.below(500));
                        self.sched.push_after(
                            later,
                            Ev::ToolDone {
                                op,
                                outcome: outcome.clone(),
                                dup: true,
                            },
                        );
                    }
                    self.sched.push_after(
                        latency,
                        Ev::ToolDone {
                            op,
                            outcome,
                            dup: false,
                        },
                    );
                }
                self.maybe_interrupt(longest);
            }
            Output::Abort { op } => {
                self.hash(b"abort", op.0.to_le_bytes().as_slice());
                self.note(|| format!("engine aborts {op}"));
                self.ledger.cancel(op);
                if self.outstanding.map(|o| o.0) == Some(op) {
                    self.outstanding = None;
                }
            }
            Output::TurnEnded { outcome } => {
                // serde_json's bytes (the digest covers them), by core's writer.
                let text = turnsim_core::json::to_string(&outcome).unwrap_or_default();
                self.hash(b"turn_ended", text.as_bytes());
                self.note(|| format!("turn ended: {text}"));
                self.turn_open = false;
                self.outstanding = None;
                self.observe_turn_outcome(&outcome)?;
                self.ctx_check(Event::TurnEnded)?;
                if self.faults_on && self.prompts_sent < self.opts.turns && !self.prompt_scheduled {
                    self.d.mark(Tag::Between);
                    self.sched
                        .push_after(u64::from(self.d.range(1, 3000)), Ev::BetweenTurns);
                    self.prompt_scheduled = true;
                }
            }
            Output::Activity { activity } => {
                self.hash(b"activity", activity.kind.as_bytes());
                self.note(|| format!("activity {}", activity.kind));
                self.ctx_check(Event::Activity {
                    activity: &activity,
                })?;
            }
        }
        Ok(())
    }

    /// Hashes what is new in a request; returns how many leading messages are the
    /// previous request's own allocations.
    pub(super) fn hash_request(&mut self, request: &turnsim_core::Request) -> usize {
        let unchanged = self.last_sent.as_ref().is_some_and(|l| {
            // By the bytes the tools write, not by allocation: whether an engine
            // shares one list between sessions must not change the trace.
            l.system == request.system
                && crate::checkers::same_json::same_tools(&l.tools, &request.tools)
        });
        if unchanged {
            self.hash(b"prefix", b"unchanged");
        } else {
            match crate::checkers::prefix_memo::prefix_bytes(&request.system, &request.tools) {
                Ok(p) => {
                    self.hash(b"system", p.system_json.as_bytes());
                    self.hash(b"tools", p.tools_json.as_bytes());
                }
                Err(e) => self.hash(b"prefix", e.as_bytes()),
            }
        }
        let mut seen = None;
        for (i, m) in request.messages.iter().enumerate() {
            // The previous request keeps its messages alive, so an address it holds is
            // never reused: after a restart nothing matches and everything is hashed.
            let same = self
                .last_sent
                .as_ref()
                .and_then(|l| l.messages.get(i))
                .is_some_and(|p| Arc::ptr_eq(p, m));
            if !same {
                seen.get_or_insert(i);
                self.hasher.update(b"message");
                self.hasher.message(m);
            }
        }
        let points = breakpoints_json(&request.cache.breakpoints);
        self.hash(b"breakpoints", points.as_bytes());
        seen.unwrap_or(request.messages.len())
    }
}

/// The bytes `serde_json::to_string` writes for `points` (the trace digest covers
/// them), written by hand: serde's writer cost more than the rest of a request's hash.
fn breakpoints_json(points: &[turnsim_core::CacheBreakpoint]) -> String {
    let mut out = String::with_capacity(2 + points.len() * 24);
    out.push('[');
    for (i, p) in points.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"after_message\":");
        match p.after_message {
            None => out.push_str("null"),
            Some(n) => turnsim_core::json::push_u64(&mut out, n as u64),
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// The receipt a persisted list of records holds, read only from a frame whose payload
/// starts as a `Receipt` record does, so the other persists (nearly all) cost a
/// comparison of a few bytes.
fn receipt_in(bytes: &[u8]) -> Option<(turnsim_core::OperationId, String)> {
    const TAG: &[u8] = b"{\"receipt\":";
    let mut at = 0;
    while let Some(header) = bytes.get(at..at + turnsim_core::log::FRAME_HEADER) {
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let payload = bytes.get(at + turnsim_core::log::FRAME_HEADER..)?;
        let payload = payload.get(..len)?;
        if payload.starts_with(TAG) {
            if let Some((op, digest)) = plain_receipt(payload) {
                return Some((turnsim_core::OperationId(op), digest.to_owned()));
            }
            if let Ok(turnsim_core::Record::Receipt { op, digest }) =
                serde_json::from_slice(payload)
            {
                return Some((op, digest));
            }
        }
        at += turnsim_core::log::FRAME_HEADER + len;
    }
    None
}

/// The op and digest of a receipt written as the reference engine writes one
/// (`{"receipt":{"op":N,"digest":"…"}}`, no space, a digest of hex digits), read
/// without serde: one per request, and deserializing a record was most of what a
/// receipt cost. `None` for any other spelling, which serde then reads: so this path
/// only ever answers what serde would answer for the same bytes.
fn plain_receipt(payload: &[u8]) -> Option<(u64, &str)> {
    let rest = payload.strip_prefix(b"{\"receipt\":{\"op\":")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // JSON writes no leading zero; a number too big for `u64` is serde's to refuse.
    if digits == 0 || (digits > 1 && rest[0] == b'0') {
        return None;
    }
    let op = std::str::from_utf8(&rest[..digits])
        .ok()?
        .parse::<u64>()
        .ok()?;
    let digest = rest[digits..]
        .strip_prefix(b",\"digest\":\"")?
        .strip_suffix(b"\"}}")?;
    if !digest
        .iter()
        .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    Some((op, std::str::from_utf8(digest).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::OperationId;

    fn framed(payload: &[u8]) -> Vec<u8> {
        turnsim_core::log::encode_frame(payload)
    }

    #[test]
    fn breakpoints_are_hashed_as_the_bytes_serde_writes() {
        use turnsim_core::CacheBreakpoint;
        let cases: [&[Option<usize>]; 4] = [
            &[],
            &[None],
            &[None, Some(0), Some(9), Some(10)],
            &[Some(123_456), Some(usize::MAX)],
        ];
        for case in cases {
            let points: Vec<CacheBreakpoint> = case
                .iter()
                .map(|&after_message| CacheBreakpoint { after_message })
                .collect();
            let serde = serde_json::to_string(&points).expect("serializes");
            assert_eq!(breakpoints_json(&points), serde);
        }
    }

    #[test]
    fn a_receipt_reads_the_same_with_or_without_serde() {
        let record = turnsim_core::Record::Receipt {
            op: OperationId(42),
            digest: "0123456789abcdef".into(),
        };
        // The bytes the reference engine persists, and serde's own spelling.
        let written = turnsim_core::log::encode_record(&record);
        let payload = &written[turnsim_core::log::FRAME_HEADER..];
        assert_eq!(plain_receipt(payload), Some((42, "0123456789abcdef")));
        let serde_payload = serde_json::to_vec(&record).expect("serializes");
        assert_eq!(
            plain_receipt(&serde_payload),
            Some((42, "0123456789abcdef"))
        );
        let mut bytes = framed(br#"{"turn_started":{}}"#);
        bytes.extend(written);
        assert_eq!(
            receipt_in(&bytes),
            Some((OperationId(42), "0123456789abcdef".to_string()))
        );
    }

    #[test]
    fn any_other_spelling_of_a_receipt_is_left_to_serde() {
        for payload in [
            &br#"{"receipt":{"op":42, "digest":"ab"}}"#[..],
            br#"{"receipt":{"op":042,"digest":"ab"}}"#,
            br#"{"receipt":{"op":18446744073709551616,"digest":"ab"}}"#,
            br#"{"receipt":{"op":4,"digest":"a\u0062"}}"#,
            br#"{"receipt":{"op":4,"digest":"AB"}}"#,
            br#"{"receipt":{"op":4,"digest":"ab"}} "#,
            br#"{"receipt":{"digest":"ab","op":4}}"#,
        ] {
            assert_eq!(
                plain_receipt(payload),
                None,
                "{}",
                String::from_utf8_lossy(payload)
            );
        }
        // Serde still reads the ones that are receipts.
        let spaced = framed(br#"{"receipt":{"op":42, "digest":"ab"}}"#);
        assert_eq!(
            receipt_in(&spaced),
            Some((OperationId(42), "ab".to_string()))
        );
        let reordered = framed(br#"{"receipt":{"digest":"a\u0062","op":4}}"#);
        assert_eq!(
            receipt_in(&reordered),
            Some((OperationId(4), "ab".to_string()))
        );
    }
}
