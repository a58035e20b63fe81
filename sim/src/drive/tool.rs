//! The scripted tool a driven client runs, and the timestamped ledger it writes.
//!
//! Guarantee: every tool call leaves evidence a maintainer can check without
//! trusting the harness: a `start` line when it begins, an `effect` line (and an
//! effect file) once its whole duration has passed, and a `finish` line, each with
//! a monotonic timestamp and the shell's pid, process group, session and parent.
//! The timestamp is `CLOCK_BOOTTIME` in milliseconds as `/proc/uptime` gives it
//! (10 ms resolution), the same clock [`super::procs::boot_ms`] reads, so a tool's
//! lines and the harness's own events (signal sent, client exited) are on one axis
//! even when the tool outlives the client. The duration is long by default (longer
//! than a client takes to exit) so that an orphaned tool shows its effect instead
//! of being cut short; the harness waits for it before cleaning up.
//!
//! The script is POSIX `sh` with `cat` and `sleep`, nothing else, so it runs under
//! any client's shell tool; a ledger line that does not parse is skipped, never
//! guessed at.

use std::path::Path;

/// Default duration of one scripted tool call, in milliseconds: longer than any
/// client measured takes to exit after a signal, so an orphan's effect is seen.
pub const DEFAULT_TOOL_MS: u32 = 6000;

/// The script `sh SCRIPT ID LEDGER MS` runs (see [`crate::serve::tools::script_command`]).
pub const SCRIPT: &str = r#"# turnsim drive tool: sh THIS ID LEDGER MS
id=$1 ledger=$2 ms=$3
now() { read -r up rest < /proc/uptime; echo "${up%.*}${up#*.}0"; }
set -- $(cat /proc/$$/stat)
who="pid=$1 pgid=$5 sid=$6 ppid=$4"
echo "start $id t=$(now) $who" >> "$ledger"
echo "pid $id $1" >> "$ledger"
sleep $((ms / 1000)).$(printf %03d $((ms % 1000)))
echo "turnsim effect of $id" > "$ledger.effect.$id"
echo "effect $id t=$(now) $who" >> "$ledger"
echo "finish $id t=$(now) $who" >> "$ledger"
echo "turnsim ran $id"
"#;

/// Writes the script to `path`.
pub fn write_script(path: &Path) -> Result<(), String> {
    std::fs::write(path, SCRIPT).map_err(|e| format!("{}: {e}", path.display()))
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Start,
    Effect,
    Finish,
}

/// One timestamped ledger line.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    pub kind: Kind,
    pub id: String,
    /// `CLOCK_BOOTTIME` in ms, as the tool read it.
    pub boot_ms: u64,
    pub pid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub ppid: i32,
}

/// Parses one ledger line; `None` for the `pid` lines and anything else.
pub fn parse_line(line: &str) -> Option<Event> {
    let mut words = line.split_whitespace();
    let kind = match words.next()? {
        "start" => Kind::Start,
        "effect" => Kind::Effect,
        "finish" => Kind::Finish,
        _ => return None,
    };
    let id = words.next()?.to_owned();
    let mut field = |name: &str| -> Option<i64> {
        words
            .next()?
            .strip_prefix(name)?
            .strip_prefix('=')?
            .parse()
            .ok()
    };
    let boot_ms = u64::try_from(field("t")?).ok()?;
    let pid = i32::try_from(field("pid")?).ok()?;
    let pgid = i32::try_from(field("pgid")?).ok()?;
    let sid = i32::try_from(field("sid")?).ok()?;
    let ppid = i32::try_from(field("ppid")?).ok()?;
    Some(Event {
        kind,
        id,
        boot_ms,
        pid,
        pgid,
        sid,
        ppid,
    })
}

/// Every event of a ledger's lines, in order.
pub fn events(lines: &[String]) -> Vec<Event> {
    lines.iter().filter_map(|l| parse_line(l)).collect()
}

/// The ids of the calls whose `start` line is among `lines`, in start order.
pub fn started(lines: &[String]) -> Vec<String> {
    events(lines)
        .into_iter()
        .filter(|e| e.kind == Kind::Start)
        .map(|e| e.id)
        .collect()
}

/// The ledger file's events (a missing file has none).
pub fn read(path: &Path) -> Vec<Event> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(parse_line).collect()
}

/// Calls started and not finished, in start order.
pub fn running(events: &[Event]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in events {
        match e.kind {
            Kind::Start => out.push(e.id.clone()),
            Kind::Finish => out.retain(|x| *x != e.id),
            Kind::Effect => {}
        }
    }
    out
}

/// The first event of `kind` for call `id`.
pub fn find<'a>(events: &'a [Event], id: &str, kind: Kind) -> Option<&'a Event> {
    events.iter().find(|e| e.id == id && e.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn a_line_with_every_field_parses_and_anything_else_is_skipped() {
        let e = parse_line("effect toolu_1 t=123450 pid=7 pgid=6 sid=5 ppid=4");
        assert_eq!(
            e,
            Some(Event {
                kind: Kind::Effect,
                id: "toolu_1".into(),
                boot_ms: 123_450,
                pid: 7,
                pgid: 6,
                sid: 5,
                ppid: 4
            })
        );
        assert_eq!(parse_line("pid toolu_1 7"), None);
        assert_eq!(parse_line("start toolu_1"), None);
        assert_eq!(
            parse_line("start toolu_1 t=x pid=7 pgid=6 sid=5 ppid=4"),
            None
        );
    }

    #[test]
    fn the_script_writes_start_effect_finish_with_its_own_ids_and_a_clock_that_advances() {
        let dir = std::env::temp_dir().join(format!("turnsim-tool-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let script = dir.join("tool.sh");
        let ledger = dir.join("ledger");
        write_script(&script).expect("script written");
        let out = Command::new("sh")
            .arg(&script)
            .args(["toolu_9", &ledger.display().to_string(), "250"])
            .output()
            .expect("sh runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "turnsim ran toolu_9\n"
        );
        let ev = read(&ledger);
        let kinds: Vec<Kind> = ev.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::Start, Kind::Effect, Kind::Finish]);
        assert!(ev.iter().all(|e| e.id == "toolu_9" && e.pid == ev[0].pid));
        assert!(ev[1].boot_ms >= ev[0].boot_ms + 240, "{ev:?}");
        assert!(dir.join("ledger.effect.toolu_9").is_file());
        assert!(running(&ev).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
