//! One engine process: its pipes, a watchdog for the per-request timeout, and its
//! stderr.
//!
//! Guarantee: no call here blocks longer than the timeout plus one watchdog tick. The
//! reply is read on the caller's thread with a blocking read (no thread hop per
//! request, which would cost more than the engine's own work); a watchdog thread
//! that only reads an atomic deadline kills the process when it passes, which ends
//! the read, and the error then says "hang", not "exited". Wall-clock time decides
//! only whether a run fails with a hang; nothing else it affects reaches a trace.
//! Whatever the engine wrote to stderr is kept (the last [`STDERR_KEEP`] bytes) and
//! shown with every error.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of the engine's stderr kept for error reports.
pub const STDERR_KEEP: usize = 16 * 1024;

/// Longest excerpt of an offending line quoted in an error.
const QUOTE: usize = 600;

/// The most request bytes written ahead of their replies: one page, which every
/// Linux pipe holds even at its smallest, so a batch always fits in the pipe and
/// its write returns while the engine is still answering.
pub const BATCH_BYTES: usize = 4096;

/// How often the watchdog looks at the deadline; a hang is reported at most this
/// late.
const TICK: Duration = Duration::from_millis(50);

/// Kills the engine's process group (see `Process::start`), then the engine.
#[allow(unsafe_code)]
fn kill(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: killpg takes plain integers and touches no memory of ours; the group
        // is the one `process_group(0)` made for this child, so nothing else is hit.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

struct Shared {
    /// Milliseconds since `epoch` after which the process is killed; 0 when idle.
    deadline: AtomicU64,
    fired: AtomicBool,
    stop: AtomicBool,
    child: Mutex<Child>,
    stderr: Mutex<Vec<u8>>,
}

/// A running engine process.
pub struct Process {
    command: String,
    pid: u32,
    shared: Arc<Shared>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    epoch: Instant,
    timeout: Duration,
    line: String,
    lines_read: u64,
    /// The protocol version the engine's hello announced (1 until it is read).
    pub protocol: u32,
    watchdog: Option<JoinHandle<()>>,
    drain: Option<JoinHandle<()>>,
}

/// Splits a command line into words: whitespace separates, single and double quotes
/// group, a backslash escapes the next character outside single quotes. No shell
/// runs, so nothing else is special.
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.get_or_insert_default().push(c),
            (_, '\\') => match chars.next() {
                Some(n) => word.get_or_insert_default().push(n),
                None => return Err(format!("command {command:?} ends with a backslash")),
            },
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    if let Some(q) = quote {
        return Err(format!("command {command:?} has an unclosed {q}"));
    }
    words.extend(word);
    if words.is_empty() {
        return Err("the engine command is empty".into());
    }
    Ok(words)
}

impl Process {
    /// Starts `command` with `TURNSIM_PROTOCOL` set to the protocol version.
    pub fn start(
        command: &str,
        env: &[(String, String)],
        timeout: Duration,
    ) -> Result<Self, String> {
        let words = split_command(command)?;
        let mut cmd = Command::new(&words[0]);
        // Its own process group, so a kill reaches whatever the engine started too
        // (a wrapper script's child would otherwise hold the pipe open).
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.args(&words[1..])
            .env(
                "TURNSIM_PROTOCOL",
                super::wire::PROTOCOL_VERSION.to_string(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the engine `{command}`: {e}"))?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the engine `{command}` started without its pipes"));
        };
        let pid = child.id();
        let shared = Arc::new(Shared {
            deadline: AtomicU64::new(0),
            fired: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            child: Mutex::new(child),
            stderr: Mutex::new(Vec::new()),
        });
        let epoch = Instant::now();
        let drain = {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = stderr.read(&mut buf) {
                    let mut kept = shared.stderr.lock().unwrap_or_else(|p| p.into_inner());
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > STDERR_KEEP {
                        let cut = kept.len() - STDERR_KEEP;
                        kept.drain(..cut);
                    }
                }
            })
        };
        let watchdog = {
            let shared = shared.clone();
            std::thread::spawn(move || {
                while !shared.stop.load(Ordering::Acquire) {
                    let d = shared.deadline.load(Ordering::Acquire);
                    if d != 0 && epoch.elapsed().as_millis() as u64 > d {
                        shared.fired.store(true, Ordering::Release);
                        let mut child = shared.child.lock().unwrap_or_else(|p| p.into_inner());
                        kill(&mut child);
                        return;
                    }
                    std::thread::park_timeout(TICK);
                }
            })
        };
        Ok(Process {
            command: command.to_string(),
            pid,
            shared,
            stdin,
            stdout: BufReader::with_capacity(64 * 1024, stdout),
            epoch,
            timeout,
            line: String::new(),
            lines_read: 0,
            protocol: 1,
            watchdog: Some(watchdog),
            drain: Some(drain),
        })
    }

    /// The engine's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// True while the process has not exited (a pooled process may have died since
    /// it last answered; it is then not reused).
    pub fn is_running(&self) -> bool {
        let mut child = self.shared.child.lock().unwrap_or_else(|p| p.into_inner());
        matches!(child.try_wait(), Ok(None))
    }

    /// Sets the timeout of the following requests.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    fn arm(&self) {
        let at = (self.epoch.elapsed() + self.timeout).as_millis() as u64;
        self.shared.deadline.store(at.max(1), Ordering::Release);
    }

    fn disarm(&self) {
        self.shared.deadline.store(0, Ordering::Release);
    }

    /// Sends `request` (one line, `\n`-terminated) unless it is empty, then reads one
    /// reply line within the timeout ([`Process::last_line`]). Returns the line's
    /// 1-based number on the engine's stdout.
    pub fn exchange(&mut self, request: &str, what: &dyn std::fmt::Display) -> Result<u64, String> {
        if !request.is_empty() {
            self.send(request, what)?;
        }
        self.receive(what)
    }

    /// Writes `requests` (whole lines) in one write, within the timeout. Protocol 2
    /// lets several requests be outstanding; the caller keeps a batch within
    /// [`BATCH_BYTES`] so the write never waits on the engine, which may be busy
    /// writing replies nobody reads yet.
    pub fn send(&mut self, requests: &str, what: &dyn std::fmt::Display) -> Result<(), String> {
        self.arm();
        let sent = self
            .stdin
            .write_all(requests.as_bytes())
            .and_then(|()| self.stdin.flush());
        self.disarm();
        self.hung(what)?;
        sent.map_err(|e| self.failure(&format!("engine pipe broke while waiting for {what}: {e}")))
    }

    fn hung(&self, what: &dyn std::fmt::Display) -> Result<(), String> {
        if self.shared.fired.load(Ordering::Acquire) {
            return Err(self.failure(&format!(
                "engine hang: no reply to {what} within {} ms (the process was killed)",
                self.timeout.as_millis()
            )));
        }
        Ok(())
    }

    /// Reads one reply line within the timeout ([`Process::last_line`]); returns its
    /// 1-based number on the engine's stdout.
    pub fn receive(&mut self, what: &dyn std::fmt::Display) -> Result<u64, String> {
        self.arm();
        self.line.clear();
        let read = self.stdout.read_line(&mut self.line);
        self.disarm();
        self.hung(what)?;
        match read {
            Err(e) => {
                Err(self.failure(&format!("engine pipe broke while waiting for {what}: {e}")))
            }
            Ok(0) => {
                let status = self.exit_status();
                Err(self.failure(&format!(
                    "the engine closed its stdout instead of answering {what} ({status})"
                )))
            }
            Ok(_) => {
                self.lines_read += 1;
                if !self.line.ends_with('\n') {
                    let status = self.exit_status();
                    return Err(self.failure(&format!(
                        "line {} of the engine's stdout ends without a newline ({status})",
                        self.lines_read
                    )));
                }
                Ok(self.lines_read)
            }
        }
    }

    /// The line the last exchange read, without its newline.
    pub fn last_line(&self) -> &str {
        self.line.trim_end_matches(['\n', '\r'])
    }

    fn exit_status(&self) -> String {
        // The pipe closing and the exit are not ordered; give the exit a moment.
        let mut child = self.shared.child.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..50 {
            if let Ok(Some(status)) = child.try_wait() {
                return format!("it exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        "it is still running".into()
    }

    /// An error about line `n`: what was expected, and the line itself.
    pub fn bad_line(&self, n: u64, line: &str, expected: &str) -> String {
        let quoted: String = if line.len() > QUOTE {
            let mut end = QUOTE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}… ({} bytes)", &line[..end], line.len())
        } else {
            line.to_string()
        };
        self.failure(&format!(
            "engine protocol error at line {n} of its stdout: expected {expected}; got: {quoted}"
        ))
    }

    /// `message`, naming the engine and followed by its stderr.
    pub fn failure(&self, message: &str) -> String {
        // Let the drain thread catch up with what the engine wrote just before.
        std::thread::sleep(Duration::from_millis(5));
        let stderr = self.shared.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&stderr);
        let text = text.trim_end();
        if text.is_empty() {
            format!("{message} [engine `{}`; its stderr is empty]", self.command)
        } else {
            format!(
                "{message} [engine `{}`; its stderr (last {} bytes at most) follows]\n{text}",
                self.command, STDERR_KEEP
            )
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        {
            let mut child = self.shared.child.lock().unwrap_or_else(|p| p.into_inner());
            kill(&mut child);
            let _ = child.wait();
        }
        if let Some(w) = self.watchdog.take() {
            w.thread().unpark();
            let _ = w.join();
        }
        if let Some(d) = self.drain.take() {
            let _ = d.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_command;

    #[test]
    fn commands_split_on_whitespace_with_quotes_and_escapes() {
        assert_eq!(
            split_command(r#"python3  "my engine.py" --flag 'a b' c\ d"#).unwrap(),
            ["python3", "my engine.py", "--flag", "a b", "c d"]
        );
        assert_eq!(split_command("a ''").unwrap(), ["a", ""]);
    }

    #[test]
    fn bad_commands_are_errors() {
        assert_eq!(
            split_command("  ").unwrap_err(),
            "the engine command is empty"
        );
        assert_eq!(
            split_command("python3 'x").unwrap_err(),
            "command \"python3 'x\" has an unclosed '"
        );
    }
}
