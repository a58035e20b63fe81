//! [`Judged`]: an engine factory with a run's judging attached.
//!
//! Guarantee: wrapping changes how a run is judged and nothing else: every engine
//! call goes straight to the wrapped factory, so the trace, its digest and the
//! engine's behaviour are those of the wrapped factory alone.

use super::{Engine, EngineFactory};
use crate::conventions::{Conventions, Judging, Selection};
use turnsim_core::{Output, SessionConfig};

/// `inner`, judged with `conventions` (when given) and `checks`.
pub struct Judged<'a> {
    inner: &'a dyn EngineFactory,
    conventions: Option<Conventions>,
    checks: Selection,
}

impl<'a> Judged<'a> {
    pub fn new(inner: &'a dyn EngineFactory) -> Judged<'a> {
        Judged {
            inner,
            conventions: None,
            checks: Selection::all(),
        }
    }

    /// Judged as a scenario or a command line says.
    pub fn with(inner: &'a dyn EngineFactory, judging: &Judging) -> Judged<'a> {
        Judged {
            inner,
            conventions: judging.conventions.as_ref().map(|p| p.conventions()),
            checks: judging.checks.clone(),
        }
    }

    /// Replaces the engine's own profile.
    pub fn conventions(mut self, c: Conventions) -> Judged<'a> {
        self.conventions = Some(c);
        self
    }

    pub fn checks(mut self, s: Selection) -> Judged<'a> {
        self.checks = s;
        self
    }
}

impl EngineFactory for Judged<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn create(&self, config: SessionConfig) -> Box<dyn Engine> {
        self.inner.create(config)
    }

    fn restore(
        &self,
        config: SessionConfig,
        log: &[u8],
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        self.inner.restore(config, log)
    }

    fn conventions(&self) -> Conventions {
        match &self.conventions {
            Some(c) => c.clone(),
            None => self.inner.conventions(),
        }
    }

    fn selection(&self) -> Selection {
        self.checks.clone()
    }

    fn writes_reference_log(&self) -> bool {
        self.inner.writes_reference_log()
    }

    fn imports(&self) -> bool {
        self.inner.imports()
    }

    fn import(
        &self,
        config: SessionConfig,
        history: Vec<turnsim_core::Message>,
    ) -> Result<(Box<dyn Engine>, Vec<Output>), String> {
        self.inner.import(config, history)
    }
}
