//! The interactive mode: a client's terminal UI driven in a pseudo-terminal, where
//! users actually press Esc and Ctrl+C.
//!
//! Guarantee: an interactive invocation is the same invocation as a headless one
//! (same environment, deadline, ledger-timed interruption, survivor watch and
//! clean-up in [`super::invoke`]); only the way in and out differs. The client runs
//! as the session leader of a fresh pty (so its process group is its pid, as in
//! headless mode); the harness waits for the profile's `ready` text on the screen,
//! types the prompt and submits it, sends the scheduled key (Esc, Ctrl+C) into the
//! terminal instead of a signal, and once the client has been idle (no request, no
//! ledger line, no tool alive, and the profile's `busy` text not drawn) for [`IDLE`]
//! it types the profile's exit command. A quiet server is not a closed turn: a TUI
//! that is still thinking, retrying or cancelling draws its busy line (gemini-cli's
//! and qwen-code's "esc to cancel" spinner) and may send its next request long after
//! the last one, so while it draws that line the turn counts as open and neither the
//! exit command nor a second submit is typed into it.
//! A client that does not leave gets its terminal hung up (SIGHUP to its group) the
//! profile's `hang_up_after_ms` later ([`HANG_UP_AFTER`] unless a client is known to
//! take longer to leave), recorded as such: the harness never waits forever and
//! never calls a hang-up the client's own exit. Everything the client drew is kept
//! in `LABEL.screen`, raw, for a reader to replay with `cat`.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a client must be quiet before its turn counts as over.
pub const IDLE: Duration = Duration::from_secs(4);
/// Pause between typing text and the key that submits it (a TUI may debounce).
pub const TYPE_PAUSE: Duration = Duration::from_millis(1000);
/// A submit that brought no request in this long is sent again (at most
/// [`RESUBMITS`] times): a TUI busy taking in pasted text can swallow the key.
pub const RESUBMIT_AFTER: Duration = Duration::from_secs(8);
pub const RESUBMITS: u32 = 3;
/// After the exit command, how long before the terminal is hung up, unless the
/// profile says otherwise.
pub const HANG_UP_AFTER: Duration = Duration::from_secs(15);

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Between two presses of an interrupt key the profile asks to press more than once.
pub const KEY_REPEAT_GAP: Duration = Duration::from_millis(400);

pub(super) fn default_hang_up_ms() -> u64 {
    u64::try_from(HANG_UP_AFTER.as_millis()).unwrap_or(u64::MAX)
}

/// Screen bytes read again with each new chunk, so a busy text split across two
/// reads of the pty is still found.
const BUSY_OVERLAP: usize = 512;

/// How to drive one client's terminal UI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Terminal {
    /// Text shown once the UI accepts a prompt (compared with all whitespace and
    /// escape sequences removed, since a TUI positions words with cursor moves).
    pub ready: String,
    /// Keys that submit typed text.
    pub submit: String,
    /// Text typed (then submitted) to leave the UI once its turn is over.
    pub exit: String,
    /// Text the UI draws only while a turn is open (a spinner line it redraws many
    /// times a second, compared like `ready`): drawn within the last [`IDLE`], the
    /// turn is not over, however quiet the server and the tools are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<String>,
    /// How long after the exit command the terminal is hung up (ms).
    #[serde(default = "default_hang_up_ms")]
    pub hang_up_after_ms: u64,
    /// Files written under HOME before every start, `(relative path, content)`:
    /// first-run dialogs answered the way a returning user already answered them.
    pub home_files: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
    /// How many times the Esc interrupt is pressed, [`KEY_REPEAT_GAP`] apart: a UI
    /// that arms on the first Esc and interrupts only on a second one (opencode's
    /// "esc again to interrupt") is interrupted as its user does it. Ctrl+C is one
    /// press.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub esc_presses: u32,
    /// Only the resume runs in the terminal; the first invocation is headless (cline,
    /// whose only resume is its terminal UI). Its interruptions are signals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resume_only: bool,
}

impl Terminal {
    /// Whether the first invocation (`resume` false) or the resume runs in it.
    pub fn runs(&self, resume: bool) -> bool {
        resume || !self.resume_only
    }
}

/// What happened on the terminal, in milliseconds since the run started.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TermLog {
    /// When the `ready` text appeared.
    pub ready_ms: Option<i64>,
    /// When the prompt was submitted.
    pub prompt_ms: Option<i64>,
    /// The submit key sent again because no request followed it.
    #[serde(default)]
    pub resubmits: u32,
    /// When the turn counted as over and the exit command was typed.
    pub exit_ms: Option<i64>,
    /// When the harness hung up a client that did not leave.
    pub hung_up_ms: Option<i64>,
    /// When the profile's busy text was last seen drawn: until then (plus
    /// [`IDLE`]) the turn counted as open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_last_ms: Option<i64>,
    /// When each press of the interrupt key was typed (more than one where the
    /// terminal's `esc_presses` asks for it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_ms: Vec<i64>,
}

/// Bytes for a key interrupt.
pub fn key_bytes(esc: bool) -> &'static [u8] {
    if esc { b"\x1b" } else { b"\x03" }
}

/// The screen's text with escape sequences, control characters and whitespace
/// removed: enough to find a word a TUI drew with cursor moves between letters.
pub fn visible(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::new();
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\u{1b}' {
            if !c.is_control() && !c.is_whitespace() {
                out.push(c);
            }
            continue;
        }
        match it.next() {
            // CSI: parameters, then one final byte in @..~.
            Some('[') => {
                for d in it.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            // OSC, DCS and the other strings: up to BEL or ESC \.
            Some(']' | 'P' | 'X' | '^' | '_') => {
                while let Some(d) = it.next() {
                    if d == '\u{7}' {
                        break;
                    }
                    if d == '\u{1b}' {
                        it.next();
                        break;
                    }
                }
            }
            // Character set designations carry one more character.
            Some('(' | ')' | '*' | '+') => {
                it.next();
            }
            _ => {}
        }
    }
    out
}

/// Whether `screen[done..]` draws `want` (squeezed) once more: counted with
/// [`BUSY_OVERLAP`] bytes before `done`, against those bytes alone.
fn drawn_since(screen: &[u8], done: usize, want: &str) -> bool {
    let done = done.min(screen.len());
    if want.is_empty() || done == screen.len() {
        return false;
    }
    let from = done.saturating_sub(BUSY_OVERLAP);
    let before = visible(&screen[from..done]).matches(want).count();
    let after = visible(&screen[from..]).matches(want).count();
    after > before
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

enum State {
    Boot,
    Typed(Instant),
    Working(Instant),
    ExitTyped(Instant),
    Exiting(Instant),
    HungUp,
}

/// One client running in a pty, and where the harness is in driving it.
pub struct Session {
    pty: Arc<pty_process::blocking::Pty>,
    screen: Arc<Mutex<Vec<u8>>>,
    term: Terminal,
    prompt: String,
    state: State,
    pub log: TermLog,
    requests_at_submit: u64,
    seen: (u64, usize),
    last_change: Instant,
    /// Screen bytes already looked through for the busy text.
    scanned: usize,
    last_busy: Option<Instant>,
    /// Presses of the interrupt key still to type, and when the next one is due.
    repeat: Option<(Instant, u32)>,
}

/// Writes HOME files (a terminal's or a profile's), placeholders substituted by `sub`.
pub fn prepare_home(
    files: &[(String, String)],
    home: &Path,
    sub: impl Fn(&str) -> String,
) -> Result<(), String> {
    for (rel, content) in files {
        let path = home.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        crate::scenario::write_atomic(&path, sub(content).as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Starts `cmd` on a fresh pty; what it draws goes to `screen_file` and to memory.
pub fn spawn(
    cmd: pty_process::blocking::Command,
    term: &Terminal,
    prompt: &str,
    screen_file: &Path,
) -> Result<(std::process::Child, Session), String> {
    let (pty, pts) = pty_process::blocking::open().map_err(|e| format!("pty: {e}"))?;
    pty.resize(pty_process::Size::new(term.rows, term.cols))
        .map_err(|e| format!("pty size: {e}"))?;
    let child = cmd.spawn(pts).map_err(|e| e.to_string())?;
    let pty = Arc::new(pty);
    let screen = Arc::new(Mutex::new(Vec::new()));
    let (reader, sink) = (Arc::clone(&pty), Arc::clone(&screen));
    let mut file = std::fs::File::create(screen_file).ok();
    // The pty must be drained or a client blocks on its own output; the thread
    // ends when the last holder of the terminal's other end is gone (EIO).
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match (&*reader).read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if let Some(f) = file.as_mut() {
                        let _ = f.write_all(&buf[..n]);
                    }
                    if let Ok(mut s) = sink.lock() {
                        s.extend_from_slice(&buf[..n]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    });
    let session = Session {
        pty,
        screen,
        term: term.clone(),
        prompt: prompt.to_owned(),
        state: State::Boot,
        log: TermLog::default(),
        requests_at_submit: 0,
        seen: (0, 0),
        last_change: Instant::now(),
        scanned: 0,
        last_busy: None,
        repeat: None,
    };
    Ok((child, session))
}

impl Session {
    fn hang_up_after(&self) -> Duration {
        Duration::from_millis(self.term.hang_up_after_ms)
    }

    /// Types bytes into the terminal (a write error means the client is gone).
    pub fn keys(&self, bytes: &[u8]) {
        let _ = (&*self.pty).write_all(bytes);
        let _ = (&*self.pty).flush();
    }

    /// Types the interrupt key (Esc or Ctrl+C) now; the presses an Esc still needs
    /// (`esc_presses`) follow [`KEY_REPEAT_GAP`] apart from [`Session::step`].
    pub fn interrupt(&mut self, esc: bool, now_ms: i64) {
        self.keys(key_bytes(esc));
        self.log.key_ms.push(now_ms);
        let more = if esc {
            self.term.esc_presses.saturating_sub(1)
        } else {
            0
        };
        self.repeat = (more > 0).then(|| (Instant::now() + KEY_REPEAT_GAP, more));
    }

    fn shows(&self, text: &str) -> bool {
        let want = squeeze(text);
        self.screen
            .lock()
            .map(|s| visible(&s).contains(&want))
            .unwrap_or(false)
    }

    /// Whether the busy text was drawn since the last look: counted in the new
    /// bytes with [`BUSY_OVERLAP`] bytes before them, against those bytes alone, so a
    /// text split across two reads counts once and an old one never again.
    fn busy_drawn(&mut self) -> bool {
        let Some(busy) = self.term.busy.as_deref() else {
            return false;
        };
        let want = squeeze(busy);
        let Ok(screen) = self.screen.lock() else {
            return false;
        };
        let done = self.scanned.min(screen.len());
        self.scanned = screen.len();
        drawn_since(&screen, done, &want)
    }

    /// One step of driving, called on every tick of the invocation's loop with the
    /// server's request count, the ledger's line count and whether a tool is alive.
    /// Returns true when the harness hangs up now (the caller sends SIGHUP).
    pub fn step(&mut self, now_ms: i64, requests: u64, ledger: usize, tool_alive: bool) -> bool {
        let now = Instant::now();
        if let Some((due, left)) = self.repeat
            && now >= due
        {
            self.keys(key_bytes(true));
            self.log.key_ms.push(now_ms);
            self.repeat = (left > 1).then(|| (now + KEY_REPEAT_GAP, left - 1));
        }
        let busy = self.busy_drawn();
        if busy {
            self.last_busy = Some(now);
            self.log.busy_last_ms = Some(now_ms);
        }
        if (requests, ledger) != self.seen || tool_alive || busy {
            self.seen = (requests, ledger);
            self.last_change = now;
        }
        // A UI drawing its busy line has taken the prompt: a second submit would
        // only type into a turn that is under way.
        let busy_lately = self.last_busy.is_some_and(|t| now < t + IDLE);
        match self.state {
            State::Boot if self.shows(&self.term.ready) => {
                self.log.ready_ms = Some(now_ms);
                self.keys(self.prompt.as_bytes());
                self.state = State::Typed(now);
            }
            State::Typed(t) if now >= t + TYPE_PAUSE => {
                self.keys(self.term.submit.as_bytes());
                self.log.prompt_ms = Some(now_ms);
                self.requests_at_submit = requests;
                self.last_change = now;
                self.state = State::Working(now);
            }
            State::Working(at)
                if requests == self.requests_at_submit
                    && now >= at + RESUBMIT_AFTER
                    && !busy_lately
                    && self.log.resubmits < RESUBMITS =>
            {
                self.log.resubmits += 1;
                self.keys(self.term.submit.as_bytes());
                self.state = State::Working(now);
            }
            State::Working(_)
                if requests > self.requests_at_submit && now >= self.last_change + IDLE =>
            {
                self.log.exit_ms = Some(now_ms);
                self.keys(self.term.exit.as_bytes());
                self.state = State::ExitTyped(now);
            }
            State::ExitTyped(t) if now >= t + TYPE_PAUSE => {
                self.keys(self.term.submit.as_bytes());
                self.state = State::Exiting(now);
            }
            State::Exiting(t) if now >= t + self.hang_up_after() => {
                self.log.hung_up_ms = Some(now_ms);
                self.state = State::HungUp;
                return true;
            }
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_text_drops_escapes_controls_and_spaces() {
        let raw = b"\x1b[2J\x1b[1;1H\x1b]0;title\x07by\x1b[1Cpass \x1b(Bper\x1b[38;5;2mmissions\r\n on\x1bP1$r\x1b\\!";
        assert_eq!(visible(raw), "bypasspermissionson!");
        assert!(visible(raw).contains(&squeeze("bypass permissions on")));
    }

    #[test]
    fn a_busy_text_counts_once_when_drawn_and_never_again_when_old() {
        let want = squeeze("esc to cancel");
        let frame = b"\x1b[2K\r\x1b[36m\xe2\xa0\x8b\x1b[39m Thinking (esc to \x1b[1Ccancel, 3s)";
        let mut screen = frame.to_vec();
        assert!(drawn_since(&screen, 0, &want));
        // Nothing new, or something new without it: the old one does not count.
        assert!(!drawn_since(&screen, screen.len(), &want));
        let done = screen.len();
        screen.extend_from_slice(b"\x1b[2K\r> Type your message");
        assert!(!drawn_since(&screen, done, &want));
        // Split across two reads of the pty, inside an escape sequence: found once
        // the rest arrives, not before.
        let done = screen.len();
        screen.extend_from_slice(&frame[..20]);
        assert!(!drawn_since(&screen, done, &want));
        let done = screen.len();
        screen.extend_from_slice(&frame[20..]);
        assert!(drawn_since(&screen, done, &want));
        assert!(!drawn_since(&screen, done, ""));
    }
}
