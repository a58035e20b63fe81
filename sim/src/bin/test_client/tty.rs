//! The test client's interactive mode (`--interactive`): a minimal terminal UI for
//! `turnsim drive`'s pty mode to be tested against.
//!
//! Guarantee: like a real TUI, the terminal is in raw mode, so Esc and Ctrl+C arrive
//! as bytes, not signals. Either key, while a turn is running, interrupts it exactly
//! as SIGINT does in headless mode (the running tool's group is killed, the call
//! gets an error result), except that the client stays up and prints its prompt
//! again (`--ignore-sigint` ignores the keys too, and keeps working). With
//! `--esc-twice` an Esc only arms the interrupt (the UI draws [`ESC_AGAIN`]) and a
//! second Esc within [`ESC_WINDOW`] interrupts. A key while idle does nothing. While a turn runs, [`BUSY_LINE`] is drawn four times a second. A non-empty line is a prompt; `/exit` or Ctrl+D leaves with code 0.
//!
//! `unsafe`: `tcgetattr`/`cfmakeraw`/`tcsetattr` on standard input, which std has
//! no safe form of; each call has a SAFETY comment.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, channel};

/// A turn is running: a key interrupts it.
pub static BUSY: AtomicBool = AtomicBool::new(false);

/// The marker the harness waits for before it types.
pub const READY: &str = "turnsim-test-client> ";

/// Drawn while a turn is open, as a real TUI's spinner line.
pub const BUSY_LINE: &str = "turnsim-test-client: working (esc to cancel)";

/// Drawn when an Esc armed the interrupt (`--esc-twice`).
pub const ESC_AGAIN: &str = "esc again to interrupt";

/// How long an armed Esc waits for the second one.
const ESC_WINDOW: std::time::Duration = std::time::Duration::from_secs(2);

/// Puts standard input in raw mode (no echo, no line editing, no signals from keys).
fn raw_mode() {
    // SAFETY: a zeroed termios is a valid value to be filled by tcgetattr; fd 0 is
    // standard input; the struct outlives both calls.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut t) == 0 {
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(0, libc::TCSANOW, &t);
        }
    }
}

/// Starts reading keys: lines come out of the receiver (`None`: leave).
pub fn start(
    ignore_keys: bool,
    esc_twice: bool,
    interrupted: &'static AtomicBool,
    signal: &'static AtomicI32,
) -> Receiver<Option<String>> {
    raw_mode();
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(250));
            if BUSY.load(Ordering::SeqCst) {
                let mut out = std::io::stdout();
                let _ = write!(out, "\r\x1b[2K{BUSY_LINE}");
                let _ = out.flush();
            }
        }
    });
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut line: Vec<u8> = Vec::new();
        let mut byte = [0u8; 1];
        let mut input = std::io::stdin().lock();
        let mut armed: Option<std::time::Instant> = None;
        loop {
            let b = match input.read(&mut byte) {
                Ok(1) => byte[0],
                _ => {
                    let _ = tx.send(None);
                    return;
                }
            };
            let busy = BUSY.load(Ordering::SeqCst) && !ignore_keys;
            match b {
                0x1b if busy && esc_twice && armed.is_none_or(|t| t.elapsed() > ESC_WINDOW) => {
                    armed = Some(std::time::Instant::now());
                    let mut out = std::io::stdout();
                    let _ = write!(out, "\r\n{ESC_AGAIN}\r\n");
                    let _ = out.flush();
                }
                // 0: a key, not a signal; the client stays up.
                0x1b | 0x03 if busy => {
                    armed = None;
                    signal.store(0, Ordering::SeqCst);
                    interrupted.store(true, Ordering::SeqCst);
                }
                0x1b | 0x03 => {}
                0x04 => {
                    let _ = tx.send(None);
                    return;
                }
                b'\r' | b'\n' => {
                    let text = String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned();
                    if text.trim().is_empty() {
                        continue;
                    }
                    let done = text.trim() == "/exit";
                    if tx.send((!done).then_some(text)).is_err() || done {
                        return;
                    }
                }
                b if b >= 0x20 => line.push(b),
                _ => {}
            }
        }
    });
    rx
}

/// Shows the prompt marker.
pub fn ready() {
    let mut out = std::io::stdout();
    let _ = write!(out, "\r\n{READY}");
    let _ = out.flush();
}
