//! An engine's conventions: its own texts and layout, kept apart from the properties
//! every correct engine keeps.
//!
//! Guarantee: a checker that needs to know an engine's wording or layout asks a
//! [`Conventions`] value and nothing else; where a field is `None` the checker judges
//! only what holds for any engine. So a correct engine with other wording (plain
//! string prompts, its own markers and notes, breakpoints elsewhere) is never failed
//! for our choices, and the reference engine's choices live in exactly one profile,
//! [`Conventions::reference`], built from the same `Wording::REFERENCE` the request
//! judge uses, so the simulator and the judge hold one notion of its texts.
//!
//! Why a value and not a trait: a profile also comes from a file
//! ([`file::ProfileFile`]), and a scenario stores that file so a replay judges the
//! same way; a value can be built either way and cloned into every world.

pub mod file;
mod selection;

pub use file::{ProfileError, ProfileFile, load_profile};
pub use selection::{Judging, Selection, SelectionError};

use std::fmt;
use std::sync::Arc;

use crate::judge::markers::{Wording, sole_text};
use turnsim_core::request::directive_words;
use turnsim_core::{CacheBreakpoint, Message, Role};

/// Whether a checker holds for every correct engine or judges an engine's conventions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckKind {
    /// Holds for every correct turn engine, whatever its wording.
    Generic,
    /// Judges the conventions of a profile; with none, only its generic part runs.
    Convention,
}

impl CheckKind {
    pub const fn name(self) -> &'static str {
        match self {
            CheckKind::Generic => "generic",
            CheckKind::Convention => "convention",
        }
    }
}

/// What an engine says a user-role message it wrote is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthoredKind {
    /// An interruption marker.
    Marker,
    /// A tool-in-flight note.
    Note,
    /// Another fixed text of the engine (a resume prompt, a compaction notice).
    Fixed,
}

type Matcher = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A set of texts: exact strings, prefixes, or a matcher.
#[derive(Clone, Default)]
pub struct TextSet {
    pub exact: Vec<String>,
    pub prefixes: Vec<String>,
    matchers: Vec<Matcher>,
}

impl TextSet {
    pub fn exact<I: IntoIterator<Item = S>, S: Into<String>>(texts: I) -> TextSet {
        TextSet {
            exact: texts.into_iter().map(Into::into).collect(),
            ..TextSet::default()
        }
    }

    /// Adds a matcher: any text it accepts is in the set.
    pub fn with_matcher(mut self, f: impl Fn(&str) -> bool + Send + Sync + 'static) -> TextSet {
        self.matchers.push(Arc::new(f));
        self
    }

    pub fn with_prefix(mut self, prefix: impl Into<String>) -> TextSet {
        self.prefixes.push(prefix.into());
        self
    }

    pub fn matches(&self, text: &str) -> bool {
        self.exact.iter().any(|t| t == text)
            || self.prefixes.iter().any(|p| text.starts_with(p.as_str()))
            || self.matchers.iter().any(|f| f(text))
    }
}

impl fmt::Debug for TextSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextSet")
            .field("exact", &self.exact)
            .field("prefixes", &self.prefixes)
            .field("matchers", &self.matchers.len())
            .finish()
    }
}

/// How an engine wraps the user's words in the message it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptWrap {
    /// The reference engine's directive: a `<turn_context>` block, then the words.
    Directive,
    /// The words alone, as string content or as a single text block; or the last of
    /// several text blocks, after context the engine puts before them (as Claude
    /// Code's reminders sit before the user's text in the same message).
    Plain,
}

impl PromptWrap {
    /// The user's words in `m`, when `m` is a prompt wrapped this way.
    pub fn words(self, m: &Message) -> Option<&str> {
        if m.role != Role::User {
            return None;
        }
        match self {
            PromptWrap::Directive => directive_words(m),
            PromptWrap::Plain => sole_text(m).map(|(_, s)| s).or_else(|| last_of_texts(m)),
        }
    }
}

/// The last block's text when a message is two or more text blocks and nothing else,
/// and does not open with the reference's turn context (that is a directive, which
/// the `Directive` wrap reads; a plain-wrapping engine does not write one).
fn last_of_texts(m: &Message) -> Option<&str> {
    let blocks = m.blocks();
    let opens_with_context = matches!(
        blocks.first(),
        Some(turnsim_core::Block::Text { text }) if text.starts_with(turnsim_core::request::TURN_CONTEXT_OPEN)
    );
    if blocks.len() < 2 || opens_with_context {
        return None;
    }
    let mut texts = blocks.iter().map(|b| match b {
        turnsim_core::Block::Text { text } => Some(text.as_str()),
        _ => None,
    });
    texts.try_fold(None, |_, t| t.map(Some)).flatten()
}

/// Where an engine places its cache breakpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// After the stable prefix (system and tools).
    pub prefix: bool,
    /// After the last message of the previous turn, when there is one.
    pub previous_turn_end: bool,
    /// On the request's last message.
    pub last_message: bool,
}

impl Placement {
    pub const REFERENCE: Placement = Placement {
        prefix: true,
        previous_turn_end: true,
        last_message: true,
    };

    /// The breakpoints a request of `len` messages in a turn that began at message
    /// `baseline` carries; equal positions appear once, in this order.
    pub fn expected(self, baseline: usize, len: usize) -> Vec<CacheBreakpoint> {
        let mut points = Vec::new();
        let mut push = |after_message: Option<usize>| {
            let p = CacheBreakpoint { after_message };
            if !points.contains(&p) {
                points.push(p);
            }
        };
        if self.prefix {
            push(None);
        }
        if self.previous_turn_end && baseline > 0 {
            push(Some(baseline - 1));
        }
        if self.last_message && len > 0 {
            push(Some(len - 1));
        }
        points
    }
}

/// What of the text the user saw streamed an engine keeps when a turn is cut short,
/// beyond what every engine keeps (a completed block shown before a cancel).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shown {
    /// After a cancel, the text of a block whose end never streamed (the reference
    /// engine keeps it; keeping only completed blocks is a design of its own).
    pub unfinished_blocks: bool,
    /// After a crash, the text streamed before it (the reference engine drafts it to
    /// the log as it streams; what survives a crash is otherwise each design's own).
    pub across_crash: bool,
}

impl Shown {
    pub const REFERENCE: Shown = Shown {
        unfinished_blocks: true,
        across_crash: true,
    };
}

type Authored = Arc<dyn Fn(&Message) -> Option<AuthoredKind> + Send + Sync>;

/// The name of [`Conventions::reference`].
pub const REFERENCE_NAME: &str = "reference";

/// An engine's conventions. Every `None` is "not known": checkers then judge only
/// what is generic.
#[derive(Clone, Default)]
pub struct Conventions {
    /// Shown in `turnsim run` output and stored in scenario files. The name
    /// [`REFERENCE_NAME`] is the reference profile's alone: it switches on the
    /// checkers that read the reference wording (a profile file may not use it).
    pub name: String,
    /// Exactly the engine's interruption markers.
    pub markers: Option<TextSet>,
    /// Texts worded like a marker: each must be exactly one (`marker_once`).
    pub marker_like: Option<TextSet>,
    /// Exactly the engine's tool-in-flight notes.
    pub notes: Option<TextSet>,
    /// How the engine wraps the user's words.
    pub prompt: Option<PromptWrap>,
    /// The other user-role texts it authors; `None`: what `Engine::fixed_texts` says.
    pub fixed_texts: Option<Vec<String>>,
    /// Where it places cache breakpoints; `None`: placement not judged.
    pub breakpoints: Option<Placement>,
    /// What shown text it keeps when a turn is cut short; `None`: only what every
    /// engine keeps is judged.
    pub shown: Option<Shown>,
    /// Whether the engine lists the host's tools in an order of its own, the same
    /// whatever order the host gave them in (`tool_order`); `None` or `false`: the
    /// host's order is the engine's, on purpose, and not judged.
    pub canonical_tools: Option<bool>,
    /// The engine's own word on which user-role messages it authored: lets
    /// "an interruption is recorded once" be judged without knowing any wording.
    pub authored: Option<Authored>,
    /// The texts of a `tool_result` by which the engine answers a call that may have
    /// run when its turn was cut short (`label_matches`); `None`: labels not judged
    /// unless the profile is the reference one, whose notes name the calls instead.
    pub may_have_run: Option<TextSet>,
    /// The kind of the `activity` by which the engine reports that the cached prefix
    /// (system and tools) it sends changed (`prefix_reported`); `None`: reports not
    /// judged unless the profile is the reference one, whose log holds receipts.
    pub prefix_changed: Option<String>,
    /// Whether the engine accepts every rewind docs/spec.md §6 allows (idle, to an
    /// index no larger than the history, not splitting a tool call from its results),
    /// so a refusal of one is a finding (`hostile_input`); `None` or `false`: an
    /// engine that lacks rewind, or limits it, may refuse, and is not judged for it.
    pub accepts_rewinds: Option<bool>,
    /// Whether the engine logs each tool result as it arrives (docs/spec.md §7, so a
    /// crash before its batch completes does not lose it), so a live result of the
    /// open batch answered with no `Persist` and then sent to the model is a finding
    /// (`no_lost_observation`); `None` or `false`: the engine may save a batch's
    /// results when the batch ends, a correct design of its own.
    pub logs_each_result: Option<bool>,
}

impl fmt::Debug for Conventions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conventions")
            .field("name", &self.name)
            .field("markers", &self.markers)
            .field("marker_like", &self.marker_like)
            .field("notes", &self.notes)
            .field("prompt", &self.prompt)
            .field("fixed_texts", &self.fixed_texts)
            .field("breakpoints", &self.breakpoints)
            .field("shown", &self.shown)
            .field("canonical_tools", &self.canonical_tools)
            .field("authored", &self.authored.is_some())
            .field("may_have_run", &self.may_have_run)
            .field("prefix_changed", &self.prefix_changed)
            .field("accepts_rewinds", &self.accepts_rewinds)
            .field("logs_each_result", &self.logs_each_result)
            .finish()
    }
}

impl Conventions {
    /// No conventions: every checker judges only what is generic.
    pub fn generic() -> Conventions {
        Conventions {
            name: "generic".into(),
            ..Conventions::default()
        }
    }

    /// The reference engine's profile (docs/spec.md §4, §5, §8): its wording from
    /// `Wording::REFERENCE`, its directive, its breakpoints.
    pub fn reference() -> Conventions {
        let w = Wording::REFERENCE;
        Conventions {
            name: REFERENCE_NAME.into(),
            markers: Some(TextSet::default().with_matcher(w.is_marker)),
            marker_like: Some(TextSet::default().with_prefix(w.marker_opening)),
            notes: Some(TextSet::default().with_matcher(w.is_note)),
            prompt: Some(PromptWrap::Directive),
            fixed_texts: Some(vec![
                turnsim_core::state::TRUNCATION_RESUME_TEXT.to_string(),
                turnsim_core::request::COMPACTION_NOTICE.to_string(),
            ]),
            breakpoints: Some(Placement::REFERENCE),
            shown: Some(Shown::REFERENCE),
            canonical_tools: Some(true),
            authored: None,
            // The reference's labels and reports are read from its own notes and log
            // records (`interruption_wording`, receipts), not from these fields.
            may_have_run: None,
            prefix_changed: None,
            accepts_rewinds: Some(true),
            logs_each_result: Some(true),
        }
    }

    /// Adds the engine's own classifier of the messages it authored.
    pub fn with_authored(
        mut self,
        f: impl Fn(&Message) -> Option<AuthoredKind> + Send + Sync + 'static,
    ) -> Conventions {
        self.authored = Some(Arc::new(f));
        self
    }

    /// True when nothing but generic properties can be judged.
    pub fn is_generic(&self) -> bool {
        self.markers.is_none()
            && self.marker_like.is_none()
            && self.notes.is_none()
            && self.prompt.is_none()
            && self.fixed_texts.is_none()
            && self.breakpoints.is_none()
            && self.shown.is_none()
            && self.canonical_tools.is_none()
            && self.authored.is_none()
            && self.may_have_run.is_none()
            && self.prefix_changed.is_none()
            && self.accepts_rewinds.is_none()
            && self.logs_each_result.is_none()
    }

    /// What the engine authored `m` as: its own classifier first, else the whole
    /// text of a user message against the profile's sets.
    pub fn authored_kind(&self, m: &Message) -> Option<AuthoredKind> {
        if let Some(f) = &self.authored {
            return f(m);
        }
        if m.role != Role::User {
            return None;
        }
        // Markers and notes are whole messages of string content, as the reference
        // writes them; a text among other blocks is someone else's.
        let s = m.string_content()?;
        if self.markers.as_ref().is_some_and(|t| t.matches(s)) {
            Some(AuthoredKind::Marker)
        } else if self.notes.as_ref().is_some_and(|t| t.matches(s)) {
            Some(AuthoredKind::Note)
        } else if self
            .fixed_texts
            .as_ref()
            .is_some_and(|t| t.iter().any(|f| f == s))
        {
            Some(AuthoredKind::Fixed)
        } else {
            None
        }
    }

    /// True when `history` holds the user's `words` as a prompt: wrapped as the
    /// profile says, or (no profile) as the whole of some text of a user message.
    pub fn holds_prompt(&self, history: &[turnsim_core::SharedMessage], words: &str) -> bool {
        history.iter().any(|m| match self.prompt {
            Some(wrap) => wrap.words(m) == Some(words),
            None => {
                m.role == Role::User
                    && (m.string_content() == Some(words)
                        || m.blocks().iter().any(
                            |b| matches!(b, turnsim_core::Block::Text { text } if text == words),
                        ))
            }
        })
    }
}

#[cfg(test)]
mod tests;
