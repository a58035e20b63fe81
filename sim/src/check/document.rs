//! A JSON document (Anthropic or OpenAI chat messages, an array or a request body)
//! judged as a stream, one message at a time ([`super::json_stream`]).
//!
//! Guarantees:
//! - The verdict of reading the whole document first: which format it is, what each
//!   message loads as, which error is reported, and the findings. Whether a document
//!   is OpenAI's is known only once some message uses OpenAI conventions (possibly the
//!   last), so until then every message is judged both ways, each way with its own
//!   history check and findings, and the way the document turns out to be is the one
//!   reported. The first message that fails to load is remembered per way, not
//!   reported at once: it is the error only if that way is chosen, exactly as a
//!   whole-document load would have stopped there.
//! - Bounded memory: neither way keeps messages beyond what [`HistoryCheck`] holds,
//!   and a document error (syntax, shape, a message over the limit) stops the read.

use super::Format;
use super::anthropic::{is_openai_message, parse_raw};
use super::findings::{FileReport, Findings, Place};
use super::json_stream::{Element, for_each_message};
use super::openai::Mapper;
use super::source::{InputError, Limits, Located};
use crate::judge::history::HistoryCheck;
use crate::judge::pairing::End;
use std::io::BufRead;
use std::sync::Arc;
use turnsim_core::Message;

/// One way of reading the document.
struct Way {
    check: HistoryCheck,
    findings: Findings,
    messages: usize,
    /// The first message that did not load this way.
    error: Option<InputError>,
}

impl Way {
    fn new() -> Way {
        Way {
            check: HistoryCheck::new(Place {
                window: Some(0),
                ..Place::default()
            }),
            findings: Findings::default(),
            messages: 0,
            error: None,
        }
    }

    fn push(&mut self, loaded: Result<Vec<Located>, InputError>) {
        match loaded {
            Ok(messages) => {
                for m in messages {
                    self.messages += 1;
                    self.check.push(m, &mut self.findings);
                }
            }
            Err(e) => self.error = Some(e),
        }
    }
}

/// Judges the JSON document in `reader`; `format` forces Anthropic or OpenAI.
pub fn check(
    name: &str,
    reader: impl BufRead,
    format: Option<Format>,
    limits: Limits,
) -> Result<FileReport, InputError> {
    let mut anthropic = (format != Some(Format::OpenAi)).then(Way::new);
    let mut openai =
        matches!(format, None | Some(Format::OpenAi)).then(|| (Way::new(), Mapper::default()));
    let mut each = |e: Element| {
        if format.is_none() && anthropic.is_some() && is_openai_message(&e.raw) {
            anthropic = None;
        }
        if let Some(way) = anthropic.as_mut().filter(|w| w.error.is_none()) {
            let loaded = parse_raw::<Message>(&e.raw, e.line, e.index)
                .map(|m| vec![Located::new(Arc::new(m), e.line)]);
            way.push(loaded);
        }
        if let Some((way, mapper)) = openai.as_mut().filter(|(w, _)| w.error.is_none()) {
            let mut out = Vec::new();
            let loaded = mapper.push(e.index, e.line, &e.raw, &mut out).map(|()| out);
            way.push(loaded);
        }
    };
    let body = for_each_message(reader, limits, &mut each)?;
    let end = if body { End::Violation } else { End::TurnOpen };
    let (mut way, format, skipped) = match (anthropic, openai) {
        (Some(way), _) => (way, Format::Anthropic, 0),
        (None, Some((mut way, mut mapper))) => {
            if way.error.is_none() {
                let mut out = Vec::new();
                mapper.finish(&mut out);
                way.push(Ok(out));
            }
            (way, Format::OpenAi, mapper.skipped)
        }
        // Anthropic is dropped only for OpenAI, which is then read.
        (None, None) => return Err(InputError::whole("no format left to read the document as")),
    };
    if let Some(e) = way.error {
        return Err(e);
    }
    if way.messages == 0 {
        return Err(InputError::whole(
            "nothing to judge: the document holds no messages (expected a non-empty array of messages or a request body with `messages`)",
        ));
    }
    way.check.finish(end, &mut way.findings);
    let mut report = FileReport::new(name, format.name());
    report.findings = way.findings;
    report.stats.insert("messages", way.messages);
    report.stats.insert("windows", 1);
    if format == Format::OpenAi {
        report.stats.insert("instructions_skipped", skipped);
    }
    Ok(report)
}

/// The format the JSON document in `reader` reads as (`format` forces Anthropic or
/// OpenAI), or the error reading it whole would stop at: the same choice and the same
/// first error as [`check`], without judging anything. `check --prefix` reads each
/// document once with this and then again as a stream of that format
/// ([`super::prefix_stream`]), so that a document that cannot be read is reported
/// before any comparison, as when it was loaded whole.
pub fn format_of(
    reader: impl BufRead,
    format: Option<Format>,
    limits: Limits,
) -> Result<Format, InputError> {
    // Per way: `Some(first error)` once one message failed to load that way.
    let mut anthropic: Option<Option<InputError>> =
        (format != Some(Format::OpenAi)).then_some(None);
    let mut openai = matches!(format, None | Some(Format::OpenAi))
        .then(|| (None::<InputError>, Mapper::default()));
    let mut out = Vec::new();
    let mut each = |e: Element| {
        if format.is_none() && anthropic.is_some() && is_openai_message(&e.raw) {
            anthropic = None;
        }
        if let Some(error @ None) = anthropic.as_mut() {
            *error = parse_raw::<Message>(&e.raw, e.line, e.index).err();
        }
        if let Some((error @ None, mapper)) = openai.as_mut() {
            *error = mapper.push(e.index, e.line, &e.raw, &mut out).err();
            out.clear();
        }
    };
    for_each_message(reader, limits, &mut each)?;
    let (error, format) = match (anthropic, openai) {
        (Some(error), _) => (error, Format::Anthropic),
        (None, Some((error, _))) => (error, Format::OpenAi),
        (None, None) => return Err(InputError::whole("no format left to read the document as")),
    };
    match error {
        Some(e) => Err(e),
        None => Ok(format),
    }
}
