//! Faults: rolling for them, counting them, interrupting an operation, and the crash
//! and restart of the process.
//!
//! Guarantee: a fault that is off for this seed (or in the liveness phase) draws no
//! decision at all, so quiet runs consume none for it; a restart restores from the
//! durable log only and is checked by restoring a second time.

use super::*;

impl World<'_> {
    pub(super) fn count_fault(&mut self, kind: FaultKind) {
        *self.faults.entry(kind).or_default() += 1;
        let phase = self.phase();
        self.coverage.insert((kind, phase));
        self.note(|| format!("FAULT {} ({})", kind.name(), phase.name()));
    }

    /// Draws whether a fault of `kind` happens now; no draw at all when faults are off
    /// or the kind is off for this seed, so quiet runs consume no decisions for it.
    pub(super) fn roll(&mut self, kind: FaultKind) -> bool {
        match (self.faults_on, self.opts.fault(kind)) {
            (true, Some(r)) => self.d.chance(r),
            _ => false,
        }
    }

    /// The crash roll before one output is carried out: the crash rate scaled by
    /// `rates.crash_per_output`.
    pub(super) fn roll_crash_per_output(&mut self) -> bool {
        let scale = self.opts.rates.crash_per_output;
        match (self.faults_on, self.opts.fault(FaultKind::Crash)) {
            (true, Some(r)) => self.d.chance(Ratio::new(
                r.num.saturating_mul(scale.num),
                r.den.saturating_mul(scale.den),
            )),
            _ => false,
        }
    }

    /// The torn-write roll given a crash with a persist in flight: the torn-write rate
    /// times `rates.torn_write_factor`, capped at certainty.
    pub(super) fn roll_torn_write_after_crash(&mut self) -> bool {
        let factor = self.opts.rates.torn_write_factor;
        match (self.faults_on, self.opts.fault(FaultKind::TornWrite)) {
            (true, Some(r)) => {
                let num = r.num.saturating_mul(factor).min(r.den);
                self.d.chance(Ratio::new(num, r.den))
            }
            _ => false,
        }
    }

    /// While an operation runs, the user, the host or the machine may interrupt it.
    pub(super) fn maybe_interrupt(&mut self, window: u64) {
        let window = window.max(1) as u32;
        self.d.mark(Tag::Interrupt);
        if self.roll(FaultKind::Cancel) {
            let cause = CancelCause::ALL[self.d.below(CancelCause::ALL.len() as u32) as usize];
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::Cancel { cause });
        }
        if self.roll(FaultKind::Crash) {
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::Crash);
        }
        if self.roll(FaultKind::BusyInput) {
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::BusyInput);
        }
        if self.roll(FaultKind::BusyHost) {
            let at = u64::from(self.d.below(window.saturating_add(1)));
            self.sched.push_after(at, Ev::BusyHost);
        }
    }

    /// The process dies: memory is gone, unsynced bytes are lost (a torn write keeps a
    /// prefix of the record in flight), every running tool is cut off; then the
    /// runtime restarts from the log.
    pub(super) fn crash(&mut self, torn: Option<Vec<u8>>) -> Step {
        let keep = torn.as_ref().map_or(0, Vec::len);
        if let Some(partial) = &torn {
            self.disk.append(partial);
        }
        self.disk.crash(keep);
        self.hash(b"crash", &(keep as u64).to_le_bytes());
        self.note(|| format!("CRASH (torn write keeps {keep} bytes); restarting"));
        self.observe_crash()?;
        self.ledger.crash();
        self.outstanding = None;
        self.delivered.clear();
        self.restart()
    }

    pub(super) fn restart(&mut self) -> Step {
        self.recovering = true;
        self.restart_depth += 1;
        self.events += 1;
        let factory = self.factory;
        let config = self.config.clone();
        // The engine reads the disk's own bytes; only what keeps them copies them.
        let log = self.disk.durable();
        if let Some(calls) = &mut self.calls {
            calls.push(EngineCall::Restore(log.to_vec()));
        }
        self.twin.restarted(log);
        let restored = catch_unwind(AssertUnwindSafe(|| factory.restore(config, log)));
        let (engine, outputs) = match restored {
            Err(panic) => {
                return Err(Violation {
                    invariant: Invariant::EnginePanic,
                    step: self.steps,
                    message: format!("the engine panicked in restore: {}", panic_text(&*panic)),
                });
            }
            Ok(Err(e)) => {
                return Err(Violation {
                    invariant: Invariant::NoLostObservation,
                    step: self.steps,
                    message: format!("restore failed, the session is lost: {e}"),
                });
            }
            Ok(Ok(r)) => r,
        };
        self.engine = engine;
        let complete = self.execute(outputs)?;
        self.restart_depth -= 1;
        if !complete {
            // A crash during recovery restarted again; that restart was checked.
            return Ok(());
        }
        self.recovering = false;
        self.turn_open = !self.engine.is_idle();
        let config = self.config.clone();
        let log = self.disk.durable();
        let again = catch_unwind(AssertUnwindSafe(|| factory.restore(config, log)));
        let again = match again {
            Err(panic) => Err(format!("panicked: {}", panic_text(&*panic))),
            Ok(Err(e)) => Err(e),
            Ok(Ok(restored)) => Ok(restored),
        };
        let event = Event::Restarted {
            again: match &again {
                Ok((engine, outputs)) => Ok((engine.history().to_vec(), outputs.as_slice())),
                Err(e) => Err(e.clone()),
            },
        };
        self.ctx_check(event)?;
        if !self.turn_open
            && self.faults_on
            && self.prompts_sent < self.opts.turns
            && !self.prompt_scheduled
        {
            self.d.mark(Tag::Restart);
            self.sched
                .push_after(u64::from(self.d.range(1, 3000)), Ev::BetweenTurns);
            self.prompt_scheduled = true;
        }
        Ok(())
    }
}
