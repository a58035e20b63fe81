//! A simulated run's trace line, read back: its step, its virtual time, its text, and
//! the actor (lane) it is about.
//!
//! Guarantee: every line gets a lane and a place, whatever it holds. The world writes
//! `[step N t=Tms] TEXT` (`world::World::note`); a line that does not have that shape
//! (hand-edited, or written by a later version) is kept whole on the engine's lane at
//! the step and time of the line before it, never dropped and never a panic. The lane
//! is read from the words the world starts each kind of line with, and a line that
//! starts with none of them is the engine's.

/// The lanes of a simulated run, top to bottom.
pub const LANES: [&str; 6] = [
    "user / host",
    "engine",
    "provider stream",
    "tools",
    "durable log",
    "faults",
];
pub const USER: usize = 0;
pub const ENGINE: usize = 1;
pub const PROVIDER: usize = 2;
pub const TOOLS: usize = 3;
pub const LOG: usize = 4;
pub const FAULTS: usize = 5;

/// One trace line, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub step: u64,
    pub t: u64,
    pub text: String,
    /// The line had the world's shape.
    pub parsed: bool,
}

/// `[step N t=Tms] TEXT` → (N, T, TEXT).
pub fn parse(line: &str) -> Option<(u64, u64, &str)> {
    let rest = line.strip_prefix("[step")?;
    let (step, rest) = rest.split_once("t=")?;
    let step = step.trim().parse().ok()?;
    let (t, text) = rest.split_once("ms]")?;
    let t = t.trim().parse().ok()?;
    Some((step, t, text.strip_prefix(' ').unwrap_or(text)))
}

/// Every line of a trace, the unreadable ones placed after their predecessor.
pub fn read(trace: &[String]) -> Vec<Line> {
    let (mut step, mut t) = (0, 0);
    trace
        .iter()
        .map(|raw| match parse(raw) {
            Some((s, time, text)) => {
                (step, t) = (s, time);
                Line {
                    step,
                    t,
                    text: text.to_owned(),
                    parsed: true,
                }
            }
            None => Line {
                step,
                t,
                text: raw.clone(),
                parsed: false,
            },
        })
        .collect()
}

/// The lane a line's text is about.
pub fn lane(text: &str) -> usize {
    const BY_START: [(&str, usize); 16] = [
        ("user ", USER),
        ("user/host ", USER),
        ("host ", USER),
        ("prompt refused", USER),
        ("LIVENESS PHASE", USER),
        ("provider ", PROVIDER),
        ("tool result refused", ENGINE),
        ("tool ", TOOLS),
        ("log truncated", LOG),
        ("FAULT ", FAULTS),
        ("CRASH", FAULTS),
        ("engine ", ENGINE),
        ("turn ended", ENGINE),
        ("activity ", ENGINE),
        ("refused", ENGINE),
        ("", ENGINE),
    ];
    BY_START
        .iter()
        .find(|(start, _)| text.starts_with(start))
        .map_or(ENGINE, |&(_, lane)| lane)
}

/// A few words for the mark of a line worth labelling, else "".
pub fn label(text: &str) -> String {
    let word = |s: &str, n: usize| s.split_whitespace().nth(n).unwrap_or_default().to_owned();
    if let Some(rest) = text.strip_prefix("FAULT ") {
        return word(rest, 0);
    }
    if text.starts_with("CRASH") {
        return "crash".into();
    }
    if text.starts_with("engine sends ") {
        return word(text, 2).trim_end_matches(':').to_owned();
    }
    if text.starts_with("user prompt") {
        return "prompt".into();
    }
    if let Some(rest) = text.strip_prefix("turn ended: ") {
        let outcome = rest
            .split("\"outcome\":\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("ended");
        return format!("end {outcome}");
    }
    if text.starts_with("tool ") && text.contains(" starts ") {
        return word(text, 1);
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_line_reads_as_its_step_time_and_text() {
        assert_eq!(
            parse("[step   12 t=   4567ms] provider op#3 message_start"),
            Some((12, 4567, "provider op#3 message_start"))
        );
        assert_eq!(
            parse("[step 123456 t=12345678ms] x ms] y"),
            Some((123456, 12345678, "x ms] y"))
        );
    }

    #[test]
    fn lines_of_another_shape_are_not_read() {
        for bad in [
            "",
            "step 1 t=0ms] x",
            "[step x t=0ms] y",
            "[step 1 t=-3ms] y",
            "[step 1 t=0] y",
            "[step 1 0ms] y",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn an_unreadable_line_is_kept_at_the_place_of_the_line_before() {
        let trace = [
            "stray first".to_owned(),
            "[step    3 t=     20ms] user prompt \"hi\"".to_owned(),
            "garbage".to_owned(),
        ];
        let lines = read(&trace);
        assert_eq!(
            lines,
            [
                Line {
                    step: 0,
                    t: 0,
                    text: "stray first".into(),
                    parsed: false
                },
                Line {
                    step: 3,
                    t: 20,
                    text: "user prompt \"hi\"".into(),
                    parsed: true
                },
                Line {
                    step: 3,
                    t: 20,
                    text: "garbage".into(),
                    parsed: false
                },
            ]
        );
    }

    #[test]
    fn every_kind_of_world_line_lands_on_its_actors_lane() {
        for (text, want) in [
            ("user prompt \"prompt 1: fix the parser\"", USER),
            ("user/host cancels (User)", USER),
            ("host watchdog cancels silent op#4", USER),
            ("host rewinds to message 2", USER),
            ("host hands a hostile input: x", USER),
            ("host restores from a hostile log: y", USER),
            ("prompt refused: busy", USER),
            ("LIVENESS PHASE: faults off", USER),
            ("engine sends op#1: 1 messages, breakpoints []", ENGINE),
            ("engine aborts op#2", ENGINE),
            ("turn ended: {\"outcome\":\"crashed\"}", ENGINE),
            ("activity tool_started", ENGINE),
            ("refused: stale", ENGINE),
            ("tool result refused: unknown id", ENGINE),
            ("provider op#1 message_start", PROVIDER),
            ("provider refuses op#1: altered thinking", PROVIDER),
            ("tool toolu_1 (\"read_file\") starts for op#1", TOOLS),
            ("tool result op#1 toolu_1 error=false \"ok\"", TOOLS),
            ("log truncated to 10 bytes", LOG),
            ("FAULT crash (streaming)", FAULTS),
            ("CRASH (torn write keeps 0 bytes); restarting", FAULTS),
            ("something new", ENGINE),
        ] {
            assert_eq!(lane(text), want, "{text}");
        }
    }

    #[test]
    fn labels_name_the_fault_the_operation_the_tool_and_the_outcome() {
        assert_eq!(label("FAULT torn_write (tools)"), "torn_write");
        assert_eq!(
            label("engine sends op#12: 3 messages, breakpoints []"),
            "op#12"
        );
        assert_eq!(
            label("turn ended: {\"outcome\":\"crashed\"}"),
            "end crashed"
        );
        assert_eq!(
            label("tool toolu_7 (\"search\") starts for op#2"),
            "toolu_7"
        );
        assert_eq!(label("provider op#1 text_delta 0 \"x\""), "");
    }
}
