//! A conventions profile as a JSON file (`turnsim run --conventions FILE`), the form
//! documented in docs/invariants.md.
//!
//! Guarantee: a file either becomes exactly the [`Conventions`] it spells or is an
//! error naming the file, the line and column, and the field at fault; a misspelt
//! field is an error, never a convention silently left unknown (which would quietly
//! turn a convention check off). Every field but `format` is optional: a field left
//! out is a convention not judged.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Conventions, Placement, PromptWrap, TextSet};

pub const PROFILE_FORMAT: &str = "turnsim-conventions";

/// Texts as a file spells them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextsFile {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefixes: Vec<String>,
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
    pub format: String,
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
}

fn texts(t: &TextsFile) -> TextSet {
    TextSet {
        exact: t.exact.clone(),
        prefixes: t.prefixes.clone(),
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
            authored: None,
        }
    }

    /// Parses a profile; `origin` names the text in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ProfileFile, ProfileError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let file: ProfileFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner();
            ProfileError(format!(
                "{origin}: line {}, column {}: at `{}`: {inner}",
                inner.line(),
                inner.column(),
                e.path()
            ))
        })?;
        if file.format != PROFILE_FORMAT {
            return Err(ProfileError(format!(
                "{origin}: \"format\" is {:?}, expected {PROFILE_FORMAT:?}",
                file.format
            )));
        }
        for (field, set) in [
            ("markers", &file.markers),
            ("marker_like", &file.marker_like),
            ("notes", &file.notes),
        ] {
            if let Some(s) = set
                && (s.exact.iter().chain(&s.prefixes).any(String::is_empty))
            {
                return Err(ProfileError(format!(
                    "{origin}: `{field}` holds an empty text, which would match every message"
                )));
            }
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
