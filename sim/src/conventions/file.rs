//! A conventions profile as a JSON file (`turnsim run --conventions FILE`), the form
//! documented in docs/invariants.md.
//!
//! Guarantee: a file either becomes exactly the [`Conventions`] it spells or is an
//! error naming the file, the line and column, and the field at fault; a misspelt
//! field is an error, never a convention silently left unknown (which would quietly
//! turn a convention check off), and so is an empty text (which would match every
//! message); both are checked as the file is read, so a profile stored in a scenario
//! is held to the same rules. Every field but `format` is optional: a field left out
//! is a convention not judged.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Conventions, Placement, PromptWrap, REFERENCE_NAME, Shown, TextSet};

pub const PROFILE_FORMAT: &str = "turnsim-conventions";

/// A text of a profile: never empty, because an empty prefix matches every message.
/// Checked as it is read, so a profile stored in a scenario file is held to it too,
/// with the field path of the offending entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.is_empty() {
            return Err(serde::de::Error::custom(
                "an empty text, which would match every message",
            ));
        }
        Ok(Text(s))
    }
}

/// The `format` field: exactly [`PROFILE_FORMAT`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format;

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(PROFILE_FORMAT)
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s != PROFILE_FORMAT {
            return Err(serde::de::Error::custom(format!(
                "\"format\" is {s:?}, expected {PROFILE_FORMAT:?}"
            )));
        }
        Ok(Format)
    }
}

/// Texts as a file spells them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextsFile {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact: Vec<Text>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefixes: Vec<Text>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptFile {
    Directive,
    Plain,
}

/// A profile as stored in a file and in a scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    /// Always [`PROFILE_FORMAT`].
    pub format: Format,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markers: Option<TextsFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker_like: Option<TextsFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<TextsFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PromptFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_texts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakpoints: Option<Placement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<Shown>,
    /// The engine's labels of a call cut short (switches `label_matches` on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<LabelsFile>,
    /// How the engine reports a change of the cached prefix (switches
    /// `prefix_reported` on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_changed: Option<PrefixChangedFile>,
    /// `true`: the engine orders the host's tools itself (`tool_order` judges it);
    /// `false` or left out: it keeps the host's order on purpose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_tools: Option<bool>,
    /// `true`: the engine accepts every rewind the spec allows, and a refusal of one
    /// is a finding (`hostile_input`); `false` or left out: it may refuse rewinds
    /// (an engine without rewind, or with a narrower one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepts_rewinds: Option<bool>,
    /// `true`: the engine logs each tool result as it arrives, and a result it took
    /// with no `Persist` and later sent is a finding (`no_lost_observation`); `false`
    /// or left out: it may save a batch's results when the batch ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs_each_result: Option<bool>,
}

/// The `labels` field: the whole text of a `tool_result` by which the engine answers
/// a call that was running (or, after a crash, may have been) when the turn was cut
/// short. Exact texts or prefixes, as for markers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelsFile {
    pub may_have_run: TextsFile,
}

/// The `prefix_changed` field: the `kind` of the `activity` output the engine
/// reports a change of the system prompt or tools it sends with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixChangedFile {
    pub activity: Text,
}

fn texts(t: &TextsFile) -> TextSet {
    TextSet {
        exact: t.exact.iter().map(|t| t.0.clone()).collect(),
        prefixes: t.prefixes.iter().map(|t| t.0.clone()).collect(),
        ..TextSet::default()
    }
}

impl ProfileFile {
    /// The conventions this file spells.
    pub fn conventions(&self) -> Conventions {
        Conventions {
            name: if self.name.is_empty() {
                "file".into()
            } else {
                self.name.clone()
            },
            markers: self.markers.as_ref().map(texts),
            marker_like: self.marker_like.as_ref().map(texts),
            notes: self.notes.as_ref().map(texts),
            prompt: self.prompt.map(|p| match p {
                PromptFile::Directive => PromptWrap::Directive,
                PromptFile::Plain => PromptWrap::Plain,
            }),
            fixed_texts: self.fixed_texts.clone(),
            breakpoints: self.breakpoints,
            shown: self.shown,
            canonical_tools: self.canonical_tools,
            authored: None,
            may_have_run: self.labels.as_ref().map(|l| texts(&l.may_have_run)),
            prefix_changed: self.prefix_changed.as_ref().map(|p| p.activity.0.clone()),
            accepts_rewinds: self.accepts_rewinds,
            logs_each_result: self.logs_each_result,
        }
    }

    /// Parses a profile; `origin` names the text in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ProfileFile, ProfileError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let file: ProfileFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner();
            let (line, column) = (inner.line(), inner.column());
            let text = inner.to_string();
            let message = text
                .strip_suffix(&format!(" at line {line} column {column}"))
                .unwrap_or(&text);
            ProfileError(format!(
                "{origin}: line {line}, column {column}: at `{}`: {message}",
                e.path()
            ))
        })?;
        // The checkers that read the reference engine's own wording switch on for a
        // profile of that name; a file spelling other texts under it would have an
        // engine judged by words it never uses.
        if file.name == REFERENCE_NAME {
            return Err(ProfileError(format!(
                "{origin}: the name {REFERENCE_NAME:?} belongs to the built-in reference profile (its wording switches on interruption_recorded, label_matches and prefix_reported); give this profile another name"
            )));
        }
        // A label set of no text would fail every call that ran, and say nothing of
        // the engine: the wording is what switches the checker on.
        if let Some(l) = &file.labels
            && l.may_have_run.exact.is_empty()
            && l.may_have_run.prefixes.is_empty()
        {
            return Err(ProfileError(format!(
                "{origin}: at `labels.may_have_run`: no text; give the engine's tool_result text for a call that may have run (\"exact\" or \"prefixes\"), or leave `labels` out"
            )));
        }
        Ok(file)
    }
}

/// A profile file that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

/// Reads a profile file.
pub fn load_profile(path: &Path) -> Result<ProfileFile, ProfileError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ProfileError(format!("{origin}: cannot read the conventions file: {e}")))?;
    ProfileFile::parse(&text, &origin)
}
