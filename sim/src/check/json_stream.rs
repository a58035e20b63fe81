//! A JSON document (an array of messages, or a request body holding `messages`) read
//! one message at a time.
//!
//! Guarantees:
//! - Bounded memory: the document is parsed from a reader, never held whole; only
//!   the message being read is in memory (as raw text, handed to the caller and
//!   dropped), and other fields of a request body are skipped without being kept.
//!   A message longer than [`Limits::max_element`] stops the read as soon as it
//!   passes the limit, with an error naming the message, its line and the limit.
//! - The same document errors as a whole-text parse: syntax errors, a wrong type for
//!   `messages`, a missing or doubled `messages` field and trailing characters are
//!   serde_json's own, with the line it saw them on and the path (`[3]`,
//!   `messages[3]`) the path-tracking parse names.
//! - Each message keeps the line where it starts: bytes are counted as the parser
//!   consumes them, and it has consumed exactly up to a message's first byte when it
//!   hands the message over.

use super::source::{InputError, Limits};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::cell::Cell;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// One message of the document, unparsed.
pub struct Element {
    /// Its index in the array.
    pub index: usize,
    /// The line where it starts.
    pub line: usize,
    pub raw: Box<RawValue>,
}

/// Where the parser is, for naming a path in errors and enforcing the limit.
#[derive(Default)]
struct Position {
    bytes: Cell<u64>,
    newlines: Cell<usize>,
    /// The byte count the current message may not pass.
    limit: Cell<Option<u64>>,
    /// The read stopped at the limit.
    over: Cell<bool>,
    /// Inside the value of a body's `messages`.
    in_messages: Cell<bool>,
    /// The message being read: its index and line.
    element: Cell<Option<(usize, usize)>>,
}

/// The reader the parser pulls from: counts lines and stops a message at the limit.
/// The parser asks for one byte at a time, so that path is kept to a few
/// instructions over a buffer of its own.
struct Counted<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    at: Rc<Position>,
}

impl<R: Read> Counted<R> {
    fn new(inner: R, at: Rc<Position>) -> Counted<R> {
        Counted {
            inner,
            buf: vec![0; 64 << 10].into_boxed_slice(),
            pos: 0,
            len: 0,
            at,
        }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.pos == self.len {
            self.len = self.inner.read(&mut self.buf)?;
            self.pos = 0;
            if self.len == 0 {
                return Ok(0);
            }
        }
        let bytes = self.at.bytes.get();
        if self.at.limit.get().is_some_and(|limit| bytes >= limit) {
            self.at.over.set(true);
            return Err(io::Error::other("a message over the element limit"));
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        out[0] = b;
        self.at.bytes.set(bytes + 1);
        if b == b'\n' {
            self.at.newlines.set(self.at.newlines.get() + 1);
        }
        Ok(1)
    }
}

/// Skips a byte-order mark and leading whitespace; the first byte of the document.
fn first_byte(reader: &mut impl BufRead, at: &Position) -> io::Result<Option<u8>> {
    let buf = reader.fill_buf()?;
    if buf.starts_with(b"\xef\xbb\xbf") {
        reader.consume(3);
    }
    loop {
        let buf = reader.fill_buf()?;
        let Some(&b) = buf.first() else {
            return Ok(None);
        };
        if !b.is_ascii_whitespace() {
            return Ok(Some(b));
        }
        if b == b'\n' {
            at.newlines.set(at.newlines.get() + 1);
        }
        reader.consume(1);
    }
}

/// Reads the messages of the document in `reader`, calling `each` on every one in
/// order. Returns whether the document is a request body (rather than a bare array).
pub fn for_each_message<R: BufRead>(
    mut reader: R,
    limits: Limits,
    each: &mut dyn FnMut(Element),
) -> Result<bool, InputError> {
    let at = Rc::new(Position::default());
    let first =
        first_byte(&mut reader, &at).map_err(|e| InputError::whole(format!("cannot read: {e}")))?;
    let body = match first {
        Some(b'[') => false,
        Some(b'{') => true,
        _ => {
            return Err(InputError::at(
                1,
                "expected a JSON array of messages or a request body object",
            ));
        }
    };
    let counted = Counted::new(reader, Rc::clone(&at));
    let mut de = serde_json::Deserializer::from_reader(counted);
    let max = limits.max_element as u64;
    let result = if body {
        de::Deserializer::deserialize_map(&mut de, BodyVisitor { at: &at, max, each })
    } else {
        de::Deserializer::deserialize_seq(&mut de, ArrayVisitor { at: &at, max, each })
    };
    let result = result.and_then(|()| de.end());
    match result {
        Ok(()) => Ok(body),
        Err(_) if at.over.get() => {
            let (index, line) = at.element.get().unwrap_or((0, 1));
            Err(limits.exceeded(line, &format!("message {index}")))
        }
        Err(e) => {
            let path = match (at.element.get(), at.in_messages.get()) {
                (Some((i, _)), true) => format!("messages[{i}]: "),
                (Some((i, _)), false) => format!("[{i}]: "),
                (None, true) => "messages: ".to_string(),
                (None, false) => String::new(),
            };
            // Where the parser stopped is said once, as the line and column.
            Err(InputError {
                line: Some(e.line().max(1)),
                column: (e.line() > 0).then(|| e.column()),
                message: format!("{path}{}", super::source::without_position(&e)),
            })
        }
    }
}

struct ArrayVisitor<'a> {
    at: &'a Position,
    max: u64,
    each: &'a mut dyn FnMut(Element),
}

impl<'de> Visitor<'de> for ArrayVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(ElementSeed {
                at: self.at,
                max: self.max,
                index,
                each: &mut *self.each,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }
}

struct ElementSeed<'a, 'b> {
    at: &'a Position,
    max: u64,
    index: usize,
    each: &'b mut dyn FnMut(Element),
}

impl<'de> DeserializeSeed<'de> for ElementSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // The parser has consumed the message's first byte, and nothing after it.
        let line = self.at.newlines.get() + 1;
        self.at.element.set(Some((self.index, line)));
        // One byte of slack: a bare number is only known to end at the next byte.
        self.at.limit.set(Some(self.at.bytes.get() + self.max + 1));
        let raw = <Box<RawValue> as serde::Deserialize>::deserialize(d)?;
        self.at.limit.set(None);
        self.at.element.set(None);
        (self.each)(Element {
            index: self.index,
            line,
            raw,
        });
        Ok(())
    }
}

struct BodyVisitor<'a> {
    at: &'a Position,
    max: u64,
    each: &'a mut dyn FnMut(Element),
}

impl<'de> Visitor<'de> for BodyVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a request body object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key != "messages" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            if seen {
                return Err(de::Error::duplicate_field("messages"));
            }
            seen = true;
            self.at.in_messages.set(true);
            map.next_value_seed(MessagesSeed(ArrayVisitor {
                at: self.at,
                max: self.max,
                each: &mut *self.each,
            }))?;
            self.at.in_messages.set(false);
        }
        if !seen {
            return Err(de::Error::missing_field("messages"));
        }
        Ok(())
    }
}

struct MessagesSeed<'a>(ArrayVisitor<'a>);

impl<'de> DeserializeSeed<'de> for MessagesSeed<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message read: its index, line and text.
    type Got = Vec<(usize, usize, String)>;

    fn read(text: &str, max: usize) -> Result<(bool, Got), InputError> {
        let mut got = Vec::new();
        let body = for_each_message(
            text.as_bytes(),
            Limits { max_element: max },
            &mut |e: Element| got.push((e.index, e.line, e.raw.get().to_string())),
        )?;
        Ok((body, got))
    }

    #[test]
    fn messages_arrive_one_by_one_with_their_lines() {
        let text = "\u{feff}\n[\n  {\"role\":\"user\",\"content\":\"a\"},\n\n  {\"role\":\n\"assistant\"}\n]\n";
        let (body, got) = read(text, 1 << 20).expect("reads");
        assert!(!body);
        assert_eq!(
            got,
            vec![
                (0, 3, r#"{"role":"user","content":"a"}"#.to_string()),
                (1, 5, "{\"role\":\n\"assistant\"}".to_string()),
            ]
        );
        let text = "{\"system\": [{\"text\": \"s\"}],\n \"messages\": [\n{\"role\":\"user\"}], \"max_tokens\": 5}";
        let (body, got) = read(text, 1 << 20).expect("reads");
        assert!(body);
        assert_eq!(got, vec![(0, 3, r#"{"role":"user"}"#.to_string())]);
    }

    #[test]
    fn a_document_larger_than_the_limit_in_total_reads_when_each_message_fits() {
        let one = r#"{"role":"user","content":"0123456789"}"#;
        let text = format!("[{}]", vec![one; 1000].join(",\n"));
        assert!(text.len() > 30 * one.len());
        let (_, got) = read(&text, one.len()).expect("each message fits");
        assert_eq!(got.len(), 1000);
        assert_eq!(got[999].1, 1000);
    }

    #[test]
    fn a_message_over_the_limit_is_refused_naming_it_and_the_limit() {
        let text = "[{\"role\":\"user\"},\n{\"role\":\"user\",\"content\":\"0123456789\"}]";
        let e = read(text, 20).expect_err("over the limit");
        assert_eq!(
            e,
            InputError::at(
                2,
                "message 1 is larger than the limit of 20 bytes for one element; raise it with --max-element-mib"
            )
        );
    }

    #[test]
    fn document_errors_name_the_path_and_line() {
        let e = read("[{\"role\":\"user\"},\n{\"role\": }]", 1 << 20).expect_err("syntax");
        assert_eq!(e.line, Some(2));
        assert!(e.message.starts_with("[1]: expected value"), "{e}");
        let e = read("{\"messages\": 3}", 1 << 20).expect_err("not an array");
        assert!(
            e.message
                .starts_with("messages: invalid type: integer `3`, expected a sequence"),
            "{e}"
        );
        let e = read("{\"model\": \"m\"}", 1 << 20).expect_err("no messages");
        assert!(e.message.starts_with("missing field `messages`"), "{e}");
        let e = read("[] x", 1 << 20).expect_err("trailing");
        assert!(e.message.starts_with("trailing characters"), "{e}");
        let e = read("nope", 1 << 20).expect_err("not JSON");
        assert_eq!(
            e.message,
            "expected a JSON array of messages or a request body object"
        );
    }
}
