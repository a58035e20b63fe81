//! `turnsim check`: the judge (`crate::judge`) run on real transcripts, recorded
//! traffic and `turnsim serve --record` folders.
//!
//! Guarantees:
//! - One oracle: every rule is the judge's, the same code `turnsim serve` judges live
//!   requests with; this module only reads formats into the judge's neutral view and
//!   renders findings. Recorded responses go through the engine's own stream handling.
//! - Never a panic and never a silent pass: input that is not the format it claims,
//!   a format recognised but not judged yet, and input from which nothing could be
//!   judged (no messages, no requests, an empty folder) are errors naming the file
//!   (and line) and what was expected, with the exit code of unreadable input
//!   (`report::exit::UNREADABLE`); nothing reachable from input unwraps. One block
//!   the provider would refuse in a Claude Code log does not hide the rest: it is a
//!   violation at its line (`unreadable/block`) and the log is judged without it.
//! - Bounded memory: Claude Code JSONL is read line by line, JSON documents message by
//!   message (`json_stream`, `document`) and cassettes interaction by interaction
//!   (`vcr_split`), each checked as a stream (`crate::judge::history`,
//!   `crate::judge::session`); no element (a line, a message, an interaction) larger
//!   than [`Limits`] (`--max-element-mib`) is read into memory, it is an error naming
//!   the limit. An SSE recording or a Responses request body is one element, read
//!   whole within the limit. `--prefix` streams both files in lockstep; a JSON
//!   document is read twice, once to learn its format and once as a stream
//!   (`prefix_stream`).
//! - Deterministic output: see `report`.
//!
//! Layout: `detect` picks the format, a loader per format (`claude_jsonl`,
//! `anthropic`, `openai`, `vcr` with `vcr_exchange`, `vcr_chat` and `vcr_responses`, `sse`,
//! `recording`, `codex`, `gemini_cli` with `gemini_contents`) yields messages
//! (`source`) or requests for the judge, `dir` walks folders, `response` and
//! `prefix` are `check`'s own comparisons, `report` renders the findings, and
//! `export` writes a simulated request for `check` to read.

pub(crate) mod anthropic;
pub(crate) mod claude_branch;
pub(crate) mod claude_entry;
pub(crate) mod claude_jsonl;
pub(crate) mod codex;
pub(crate) mod detect;
pub(crate) mod dir;
pub(crate) mod document;
pub(crate) mod export;
pub(crate) mod findings;
pub(crate) mod gemini_cli;
pub(crate) mod gemini_contents;
pub(crate) mod json_stream;
pub(crate) mod openai;
pub(crate) mod prefix;
pub(crate) mod prefix_stream;
pub(crate) mod recording;
pub(crate) mod report;
pub(crate) mod response;
pub(crate) mod source;
pub(crate) mod sse;
pub(crate) mod vcr;
pub(crate) mod vcr_chat;
pub(crate) mod vcr_exchange;
pub(crate) mod vcr_responses;
pub(crate) mod vcr_split;

// The façade of transcript judging: what `check_file` and `check_reader` return.
pub use crate::judge::finding::{FileReport, Finding, Findings, Severity};

use crate::judge::history::HistoryCheck;
use crate::judge::pairing::End;
use detect::{Detected, HEAD, detect};
use findings::Place;
use report::{Outcome, Unreadable};
pub use source::Limits;
use source::{InputError, Item, utf8};
use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

/// The input formats `--format` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// Anthropic Messages JSON: an array of messages or a request body.
    Anthropic,
    /// A Claude Code session log, one entry per line.
    #[cfg_attr(feature = "cli", value(name = "claude-jsonl"))]
    ClaudeJsonl,
    /// A go-vcr YAML cassette of Messages, chat-completions or Responses API calls.
    Vcr,
    /// A vcrpy YAML cassette (Python's VCR) of the same calls.
    Vcrpy,
    /// OpenAI chat-completions messages (an array or a request body).
    #[cfg_attr(feature = "cli", value(name = "openai"))]
    OpenAi,
    /// One recorded Messages API response stream (server-sent events).
    Recording,
    /// A `turnsim serve --record` folder (one JSON file per request).
    #[cfg_attr(feature = "cli", value(name = "serve-record"))]
    ServeRecord,
    /// A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex,
    /// A gemini-cli session file (`~/.gemini/tmp/…/chats/session-*.jsonl` or `.json`).
    #[cfg_attr(feature = "cli", value(name = "gemini-cli"))]
    GeminiCli,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Anthropic => "anthropic",
            Format::ClaudeJsonl => "claude-jsonl",
            Format::Vcr => "vcr",
            Format::Vcrpy => "vcrpy",
            Format::OpenAi => "openai",
            Format::Recording => "recording",
            Format::ServeRecord => "serve-record",
            Format::Codex => "codex",
            Format::GeminiCli => "gemini-cli",
        }
    }
}

/// `turnsim check [--format F] [--json] [--prefix] FILE…`
#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct CheckArgs {
    /// The input format; detected from the content when absent.
    #[cfg_attr(feature = "cli", arg(long, value_enum))]
    pub format: Option<Format>,
    /// Print a machine-readable JSON report.
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: bool,
    /// Check that the second file extends the first, message by message, byte for byte.
    #[cfg_attr(feature = "cli", arg(long))]
    pub prefix: bool,
    /// The largest element read, in MiB: one line of a log, one message of a JSON
    /// document, one interaction of a cassette, a whole SSE recording. Inputs are read
    /// one element at a time; a larger element is an error naming this limit.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "MIB", default_value_t = source::DEFAULT_MAX_ELEMENT_MIB, value_parser = clap::value_parser!(usize))
    )]
    pub max_element_mib: usize,
    /// Transcripts, request bodies, cassettes or recordings; a folder is a
    /// `turnsim serve --record` recording (judged as one) or a folder of transcripts
    /// (each file checked).
    #[cfg_attr(feature = "cli", arg(required = true, value_name = "FILE"))]
    pub files: Vec<PathBuf>,
}

/// Runs `turnsim check`; returns the exit code.
pub fn run(args: &CheckArgs) -> i32 {
    let outcome = if args.prefix {
        match args.files.as_slice() {
            [a, b] => check_prefix_with(a, b, args.format, Limits::mib(args.max_element_mib)),
            _ => {
                eprintln!("--prefix takes exactly two files: A B (B must extend A)");
                return report::exit::USAGE;
            }
        }
    } else {
        check_files_with(&args.files, args.format, Limits::mib(args.max_element_mib))
    };
    if args.json {
        crate::stdout::Stdout::new("check").print(&report::json(&outcome));
    } else {
        crate::stdout::Stdout::new("check").print(&report::human(&outcome));
        for u in &outcome.unreadable {
            eprintln!("{}", u.to_line());
        }
    }
    outcome.exit_code()
}

/// Checks each file on its own; a folder is a recording or a folder of files
/// (`dir`).
pub fn check_files(files: &[PathBuf], format: Option<Format>) -> Outcome {
    check_files_with(files, format, Limits::default())
}

/// [`check_files`] with a limit on the size of one element.
pub fn check_files_with(files: &[PathBuf], format: Option<Format>, limits: Limits) -> Outcome {
    let mut outcome = Outcome::default();
    for path in files {
        if path.is_dir() {
            dir::check_dir(path, format, limits, &mut outcome);
            continue;
        }
        match check_file_with(path, format, limits) {
            Ok(r) => outcome.files.push(r),
            Err(e) => outcome.unreadable.push(unreadable(path, e)),
        }
    }
    outcome
}

pub(crate) fn unreadable(path: &Path, e: InputError) -> Unreadable {
    Unreadable {
        path: path.display().to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    }
}

/// The detection head put back in front of the rest of the input.
type Input = BufReader<std::io::Chain<Cursor<Vec<u8>>, Box<dyn Read>>>;

/// An opened input: its detected shape and a reader over all of it.
struct Opened {
    detected: Detected,
    reader: Input,
}

impl Opened {
    /// The whole input, refused past `max` bytes (then it is `what`).
    fn text_within(self, max: usize, what: &str) -> Result<String, InputError> {
        let mut bytes = Vec::new();
        let reader = self.reader;
        reader
            .take((max as u64).saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
        if bytes.len() > max {
            return Err(Limits { max_element: max }.exceeded(1, what));
        }
        utf8(&bytes)?;
        String::from_utf8(bytes).map_err(|_| InputError::whole("not UTF-8 text"))
    }
}

fn open_path(path: &Path, format: Option<Format>) -> Result<Opened, InputError> {
    let file = File::open(path).map_err(|e| InputError::whole(format!("cannot open: {e}")))?;
    open(Box::new(file), format)
}

/// Reads the head for detection, then hands back a reader over the whole input.
fn open(mut input: Box<dyn Read>, format: Option<Format>) -> Result<Opened, InputError> {
    let mut head = Vec::new();
    (&mut input)
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
    let detected = match format {
        Some(Format::ClaudeJsonl) => Detected::ClaudeJsonl,
        Some(Format::Anthropic | Format::OpenAi) => Detected::JsonDocument,
        Some(Format::Vcr) => Detected::Vcr,
        Some(Format::Vcrpy) => Detected::Vcrpy,
        Some(Format::Recording) => Detected::Recording,
        Some(Format::Codex) => Detected::CodexRollout,
        Some(Format::GeminiCli) => Detected::GeminiSession,
        Some(Format::ServeRecord) => {
            return Err(InputError::whole(
                "--format serve-record names a `turnsim serve --record` folder, not a file",
            ));
        }
        None => detect(&head, head.len() < HEAD)?,
    };
    Ok(Opened {
        detected,
        reader: BufReader::new(Cursor::new(head).chain(input)),
    })
}

/// Runs the history checks over a message stream, one window at a time.
fn check_stream(
    items: impl Iterator<Item = Result<Item, InputError>>,
    last_end: End,
    report: &mut FileReport,
) -> Result<(), InputError> {
    let mut window = 0;
    let place = |window| Place {
        window: Some(window),
        ..Place::default()
    };
    let mut check = HistoryCheck::new(place(window));
    let (mut messages, mut unreadable) = (0, 0);
    for item in items {
        match item? {
            Item::Message(m) => {
                messages += 1;
                check.push(m, &mut report.findings);
            }
            Item::Boundary { .. } => {
                // A compaction replaced the history; what came before had to be a
                // complete history of its own.
                check.finish(End::Violation, &mut report.findings);
                window += 1;
                check = HistoryCheck::new(place(window));
            }
            Item::Branch { prefix, .. } => {
                // The branch left behind ends as a log ends; the new one is its own
                // window, holding the prefix it continues. The prefix was judged where
                // it was first read, so what it says again is not reported twice.
                check.finish(last_end, &mut report.findings);
                window += 1;
                check = HistoryCheck::new(place(window));
                let mut again = Findings::default();
                for m in prefix {
                    check.push(m, &mut again);
                }
            }
            Item::Unreadable(mut f) => {
                f.place.window = Some(window);
                report.findings.push(f);
                unreadable += 1;
            }
        }
    }
    check.finish(last_end, &mut report.findings);
    if messages == 0 && unreadable > 0 {
        return Err(InputError::whole(format!(
            "nothing to judge: no message of it could be read ({unreadable} refused)"
        )));
    }
    report.stats.insert("messages", messages);
    report.stats.insert("windows", window + 1);
    Ok(())
}

/// Checks one file; the format is detected unless given.
pub fn check_file(path: &Path, format: Option<Format>) -> Result<FileReport, InputError> {
    check_file_with(path, format, Limits::default())
}

/// [`check_file`] with a limit on the size of one element.
pub fn check_file_with(
    path: &Path,
    format: Option<Format>,
    limits: Limits,
) -> Result<FileReport, InputError> {
    let file = File::open(path).map_err(|e| InputError::whole(format!("cannot open: {e}")))?;
    check_reader_with(&path.display().to_string(), file, format, limits)
}

/// Checks one input read from `input`, reported under `name`: what [`check_file`]
/// does after opening the file, for inputs that are not files (tests, fuzzing).
pub fn check_reader(
    name: &str,
    input: impl Read + 'static,
    format: Option<Format>,
) -> Result<FileReport, InputError> {
    check_reader_with(name, input, format, Limits::default())
}

/// [`check_reader`] with a limit on the size of one element.
pub fn check_reader_with(
    name: &str,
    input: impl Read + 'static,
    format: Option<Format>,
    limits: Limits,
) -> Result<FileReport, InputError> {
    let opened = open(Box::new(input), format)?;
    let name = name.to_string();
    match opened.detected {
        Detected::ClaudeJsonl => {
            let mut report = FileReport::new(&name, Format::ClaudeJsonl.name());
            let mut log = claude_jsonl::ClaudeJsonl::judging(opened.reader, limits);
            check_stream(&mut log, End::TurnOpen, &mut report)?;
            if report.stat("messages") == 0 {
                return Err(InputError::whole(format!(
                    "nothing to judge: none of its {} line(s) is a Claude Code message entry (\"type\": \"user\" or \"assistant\" with a \"message\"); expected a Claude Code session log, a Messages API or OpenAI chat request body or message array, a go-vcr cassette or an SSE recording",
                    log.stats.lines
                )));
            }
            report.stats.insert("lines", log.stats.lines);
            report.stats.insert("entries_skipped", log.stats.skipped);
            report
                .stats
                .insert("sidechain_skipped", log.stats.sidechain);
            report
                .stats
                .insert("sidechain_log", usize::from(log.stats.sidechain_log));
            report.stats.insert("branches", log.stats.branches);
            report.stats.insert("lines_merged", log.stats.merged);
            Ok(report)
        }
        Detected::JsonDocument => document::check(&name, opened.reader, format, limits),
        Detected::Vcr => {
            let mut report = FileReport::new(&name, Format::Vcr.name());
            vcr::check(opened.reader, limits, &mut report)?;
            Ok(report)
        }
        Detected::Vcrpy => {
            let mut report = FileReport::new(&name, Format::Vcrpy.name());
            let mut reader = opened.reader;
            let json = std::io::BufRead::fill_buf(&mut reader)
                .map(|b| b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{'))
                .map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
            if json {
                // vcrpy's JSON serializer: one document, read whole within the limit.
                let opened = Opened {
                    detected: Detected::Vcrpy,
                    reader,
                };
                let text =
                    opened.text_within(limits.max_element, "a JSON cassette (read whole)")?;
                vcr::check_json(&text, limits, &mut report)?;
            } else {
                vcr::check(reader, limits, &mut report)?;
            }
            Ok(report)
        }
        Detected::Recording => {
            let text = opened.text_within(limits.max_element, "the recording")?;
            let mut report = FileReport::new(&name, Format::Recording.name());
            response::judge_response(&text, None, None, &mut report.findings);
            report.stats.insert("responses", 1);
            Ok(report)
        }
        Detected::Unsupported(detect::RESPONSES_REQUEST) => {
            let text = opened.text_within(limits.max_element, "the request body")?;
            let mut report = FileReport::new(&name, "openai-responses");
            codex::check_responses_request(&text, &mut report)?;
            Ok(report)
        }
        Detected::Unsupported(what) => Err(detect::unsupported_error(what)),
        Detected::CodexRollout => {
            let mut report = FileReport::new(&name, Format::Codex.name());
            codex::check(opened.reader, limits, &mut report)?;
            Ok(report)
        }
        Detected::GeminiSession => {
            let mut report = FileReport::new(&name, Format::GeminiCli.name());
            let mut reader = opened.reader;
            if first_line_is_json(&mut reader)? {
                gemini_cli::check(reader, limits, &mut report)?;
            } else {
                // The whole-JSON form, pretty-printed: one document, read whole.
                let opened = Opened {
                    detected: Detected::GeminiSession,
                    reader,
                };
                let text =
                    opened.text_within(limits.max_element, "a JSON session file (read whole)")?;
                gemini_cli::check_json(&text, &mut report)?;
            }
            Ok(report)
        }
    }
}

/// Whether the buffered input opens with a line that is a whole JSON value (a JSONL
/// file, or a JSON document on one line), without consuming it.
fn first_line_is_json(reader: &mut Input) -> Result<bool, InputError> {
    let buf = std::io::BufRead::fill_buf(reader)
        .map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
    let text = String::from_utf8_lossy(buf);
    let first = text.trim_start().split('\n').next().unwrap_or("");
    Ok(serde_json::from_str::<serde_json::Value>(first).is_ok())
}

/// A file as a message stream, for `--prefix`.
type Stream = Box<dyn Iterator<Item = Result<Item, InputError>>>;

fn messages_of(
    path: &Path,
    format: Option<Format>,
    limits: Limits,
) -> Result<(Stream, Format), InputError> {
    let opened = open_path(path, format)?;
    match opened.detected {
        Detected::ClaudeJsonl => Ok((
            Box::new(claude_jsonl::ClaudeJsonl::with_limits(
                opened.reader,
                limits,
            )),
            Format::ClaudeJsonl,
        )),
        Detected::JsonDocument => {
            // Read twice, never whole: once to learn its format and the error a
            // whole load would stop at (so it is reported before any comparison),
            // then as a stream of that format.
            let format = document::format_of(opened.reader, format, limits)?;
            let file =
                File::open(path).map_err(|e| InputError::whole(format!("cannot open: {e}")))?;
            Ok((
                Box::new(prefix_stream::DocumentStream::spawn(file, format, limits)?),
                format,
            ))
        }
        Detected::Vcr
        | Detected::Vcrpy
        | Detected::Recording
        | Detected::CodexRollout
        | Detected::GeminiSession => Err(InputError::whole(
            "--prefix compares message transcripts; a cassette, a recording, a Codex rollout or a gemini-cli session is not one",
        )),
        Detected::Unsupported(what) => Err(detect::unsupported_error(what)),
    }
}

/// `--prefix A B`: B extends A, message by message, byte for byte.
pub fn check_prefix(a: &Path, b: &Path, format: Option<Format>) -> Outcome {
    check_prefix_with(a, b, format, Limits::default())
}

/// [`check_prefix`] with a limit on the size of one element.
pub fn check_prefix_with(a: &Path, b: &Path, format: Option<Format>, limits: Limits) -> Outcome {
    let mut outcome = Outcome::default();
    let (a_stream, _) = match messages_of(a, format, limits) {
        Ok(x) => x,
        Err(e) => {
            outcome.unreadable.push(unreadable(a, e));
            return outcome;
        }
    };
    let (b_stream, b_format) = match messages_of(b, format, limits) {
        Ok(x) => x,
        Err(e) => {
            outcome.unreadable.push(unreadable(b, e));
            return outcome;
        }
    };
    let mut report = FileReport::new(&b.display().to_string(), b_format.name());
    let a_name = a.display().to_string();
    report.extends = Some(a_name.clone());
    match prefix::compare(a_stream, b_stream, &a_name, &mut report) {
        Ok(()) => outcome.files.push(report),
        Err(prefix::Side::A(e)) => outcome.unreadable.push(unreadable(a, e)),
        Err(prefix::Side::B(e)) => outcome.unreadable.push(unreadable(b, e)),
    }
    outcome
}
