//! `turnsim check --prefix A B`: B extends A, message by message, byte for byte.
//!
//! Guarantee: two captures of one session agree on everything the earlier one holds.
//! Both files are read as message streams in lockstep (so memory holds one message of
//! each, not two files), and message `i` of A must serialize to exactly the bytes of
//! message `i` of B. The one exception is A's last message, which may be a prefix of
//! B's by whole blocks: a log captured mid-message (one block of an assistant reply
//! written, the next not yet; some results of a parallel batch, not all) is a true
//! earlier state of the same session, not a rewrite. Window boundaries must agree too.

use super::findings::{FileReport, Finding, Place, Severity, difference};
use super::source::{InputError, Item, Located};

/// Which of the two files could not be read.
#[derive(Debug)]
pub enum Side {
    A(InputError),
    B(InputError),
}

/// True when `b` is `a` with blocks appended.
fn grows(a: &Located, b: &Located) -> bool {
    let (a, b) = (&a.message, &b.message);
    a.role == b.role
        && b.blocks().len() > a.blocks().len()
        && !a.blocks().is_empty()
        && a.blocks() == &b.blocks()[..a.blocks().len()]
}

/// Compares the message streams `a` and `b` into `report`.
pub fn compare(
    a: impl Iterator<Item = Result<Item, InputError>>,
    b: impl Iterator<Item = Result<Item, InputError>>,
    a_name: &str,
    report: &mut FileReport,
) -> Result<(), Side> {
    let mut a = a.peekable();
    let mut b = b;
    let (mut index, mut window, mut matched) = (0usize, 0usize, 0usize);
    let mut diverged = false;
    while let Some(x) = a.next() {
        let x = x.map_err(Side::A)?;
        let Some(y) = b.next() else {
            report.findings.push(Finding::new(
                Severity::Violation,
                "prefix",
                "shorter",
                Place {
                    window: Some(window),
                    message: Some(index),
                    ..Place::default()
                },
                format!("it ends before message {index}, which {a_name} has"),
            ));
            diverged = true;
            break;
        };
        let y = y.map_err(Side::B)?;
        match (x, y) {
            (Item::Message(p), Item::Message(q)) => {
                let place = Place {
                    line: Some(q.line),
                    window: Some(window),
                    message: Some(index),
                    ..Place::default()
                };
                let (pj, qj) = (p.message.to_json(), q.message.to_json());
                if pj != qj {
                    if a.peek().is_none() && grows(&p, &q) {
                        report.findings.push(Finding::new(
                            Severity::Info,
                            "prefix",
                            "last_message_grew",
                            place,
                            format!(
                                "message {index}: {a_name} ends inside it (line {}); it has {} more block(s) here",
                                p.line,
                                q.message.blocks().len() - p.message.blocks().len()
                            ),
                        ));
                    } else {
                        let (was, now) = difference(&pj, &qj);
                        report.findings.push(
                            Finding::new(
                                Severity::Violation,
                                "prefix",
                                "message_differs",
                                place,
                                format!(
                                    "message {index} differs from {a_name} (line {}): was …{}",
                                    p.line,
                                    crate::checkers::excerpt(&was)
                                ),
                            )
                            .with_excerpt(&now),
                        );
                        diverged = true;
                        break;
                    }
                }
                matched += 1;
                index += 1;
            }
            (Item::Boundary { .. }, Item::Boundary { .. }) => {
                window += 1;
                index = 0;
            }
            (_, y) => {
                let line = match y {
                    Item::Message(q) => q.line,
                    Item::Boundary { line } | Item::Branch { line, .. } => line,
                    Item::Unreadable(f) => f.place.line.unwrap_or(0),
                };
                report.findings.push(Finding::new(
                    Severity::Violation,
                    "prefix",
                    "window_differs",
                    Place {
                        line: Some(line),
                        window: Some(window),
                        message: Some(index),
                        ..Place::default()
                    },
                    format!(
                        "a compaction boundary here in one file and not in the other ({a_name})"
                    ),
                ));
                diverged = true;
                break;
            }
        }
    }
    let mut extra = 0;
    if !diverged {
        for y in b {
            if let Item::Message(_) = y.map_err(Side::B)? {
                extra += 1;
            }
        }
    }
    report.stats.insert("messages_matched", matched);
    report.stats.insert("messages_added", extra);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use turnsim_core::{Block, Message};

    fn stream(ms: &[Message]) -> Vec<Result<Item, InputError>> {
        ms.iter()
            .enumerate()
            .map(|(i, m)| Ok(Item::Message(Located::new(Arc::new(m.clone()), i + 1))))
            .collect()
    }

    fn run(a: &[Message], b: &[Message]) -> FileReport {
        let mut r = FileReport::new("b", "anthropic");
        compare(stream(a).into_iter(), stream(b).into_iter(), "a", &mut r).expect("reads");
        r
    }

    #[test]
    fn an_extension_is_clean_and_counts_what_was_added() {
        let a = [Message::user_text("go"), Message::assistant_text("ok")];
        let b = [a[0].clone(), a[1].clone(), Message::user_text("more")];
        let r = run(&a, &b);
        assert!(r.findings.kept.is_empty());
        assert_eq!(r.stat("messages_matched"), 2);
        assert_eq!(r.stat("messages_added"), 1);
    }

    #[test]
    fn a_changed_message_or_a_shorter_file_is_a_violation() {
        let a = [Message::user_text("go"), Message::assistant_text("ok")];
        let r = run(
            &a,
            &[Message::user_text("go"), Message::assistant_text("OK")],
        );
        assert_eq!(r.findings.kept[0].kind, "message_differs");
        assert_eq!(r.findings.kept[0].place.message, Some(1));
        let r = run(&a, &a[..1]);
        assert_eq!(r.findings.kept[0].kind, "shorter");
    }

    #[test]
    fn only_the_last_message_may_grow_by_whole_blocks() {
        let a = [
            Message::user_text("go"),
            Message::assistant_blocks(vec![Block::text("thinking about it")]),
        ];
        let grown =
            Message::assistant_blocks(vec![Block::text("thinking about it"), Block::text("done")]);
        let r = run(&a, &[a[0].clone(), grown.clone()]);
        assert_eq!(r.findings.violations, 0);
        assert_eq!(r.findings.kept[0].kind, "last_message_grew");
        let a2 = [a[1].clone(), Message::user_text("x")];
        let r = run(&a2, &[grown, Message::user_text("x")]);
        assert_eq!(r.findings.kept[0].kind, "message_differs");
    }
}
