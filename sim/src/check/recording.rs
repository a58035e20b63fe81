//! A `turnsim serve --record` folder judged again, as one input.
//!
//! Guarantee: the recording is judged by the judge the live server used, fed the
//! same way ([`crate::serve::recheck::check_records`]: request order, the same
//! conversation key, each answer told as the server told it), so the findings are
//! the live verdicts' findings. A folder holding no judgeable request is an error,
//! never "0 requests judged, clean". A recorded verdict that differs from the one
//! judged again is information (the judge changed since the recording was made),
//! not a violation of the client.

use super::findings::{FileReport, Finding, Place, Severity};
use super::source::InputError;
use crate::serve::recheck::check_records;
use crate::serve::record::read_dir;
use std::path::Path;

/// A recorded rule's name as the judge spells it (a finding names its check by a
/// static name); a rule this build does not know is the recording's own.
fn rule_name(rule: &str) -> &'static str {
    const KNOWN: [&str; 16] = [
        "pairing",
        "tool_id_unique",
        "empty",
        "turn_open",
        "request_valid",
        "marker_exact",
        "marker_once",
        "foreign_marker",
        "note_exact",
        "note_once",
        "model_text",
        "append_only",
        "prefix_changed",
        "response_kept",
        "reasoning_kept",
        "recording",
    ];
    KNOWN
        .into_iter()
        .find(|k| *k == rule)
        .unwrap_or("recording")
}

/// True when `path` (a JSON file) is a serve record.
pub fn is_record(path: &Path) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        format: Option<String>,
    }
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Probe>(&b).ok())
        .and_then(|p| p.format)
        .is_some_and(|f| f == crate::serve::record::RECORD_FORMAT)
}

/// Judges the recording in `dir`.
pub fn check(dir: &Path) -> Result<FileReport, InputError> {
    let records = read_dir(dir).map_err(InputError::whole)?;
    let checked = check_records(&records);
    if checked.verdicts.is_empty() {
        return Err(InputError::whole(format!(
            "a `turnsim serve --record` folder with no judgeable POST /v1/messages request among its {} record(s): nothing to judge",
            records.len()
        )));
    }
    let mut report = FileReport::new(&dir.display().to_string(), "serve-record");
    for v in &checked.verdicts {
        for (f, repeated) in v.findings.iter().zip(&v.repeated) {
            if !repeated {
                report.findings.push(f.clone());
            }
        }
        // Violations the recording carries that were not judged again (the server's
        // own comparison with what it sent, `reasoning_kept`, or a request that could
        // not be judged again): reported as the server reported them, so `check DIR`
        // and the live server never disagree in silence.
        for x in &v.violations {
            if v.findings.iter().any(|f| f.check == x.rule) {
                continue;
            }
            let place = Place {
                request: usize::try_from(v.request).ok(),
                message: x.message,
                block: x.block,
                ..Place::default()
            };
            report.findings.push(
                Finding::new(
                    Severity::Violation,
                    rule_name(&x.rule),
                    x.kind.clone(),
                    place,
                    x.detail.clone(),
                )
                .with_excerpt(&x.excerpt),
            );
        }
    }
    for m in &checked.mismatches {
        report.findings.push(Finding::new(
            Severity::Info,
            "recording",
            "verdict_changed",
            Place::default(),
            m.clone(),
        ));
    }
    let conversations: std::collections::BTreeSet<&str> = checked
        .verdicts
        .iter()
        .map(|v| v.conversation.as_str())
        .collect();
    report.stats.insert("records", records.len());
    report.stats.insert("requests", checked.verdicts.len());
    report.stats.insert("conversations", conversations.len());
    // Which judgement the prefix got: the recording's bytes, or (older records) values.
    report
        .stats
        .insert("prefix_judged_on_bytes", checked.prefix_on_bytes);
    report
        .stats
        .insert("prefix_judged_on_values", checked.prefix_on_values);
    Ok(report)
}
