//! Exit statuses in words: a code or a killing signal, with what it conventionally
//! means (`143 = 128 + SIGTERM`).
//!
//! Guarantee: every status has a wording, an unknown one included, so a report never
//! prints a bare number where a reader needs the cause.

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// An exit code or a killing signal, in words (`143 = 128 + SIGTERM`).
pub fn explain_exit(code: Option<i32>, killed_by: Option<i32>) -> String {
    match (code, killed_by) {
        (_, Some(s)) => format!(
            "killed by signal {s}{}",
            signal_name(s).map_or(String::new(), |n| format!(" ({n})"))
        ),
        (Some(0), _) => "exit 0: success".to_owned(),
        (Some(1), _) => "exit 1: a generic error".to_owned(),
        (Some(126), _) => "exit 126: found but not executable".to_owned(),
        (Some(127), _) => "exit 127: command not found".to_owned(),
        (Some(c), _) if c > 128 => match signal_name(c - 128) {
            Some(n) => format!(
                "exit {c} = 128 + {}: the conventional code after {n}",
                c - 128
            ),
            None => format!("exit {c}"),
        },
        (Some(c), _) => format!("exit {c}"),
        (None, None) => "no exit status".to_owned(),
    }
}
