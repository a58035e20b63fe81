//! `--trace` shows what each request carried: the messages it adds to the one before
//! it, each with its role and an excerpt of every block, not only a message count.

use std::process::Command;

#[test]
fn a_traced_request_line_shows_the_messages_it_added() {
    let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/canary-scrubs_marker_text.json");
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(["replay", scenario.to_str().expect("utf-8 path"), "--trace"])
        .output()
        .expect("turnsim replay runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let sends: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("engine sends"))
        .collect();
    assert_eq!(sends.len(), 2, "{text}");
    assert!(
        sends[0].ends_with(
            "engine sends op#1: 1 messages, breakpoints [None, Some(0)]; new: user [\"<turn_context>⏎<now>2026-01-01T00:00:00Z+0ms</now>⏎<stance>do what the user a...\", \"prompt 1: fix the parser\"]"
        ),
        "{}",
        sends[0]
    );
    // The second request adds the reply as the planted bug sent it back (its signed
    // thinking, thinking being on for this seed, and its marker-like words scrubbed),
    // then the next prompt.
    assert!(
        sends[1].contains("new: assistant [thinking, \"§model§\"]; user ["),
        "{}",
        sends[1]
    );
}
