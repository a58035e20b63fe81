//! Standard output whose reader may leave early (`turnsim run | head`).
//!
//! Guarantee: a failed write never panics and never stops the work it reports on.
//! `print!` panics when the reader has closed the pipe ("failed printing to stdout:
//! Broken pipe", exit 101), which would replace the verdict's exit code with a crash
//! and, in `drive`, abandon client processes mid-run. Here, once a write has failed
//! nothing more is written to stdout; a reader that went away (EPIPE) is quiet, any
//! other error is said once on stderr. The command goes on and exits with its
//! verdict's code, so `| head` cannot turn unjudged seeds into a pass.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// One command's standard output; shared by reference between the threads that
/// report into it.
pub struct Stdout {
    /// The command's name, for the one line said on stderr.
    who: &'static str,
    /// Set once a write failed: nothing more is written.
    gone: AtomicBool,
}

impl Stdout {
    pub fn new(who: &'static str) -> Stdout {
        Stdout {
            who,
            gone: AtomicBool::new(false),
        }
    }

    /// Writes `text` whole (and flushes), unless an earlier write failed.
    pub fn print(&self, text: &str) {
        self.write_to(&mut std::io::stdout().lock(), text);
    }

    fn write_to(&self, w: &mut impl Write, text: &str) {
        if self.gone.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = w.write_all(text.as_bytes()).and_then(|()| w.flush())
            && !self.gone.swap(true, Ordering::SeqCst)
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!(
                "turnsim {}: writing to stdout: {e}; printing nothing more there",
                self.who
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `ok` writes, then fails every one with `kind`.
    struct Failing {
        ok: usize,
        kind: std::io::ErrorKind,
        got: Vec<u8>,
        tries: usize,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.tries += 1;
            if self.ok == 0 {
                return Err(std::io::Error::from(self.kind));
            }
            self.ok -= 1;
            self.got.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn after_a_closed_pipe_nothing_more_is_written_and_nothing_panics() {
        let out = Stdout::new("test");
        let mut w = Failing {
            ok: 1,
            kind: std::io::ErrorKind::BrokenPipe,
            got: Vec::new(),
            tries: 0,
        };
        out.write_to(&mut w, "first\n");
        assert!(!out.gone.load(Ordering::SeqCst));
        out.write_to(&mut w, "second\n");
        assert!(out.gone.load(Ordering::SeqCst));
        out.write_to(&mut w, "third\n");
        assert_eq!(w.got, b"first\n");
        assert_eq!(w.tries, 2, "the write after the failure is not tried");
    }
}
