//! A go-vcr cassette cut into its interactions, line by line, so each is parsed on
//! its own and the file is never held whole.
//!
//! Guarantees:
//! - A cut is made only where YAML itself ends an item: `interactions:` opens a
//!   block sequence, each of its items starts with `-` at the sequence's own
//!   indentation, and any item's content (block scalars included) is indented
//!   deeper, so a line at that indentation starting with `-` starts the next item,
//!   and a less indented line (or, at column 0, a key or a document marker) ends the
//!   sequence. Blank and comment lines never cut.
//! - What is not the interactions (the header and whatever follows the sequence) is
//!   kept and parsed at the end, so a file that is not YAML outside its interactions
//!   is still refused.
//! - A cassette laid out otherwise (a flow sequence `interactions: [...]`, an item
//!   that is not a `-` item) is not guessed at: it is [`Piece::Whole`], read whole,
//!   within the element limit.
//! - No line and no interaction longer than [`Limits::max_element`] is read into
//!   memory: the read stops there with an error naming the line.

use super::source::{InputError, Limits, read_line_capped, utf8};
use std::io::BufRead;

/// What the splitter hands out.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// One interaction's text (a one-item YAML sequence), with the line it starts on.
    Interaction { line: usize, text: String },
    /// A layout the splitter does not cut: the whole file's text.
    Whole(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Header,
    /// After `interactions:`, before its first item.
    Opening,
    Items(usize),
    Trailer,
}

/// The interactions of a cassette, one at a time.
pub struct Interactions<R> {
    reader: R,
    limits: Limits,
    buf: Vec<u8>,
    line: usize,
    phase: Phase,
    /// The item being gathered: its first line and text.
    item: Option<(usize, String)>,
    /// The header and trailer, for the final parse.
    outside: String,
    done: bool,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Blank, or only a comment.
fn neutral(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// `-` then a space or the end of the line, after `at` spaces.
fn starts_item(line: &str, at: usize) -> bool {
    indent(line) == at && {
        let rest = line[at..].trim_end();
        rest == "-" || rest.starts_with("- ")
    }
}

impl<R: BufRead> Interactions<R> {
    pub fn new(reader: R, limits: Limits) -> Interactions<R> {
        Interactions {
            reader,
            limits,
            buf: Vec::new(),
            line: 0,
            phase: Phase::Header,
            item: None,
            outside: String::new(),
            done: false,
        }
    }

    /// The header and trailer text, once every interaction has been handed out.
    pub fn outside(&self) -> &str {
        &self.outside
    }

    fn read_line(&mut self) -> Result<Option<String>, InputError> {
        let line = self.line + 1;
        let more = read_line_capped(&mut self.reader, &mut self.buf, self.limits.max_element)
            .map_err(|e| match e {
                Some(e) => InputError::at(line, format!("cannot read: {e}")),
                None => self.limits.exceeded(line, "the line"),
            })?;
        if !more {
            return Ok(None);
        }
        self.line = line;
        Ok(Some(
            utf8(&self.buf)
                .map_err(|e| InputError::at(line, e.message))?
                .to_string(),
        ))
    }

    fn keep_outside(&mut self, text: &str) -> Result<(), InputError> {
        if self.outside.len() + text.len() > self.limits.max_element {
            return Err(self
                .limits
                .exceeded(self.line, "the cassette outside its interactions"));
        }
        self.outside.push_str(text);
        Ok(())
    }

    /// The whole input, for a layout the splitter does not cut.
    fn whole(&mut self, read_so_far: String) -> Result<Piece, InputError> {
        let mut text = std::mem::take(&mut self.outside);
        text.push_str(&read_so_far);
        while let Some(l) = self.read_line()? {
            if text.len() + l.len() > self.limits.max_element {
                return Err(self.limits.exceeded(
                    self.line,
                    "a cassette not laid out as a block sequence of interactions (read whole)",
                ));
            }
            text.push_str(&l);
        }
        self.done = true;
        Ok(Piece::Whole(text))
    }

    /// Ends the item being gathered, if any.
    fn cut(&mut self) -> Option<Piece> {
        self.item
            .take()
            .map(|(line, text)| Piece::Interaction { line, text })
    }

    fn next_piece(&mut self) -> Result<Option<Piece>, InputError> {
        while !self.done {
            let Some(l) = self.read_line()? else {
                self.done = true;
                return Ok(self.cut());
            };
            match self.phase {
                Phase::Header => {
                    if let Some(rest) = l.strip_prefix("interactions:") {
                        if !neutral(rest) {
                            return self.whole(l).map(Some);
                        }
                        self.phase = Phase::Opening;
                    }
                    self.keep_outside(&l)?;
                }
                Phase::Opening if neutral(&l) => self.keep_outside(&l)?,
                Phase::Opening => {
                    let at = indent(&l);
                    if starts_item(&l, at) {
                        self.phase = Phase::Items(at);
                        self.item = Some((self.line, l));
                    } else if at == 0 {
                        // `interactions:` with no items: the rest is the trailer.
                        self.phase = Phase::Trailer;
                        self.keep_outside(&l)?;
                    } else {
                        return self.whole(l).map(Some);
                    }
                }
                Phase::Items(at) => {
                    if starts_item(&l, at) {
                        let done = self.cut();
                        self.item = Some((self.line, l));
                        if done.is_some() {
                            return Ok(done);
                        }
                    } else if !neutral(&l) && indent(&l) <= at {
                        self.phase = Phase::Trailer;
                        let done = self.cut();
                        self.keep_outside(&l)?;
                        if done.is_some() {
                            return Ok(done);
                        }
                    } else if let Some((start, text)) = self.item.as_mut() {
                        if text.len() + l.len() > self.limits.max_element {
                            let start = *start;
                            return Err(self.limits.exceeded(start, "the interaction"));
                        }
                        text.push_str(&l);
                    }
                }
                Phase::Trailer => self.keep_outside(&l)?,
            }
        }
        Ok(None)
    }
}

impl<R: BufRead> Iterator for Interactions<R> {
    type Item = Result<Piece, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_piece() {
            Ok(p) => p.map(Ok),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str, max: usize) -> (Vec<Result<Piece, InputError>>, String) {
        let mut it = Interactions::new(text.as_bytes(), Limits { max_element: max });
        let got = it.by_ref().collect();
        (got, it.outside().to_string())
    }

    fn item(line: usize, text: &str) -> Result<Piece, InputError> {
        Ok(Piece::Interaction {
            line,
            text: text.to_string(),
        })
    }

    #[test]
    fn items_are_cut_where_the_sequence_starts_a_new_one() {
        let text = "---\nversion: 2\ninteractions:\n- id: 0\n  request:\n    body: |+\n      - not an item\n\n- id: 1\n  request: {}\n# a comment\nafter: 1\n";
        let (got, outside) = pieces(text, 1 << 20);
        assert_eq!(
            got,
            vec![
                item(
                    4,
                    "- id: 0\n  request:\n    body: |+\n      - not an item\n\n"
                ),
                item(9, "- id: 1\n  request: {}\n# a comment\n"),
            ]
        );
        assert_eq!(outside, "---\nversion: 2\ninteractions:\nafter: 1\n");
        // Indented items, as some writers lay them out.
        let (got, _) = pieces("interactions:\n  - id: 0\n  - id: 1\nversion: 2\n", 1 << 20);
        assert_eq!(got, vec![item(2, "  - id: 0\n"), item(3, "  - id: 1\n")]);
    }

    #[test]
    fn a_flow_sequence_is_read_whole_not_cut() {
        let text = "version: 2\ninteractions: []\n";
        let (got, _) = pieces(text, 1 << 20);
        assert_eq!(got, vec![Ok(Piece::Whole(text.to_string()))]);
    }

    #[test]
    fn an_interaction_over_the_limit_is_refused_naming_its_line() {
        let text = "interactions:\n- id: 0\n- id: 1\n  request:\n    body: 0123456789\n";
        let (got, _) = pieces(text, 20);
        assert_eq!(got[0], item(2, "- id: 0\n"));
        assert_eq!(
            got[1],
            Err(InputError::at(
                3,
                "the interaction is larger than the limit of 20 bytes for one element; raise it with --max-element-mib"
            ))
        );
        assert_eq!(got.len(), 2);
    }
}
