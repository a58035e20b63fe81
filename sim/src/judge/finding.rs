//! Findings: what the judge says about one input, and exactly where.
//!
//! Guarantee: a report is a function of the input bytes alone. Findings keep the order
//! in which the input produced them (file order), counts are kept in ordered maps, and
//! nothing here reads a clock or iterates a hash map, so two runs over one file print
//! the same report. Memory stays bounded on a huge, badly broken file: past
//! [`MAX_KEPT`] findings only the counts grow.

use serde::Serialize;
use std::collections::BTreeMap;

/// Findings kept per file; the rest are counted, not stored.
pub const MAX_KEPT: usize = 1000;

/// How bad a finding is. Only violations change the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// An invariant is broken: the provider would reject the request, or the runtime
    /// wrote something the spec forbids.
    Violation,
    /// Worth knowing, not wrong: a log captured mid-turn, another runtime's marker.
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Violation => "violation",
            Severity::Info => "info",
        }
    }
}

/// Where a finding is. Every field is optional because each format knows different
/// things: a JSONL log has lines and windows, a cassette has requests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Place {
    /// 1-based line in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The window (0-based): compaction boundaries start a new one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// The cassette interaction's `id` (or its 0-based position when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<usize>,
    /// 0-based message index within the window or request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<usize>,
    /// 0-based block index within the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
}

/// One thing found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// The rule that found it: `pairing`, `empty`, `tool_id_unique`, `turn_open`,
    /// `request_valid` (the rest of what the API rejects, [`super::rules`]),
    /// `marker_exact`, `marker_once`, `foreign_marker`, `note_exact`, `note_once`,
    /// `model_text`, `append_only`, `prefix_changed`, `response_kept` (the judge's
    /// rules), `response`, `prefix` and `recording` (`check`'s own).
    pub check: &'static str,
    /// The finer kind within the check (for `pairing`, `empty` and `request_valid`,
    /// a kind of [`super::rules::table::RULES`]).
    pub kind: String,
    #[serde(flatten)]
    pub place: Place,
    /// One sentence: what is wrong.
    pub detail: String,
    /// A short one-line excerpt of the text at fault (may be empty).
    pub excerpt: String,
}

impl Finding {
    pub fn new(
        severity: Severity,
        check: &'static str,
        kind: impl Into<String>,
        place: Place,
        detail: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            check,
            kind: kind.into(),
            place,
            detail: detail.into(),
            excerpt: String::new(),
        }
    }

    pub fn with_excerpt(mut self, text: &str) -> Finding {
        self.excerpt = excerpt(text);
        self
    }
}

/// The text of `a` and `b` from a little before where they first differ.
pub fn difference(a: &str, b: &str) -> (String, String) {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or(a.len().min(b.len()));
    let from = a[..at]
        .char_indices()
        .rev()
        .nth(20)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let tail = |s: &str| s.get(from..).unwrap_or("").to_string();
    (tail(a), tail(b))
}

/// Where two serialized texts first differ, said so that the difference shows even
/// when both sides open alike for longer than an excerpt: `at byte N: was …X, now …Y`,
/// each side an excerpt from a little before the first differing byte (a key order
/// change, invisible when both sides are cut at the same prefix, shows here).
pub fn where_differ(a: &str, b: &str) -> String {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or(a.len().min(b.len()));
    let (was, now) = difference(a, b);
    let cut = if was.len() < a.len() { "…" } else { "" };
    format!(
        "at byte {at}: was {cut}{}, now {cut}{}",
        excerpt(&was),
        excerpt(&now)
    )
}

/// The findings of one file, capped, with full counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Findings {
    #[serde(rename = "findings")]
    pub kept: Vec<Finding>,
    /// Findings past `MAX_KEPT`, counted but not kept.
    pub suppressed: usize,
    pub violations: usize,
    pub infos: usize,
    /// Count per `check/kind`, every finding included.
    pub counts: BTreeMap<String, usize>,
}

impl Findings {
    pub fn push(&mut self, f: Finding) {
        match f.severity {
            Severity::Violation => self.violations += 1,
            Severity::Info => self.infos += 1,
        }
        *self
            .counts
            .entry(format!("{}/{}", f.check, f.kind))
            .or_insert(0) += 1;
        if self.kept.len() < MAX_KEPT {
            self.kept.push(f);
        } else {
            self.suppressed += 1;
        }
    }

    /// The kept findings of one check.
    pub fn of(&self, check: &str) -> Vec<&Finding> {
        self.kept.iter().filter(|f| f.check == check).collect()
    }
}

/// The result of checking one file (or, with `--prefix`, one pair of files).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileReport {
    pub path: String,
    pub format: &'static str,
    /// With `--prefix`: the file this one must extend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// What was read: `lines`, `messages`, `windows`, `requests`, … (format-dependent).
    pub stats: BTreeMap<&'static str, usize>,
    #[serde(flatten)]
    pub findings: Findings,
}

impl FileReport {
    pub fn new(path: &str, format: &'static str) -> FileReport {
        FileReport {
            path: path.to_string(),
            format,
            extends: None,
            stats: BTreeMap::new(),
            findings: Findings::default(),
        }
    }

    pub fn stat(&self, key: &str) -> usize {
        self.stats.get(key).copied().unwrap_or(0)
    }
}

/// A short, one-line excerpt of a text for reports.
pub fn excerpt(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { '⏎' } else { c })
        .collect();
    if one_line.chars().count() > 80 {
        let cut: String = one_line.chars().take(77).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_differ_shows_a_key_order_change_that_a_shared_prefix_would_hide() {
        let open = "x".repeat(100);
        let a = format!("{{\"p\":\"{open}\",\"input\":{{\"a\":1,\"b\":2}}}}");
        let b = format!("{{\"p\":\"{open}\",\"input\":{{\"b\":2,\"a\":1}}}}");
        assert_eq!(
            where_differ(&a, &b),
            "at byte 118: was …xxxxxxxxx\",\"input\":{\"a\":1,\"b\":2}}, now …xxxxxxxxx\",\"input\":{\"b\":2,\"a\":1}}"
        );
        assert_eq!(where_differ("ab", "ab!"), "at byte 2: was ab, now ab!");
    }

    #[test]
    fn difference_starts_a_little_before_the_first_differing_character() {
        let a = format!("{}é-old", "x".repeat(30));
        let b = format!("{}é-new", "x".repeat(30));
        let (was, now) = difference(&a, &b);
        // 21 characters of common context, then the difference.
        assert_eq!(was, format!("{}é-old", "x".repeat(19)));
        assert_eq!(now, format!("{}é-new", "x".repeat(19)));
        // One a prefix of the other, multibyte text, empty strings: never a panic.
        for (a, b) in [("ééé", "éé"), ("éé", "ééé"), ("", "x"), ("x", ""), ("", "")] {
            let _ = difference(a, b);
        }
        assert_eq!(difference("ab", "ab"), ("ab".to_string(), "ab".to_string()));
    }

    #[test]
    fn findings_past_the_cap_are_counted_not_kept() {
        let mut f = Findings::default();
        for i in 0..MAX_KEPT + 5 {
            f.push(Finding::new(
                Severity::Violation,
                "pairing",
                "missing_tool_result",
                Place::default(),
                format!("{i}"),
            ));
        }
        assert_eq!(
            (f.kept.len(), f.suppressed, f.violations),
            (MAX_KEPT, 5, MAX_KEPT + 5)
        );
        assert_eq!(
            f.counts.get("pairing/missing_tool_result"),
            Some(&(MAX_KEPT + 5))
        );
    }
}
