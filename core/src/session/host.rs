//! The host's edits of an idle session: compaction, rewind, reconfiguration (the
//! system prompt, the tools, and a thinking switch).
//!
//! Guarantee: each is refused unless the session is idle (never applied under an open
//! generation or tool call, whose outputs would then land in a history that no longer
//! holds their request), and each persists one record that replays to exactly the
//! state it leaves, so a crash right after it restores the edit or nothing of it.

use super::*;

impl Session {
    pub(super) fn compact(&mut self, summary: &str) -> Result<Vec<Output>, SessionError> {
        self.require_idle()?;
        if summary.trim().is_empty() {
            return Err(SessionError::EmptyInput("the compaction summary is empty"));
        }
        let mut compacted = self.compacted.clone();
        for m in self.state.history() {
            if let Some(words) = directive_words(m)
                && !compacted.iter().any(|c| c == words)
            {
                compacted.push(words.to_string());
            }
        }
        let messages = compacted_history(summary);
        let retiring = ids::retiring(self.state.history());
        self.state.replace_context(messages.clone())?;
        self.retired_ids.extend(retiring);
        self.compacted = compacted;
        self.turn_baseline = messages.len();
        let mut out = Vec::new();
        Self::persist(
            &mut out,
            &Record::Reset {
                messages: messages.iter().map(|m| (**m).clone()).collect(),
                compacted: self.compacted.clone(),
            },
        );
        Ok(out)
    }

    pub(super) fn rewind(&mut self, index: usize) -> Result<Vec<Output>, SessionError> {
        self.require_idle()?;
        let retiring = ids::retiring(self.state.history().get(index..).unwrap_or_default());
        self.state.rewind(index)?;
        self.retired_ids.extend(retiring);
        self.turn_baseline = self.turn_baseline.min(index);
        let mut out = Vec::new();
        Self::persist(&mut out, &Record::Rewind { len: index });
        Ok(out)
    }

    /// The digest of `system` + `tools`, computed once per configuration.
    pub(super) fn prefix_digest(&mut self) -> String {
        match &self.prefix_digest {
            Some(d) => d.clone(),
            None => {
                let d =
                    crate::request::prefix_digest_shared(&self.config.system, &self.config.tools);
                self.prefix_digest = Some(d.clone());
                d
            }
        }
    }

    pub(super) fn configure(
        &mut self,
        system: String,
        tools: Arc<[ToolSpec]>,
        thinking: Option<Thinking>,
    ) -> Result<Vec<Output>, SessionError> {
        self.require_idle()?;
        let mut out = Vec::new();
        Self::persist(
            &mut out,
            &Record::Configure {
                system: system.clone(),
                tools: Arc::clone(&tools),
                thinking,
            },
        );
        // Only between turns (require_idle): a switch never lands inside a tool loop,
        // whose continued assistant message may open with thinking that a request with
        // thinking off may not hold (docs/spec.md §8, "Thinking switched").
        if let Some(switch) = thinking {
            self.config.thinking = switch.switched();
        }
        self.config.system = system;
        self.config.tools = crate::request::canonical_tools(tools);
        self.prefix_digest = None;
        Ok(out)
    }
}
