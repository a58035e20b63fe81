//! Tool names on either side of the plausibility rule, and the spec's fixed wordings.
//!
//! Guarantee: [`plausible_tool_name`] only yields names [`is_plausible_tool_name`]
//! accepts and [`implausible_tool_name`] only names it rejects, so a property about the
//! note matcher can tell which side of the rule each name sits on without re-checking.

use super::*;

/// Names [`is_plausible_tool_name`] accepts: 1 to 128 bytes of ASCII alphanumerics and
/// `_ . : -`. Mostly short (`bash`, `fs.read_file`), sometimes at the 128-byte limit.
pub fn plausible_tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-z_]{0,11}",
        3 => "[A-Za-z0-9_.:-]{1,24}",
        1 => "[A-Za-z0-9_.:-]{125,128}",
    ]
}

/// A character that no plausible tool name contains: the ones that matter (backtick,
/// newline, carriage return, space, comma, brackets, quotes) and any other.
pub fn forbidden_name_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => select(vec![
            '`', '\n', '\r', ' ', ',', '[', ']', '(', ')', '"', '\'', '\t', '\0', '/', '\\',
            '*', 'é', '—', '✓',
        ]),
        1 => any::<char>().prop_filter("outside the name alphabet", |c| !is_name_char(*c)),
    ]
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

/// Names [`is_plausible_tool_name`] rejects: the empty name, names over 128 bytes,
/// a plausible name with one [`forbidden_name_char`] inserted, and arbitrary strings
/// that happen to be implausible. These must never be copied into a note.
pub fn implausible_tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        2 => "[a-z0-9_]{129,140}",
        6 => ("[a-z][a-z_.:-]{0,11}", forbidden_name_char(), any::<Index>())
            .prop_map(|(name, ch, at)| insert_char(&name, &at, ch)),
        2 => any::<String>().prop_filter("implausible", |s| !is_plausible_tool_name(s)),
    ]
}

/// Any tool name a model might send: three plausible to one implausible.
pub fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![3 => plausible_tool_name(), 1 => implausible_tool_name()]
}

/// One of the seven [`InterruptReason`]s.
pub fn interrupt_reason() -> impl Strategy<Value = InterruptReason> {
    select(InterruptReason::ALL.to_vec())
}

/// One of the five live [`CancelCause`]s.
pub fn cancel_cause() -> impl Strategy<Value = CancelCause> {
    select(CancelCause::ALL.to_vec())
}

/// One of [`CANCEL_PHRASES`] (the five cancel phrases and `"Canceled"`).
pub fn cancel_phrase() -> impl Strategy<Value = &'static str> {
    select(&CANCEL_PHRASES[..])
}
