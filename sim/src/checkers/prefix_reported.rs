//! `prefix_reported`: what the engine says it sent is what it sent, and a change of
//! the cached prefix is reported exactly once (issue 17, item 7).
//!
//! `prefix_stable` lets the prefix change after a host reconfiguration; it cannot tell
//! whether the engine noticed. A host that bills, warns or re-warms a cache on a
//! prefix change learns of it only from the engine's report, and an engine that
//! records an empty or stale receipt reports nothing, or reports a change at every
//! request. Judged against the reference profile's reports: each request is preceded
//! by a `Receipt` record whose digest is the spec's digest of the `system` and `tools`
//! actually sent (computed by the judge's own [`prefix_digest`], never the engine's:
//! with the engine's function a digest broken to a constant was expected as the
//! constant, mutant 78 of docs/mutants.md), and exactly when that digest differs from the previous receipt's,
//! one `prefix-changed` activity naming both digests. Judged from the engine's first
//! receipt on, so an engine that keeps no receipts in this format is not judged.
//!
//! An engine of another design keeps no such receipts; a profile file that names the
//! `activity` kind it reports a change with (`prefix_changed`) has it judged on what
//! crosses the interface alone: exactly when the `system` and `tools` a request
//! carries differ from the previous request's, one activity of that kind was reported
//! since that request, else none. The first request after a restart may report an
//! unchanged prefix once: an engine that does not log what it sent cannot know.

use super::{Check, Checker, Ctx, Event, Invariant};
use crate::judge::prefix_digest::prefix_digest;
use std::sync::Arc;
use turnsim_core::request::PREFIX_CHANGED;
use turnsim_core::{Activity, OperationId, ToolSpec};

/// Where a run's prefix reports are read.
#[derive(Default)]
pub enum Reports {
    /// No way to read them known: nothing is judged.
    #[default]
    Off,
    /// The reference engine's receipts and `prefix-changed` activities.
    Receipts,
    /// Activities of this kind, judged against the prefixes sent.
    Activity(String),
}

/// The profile mode's memory: the prefix of the last request and the reports since.
#[derive(Default)]
struct ByActivity {
    last: Option<String>,
    reported: usize,
    restarted: bool,
}

#[derive(Default)]
pub struct PrefixReported {
    reports: Reports,
    by_activity: ByActivity,
    /// Whether the engine has written a receipt in the reference format at all; an
    /// engine that keeps its receipts elsewhere is not judged.
    armed: bool,
    /// The digest of the last receipt that reached the log (the engine compares with
    /// the same one, restored from the log after a crash).
    last_receipt: Option<String>,
    /// The receipt written since the last request (its digest is `last_receipt`: both
    /// are set together, and nothing else sets `last_receipt`), and the digest of the
    /// receipt before it.
    pending: Option<(OperationId, Option<String>)>,
    /// `prefix-changed` activities reported since the last request.
    reported: Vec<Activity>,
    /// The digest of the last prefix sent, with that prefix: a request whose `system`
    /// is equal and whose `tools` are the very same allocation (kept alive here, so
    /// its address cannot be reused) has the same digest, and hashing the serialized
    /// tools again for every request was this checker's whole cost.
    sent: Option<(String, Arc<[ToolSpec]>, String)>,
}

impl PrefixReported {
    pub fn new(reports: Reports) -> PrefixReported {
        PrefixReported {
            reports,
            ..PrefixReported::default()
        }
    }
}

impl ByActivity {
    /// The profile mode: `kind` is the profile's activity kind.
    fn observe(&mut self, kind: &str, event: &Event<'_>) -> Option<Check> {
        let b = self;
        match event {
            Event::Activity { activity } if activity.kind == kind => {
                b.reported += 1;
                None
            }
            Event::Restarted { .. } => {
                b.restarted = true;
                None
            }
            Event::Request { op, request, .. } => {
                let sent = prefix_digest(&request.system, &request.tools);
                let reported = std::mem::take(&mut b.reported);
                let restarted = std::mem::take(&mut b.restarted);
                let changed = b.last.as_ref().is_some_and(|l| *l != sent);
                b.last = Some(sent);
                Some(match (changed, reported) {
                    (true, 1) | (false, 0) => Ok(()),
                    (false, 1) if restarted => Ok(()),
                    (true, n) => Err(format!(
                        "request {op}: the system or tools sent changed since the previous request, reported by {n} activities of kind {kind:?} instead of one"
                    )),
                    (false, n) => Err(format!(
                        "request {op}: the system and tools sent are those of the previous request, yet {n} activities of kind {kind:?} reported a change"
                    )),
                })
            }
            _ => None,
        }
    }
}

impl PrefixReported {
    /// `prefix_digest` of the request's `system` and `tools`, with that prefix, moved
    /// out of `sent` (the caller puts it back): no copy of the digest per request.
    fn take_sent(
        &mut self,
        system: &str,
        tools: &Arc<[ToolSpec]>,
    ) -> (String, Arc<[ToolSpec]>, String) {
        match self.sent.take() {
            // Tools that serialize to the same bytes have the same digest: a restored
            // or reconfigured-alike session sends equal tools in a new allocation.
            Some(sent) if sent.0 == system && super::same_json::same_tools(&sent.1, tools) => sent,
            _ => (
                system.to_owned(),
                tools.clone(),
                match super::prefix_memo::prefix_bytes(system, tools) {
                    Ok(p) => p.digest().to_owned(),
                    // Tools that do not serialize: the judge's writer still digests them.
                    Err(_) => prefix_digest(system, tools),
                },
            ),
        }
    }

    fn judge(&mut self, op: OperationId, sent: &str) -> Check {
        let Some((receipt_op, previous)) = self.pending.take() else {
            return Err(format!(
                "request {op} was sent with no receipt recorded before it"
            ));
        };
        if receipt_op != op {
            return Err(format!(
                "request {op} was sent after a receipt for {receipt_op}"
            ));
        }
        let digest = self.last_receipt.as_deref().unwrap_or_default();
        if digest != sent {
            return Err(format!(
                "request {op}: the receipt says the prefix digest is {digest:?}, the digest of the system and tools sent is {sent:?}"
            ));
        }
        let reported = std::mem::take(&mut self.reported);
        match previous.filter(|p| p != sent) {
            None if reported.is_empty() => Ok(()),
            None => Err(format!(
                "request {op}: the prefix did not change, yet {} prefix change(s) were reported",
                reported.len()
            )),
            Some(p) => {
                let [one] = reported.as_slice() else {
                    return Err(format!(
                        "request {op}: the prefix changed from {p} to {sent}, reported {} times instead of once",
                        reported.len()
                    ));
                };
                let field = |k: &str| one.data.get(k).map(String::as_str);
                if field("previous") == Some(p.as_str()) && field("current") == Some(sent) {
                    Ok(())
                } else {
                    Err(format!(
                        "request {op}: the prefix changed from {p} to {sent}, reported as {:?} to {:?}",
                        field("previous"),
                        field("current")
                    ))
                }
            }
        }
    }
}

impl Checker for PrefixReported {
    fn invariant(&self) -> Invariant {
        Invariant::PrefixReported
    }

    fn kind(&self) -> super::CheckKind {
        super::CheckKind::Convention
    }

    fn events(&self) -> u32 {
        use super::on;
        on::RECEIPT | on::ACTIVITY | on::RESTARTED | on::REQUEST
    }

    fn observe(&mut self, _ctx: &Ctx<'_>, event: &Event<'_>) -> Option<Check> {
        match &self.reports {
            Reports::Off => return None,
            Reports::Receipts => {}
            Reports::Activity(kind) => return self.by_activity.observe(kind, event),
        }
        match event {
            Event::Receipt { op, digest } => {
                self.armed = true;
                let previous = self.last_receipt.replace((*digest).to_owned());
                self.pending = Some((*op, previous));
                None
            }
            Event::Activity { activity } if activity.kind == PREFIX_CHANGED => {
                self.reported.push((*activity).clone());
                None
            }
            // A crash between a receipt and its request: the restored engine writes a
            // new receipt before its next request.
            Event::Restarted { .. } => {
                self.pending = None;
                self.reported.clear();
                None
            }
            Event::Request { op, request, .. } if self.armed => {
                let sent = self.take_sent(&request.system, &request.tools);
                let verdict = self.judge(*op, &sent.2);
                self.sent = Some(sent);
                Some(verdict)
            }
            _ => None,
        }
    }
}
