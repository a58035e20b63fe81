//! A JSON document as a pull stream of messages, for `check --prefix`.
//!
//! Guarantees:
//! - Bounded memory: the document is parsed from the file as a stream
//!   ([`super::json_stream`]) and its messages are handed over one at a time through a
//!   channel of two slots, so at most a few messages (each within [`Limits`]) are in
//!   memory, never the file. `--prefix` compares two files in lockstep, and the JSON
//!   parser pushes messages to a callback; two push parsers cannot be stepped in
//!   lockstep on one thread, so each document is parsed on a thread of its own. Order
//!   is the channel's, so the output does not depend on thread timing.
//! - The messages of a whole-document load: the format is the one [`format_of`]
//!   chose on a first read (the caller's, before this stream exists), and each
//!   message is loaded as that format loads it (`parse_raw` for Anthropic, the
//!   OpenAI [`Mapper`]), with the line the parser saw it start on.
//! - No work after the comparison stops: dropping the stream stops the parser at its
//!   next read and joins its thread.
//!
//! [`format_of`]: super::document::format_of

use super::Format;
use super::anthropic::parse_raw;
use super::json_stream::{Element, for_each_message};
use super::openai::Mapper;
use super::source::{InputError, Item, Limits, Located};
use std::io::{self, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use turnsim_core::Message;

type Sent = Result<Item, InputError>;

/// The messages of one JSON document, read on a thread of their own.
pub struct DocumentStream {
    items: Option<Receiver<Sent>>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

/// A reader that fails once `stop` is set, so a parser whose messages are no longer
/// wanted ends at its next read instead of reading the rest of the file.
struct Stoppable<R> {
    inner: R,
    stop: Arc<AtomicBool>,
}

impl<R: Read> Read for Stoppable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(io::Error::other("the comparison stopped"));
        }
        self.inner.read(buf)
    }
}

impl DocumentStream {
    /// Streams the document in `input`, read as `format` (Anthropic or OpenAI). An
    /// error, not a panic, when the system cannot start the reader's thread.
    pub fn spawn(
        input: impl Read + Send + 'static,
        format: Format,
        limits: Limits,
    ) -> Result<Self, InputError> {
        let (tx, rx) = sync_channel(2);
        let stop = Arc::new(AtomicBool::new(false));
        let reader = BufReader::new(Stoppable {
            inner: input,
            stop: Arc::clone(&stop),
        });
        let worker = std::thread::Builder::new()
            .name("check-prefix-reader".to_owned())
            .spawn(move || read(reader, format == Format::OpenAi, limits, &tx))
            .map_err(|e| InputError::whole(format!("cannot start a reader thread: {e}")))?;
        Ok(DocumentStream {
            items: Some(rx),
            stop,
            worker: Some(worker),
        })
    }
}

/// The parser's side: sends every message, then at most one error, and stops at the
/// first error or when the receiver is gone.
fn read(reader: impl io::BufRead, openai: bool, limits: Limits, tx: &SyncSender<Sent>) {
    let mut mapper = Mapper::default();
    let mut out: Vec<Located> = Vec::new();
    // Set once nothing more is to be sent: an error was, or nobody listens.
    let mut done = false;
    let send_all = |out: &mut Vec<Located>, done: &mut bool| {
        for m in out.drain(..) {
            if tx.send(Ok(Item::Message(m))).is_err() {
                *done = true;
                return;
            }
        }
    };
    let mut each = |e: Element| {
        if done {
            return;
        }
        let loaded = if openai {
            mapper.push(e.index, e.line, &e.raw, &mut out)
        } else {
            parse_raw::<Message>(&e.raw, e.line, e.index)
                .map(|m| out.push(Located::new(Arc::new(m), e.line)))
        };
        send_all(&mut out, &mut done);
        if let Err(error) = loaded {
            let _ = tx.send(Err(error));
            done = true;
        }
    };
    let result = for_each_message(reader, limits, &mut each);
    if done {
        return;
    }
    match result {
        Ok(_) => {
            mapper.finish(&mut out);
            send_all(&mut out, &mut done);
        }
        Err(error) => {
            let _ = tx.send(Err(error));
        }
    }
}

impl Iterator for DocumentStream {
    type Item = Sent;

    fn next(&mut self) -> Option<Sent> {
        match self.items.as_ref()?.recv() {
            Ok(item) => Some(item),
            Err(_) => {
                // The parser's thread is gone. It sends an error before it ends on
                // one, so this is the end of the document, unless the thread
                // panicked: then the end is not the document's, and saying so is
                // the only answer that is not a wrong verdict.
                self.items = None;
                let panicked = self.worker.take().is_some_and(|w| w.join().is_err());
                panicked.then(|| {
                    Err(InputError::whole(
                        "the reader of this document stopped before its end (an internal error)",
                    ))
                })
            }
        }
    }
}

impl Drop for DocumentStream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Hang up first: a parser blocked on a full channel then wakes with an error.
        self.items = None;
        if let Some(worker) = self.worker.take() {
            // The comparison is over; how the stopped parser ended changes nothing.
            let _ = worker.join();
        }
    }
}
