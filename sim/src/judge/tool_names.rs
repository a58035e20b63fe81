//! The judge's own rule for which tool names a tool-in-flight note copies, from the
//! words of docs/spec.md §5: "1 to 128 bytes, every byte an ASCII letter or digit or
//! one of `_` `.` `:` `-`"; any other name is written `(an unrecognised tool)`.
//!
//! Guarantee: decided here from those words alone, sharing no code with the engine's
//! `turnsim_core::note::is_plausible_tool_name`. While the judge asked the engine's
//! function, a rule broken to refuse every name (mutants 39 and 87 of docs/mutants.md)
//! made the engine write `(an unrecognised tool)` for `run_shell` and the judge expect
//! exactly that.

/// The longest name a note copies, in bytes (the spec's 128).
const LONGEST: usize = 128;

/// Whether a note copies `name` as it is (the spec's plausible tool name).
pub fn copied_into_note(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= LONGEST
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_letters_digits_and_the_four_marks_up_to_128_bytes_are_copied() {
        assert!(copied_into_note("run_shell"));
        assert!(copied_into_note("a"));
        assert!(copied_into_note("host.read_file:v2-x"));
        assert!(copied_into_note(&"n".repeat(128)));
    }

    #[test]
    fn empty_long_spaced_quoted_and_non_ascii_names_are_not_copied() {
        for name in ["", "run shell", "rm`-rf`", "line\nbreak", "a,b", "é", "a/b"] {
            assert!(!copied_into_note(name), "{name:?}");
        }
        assert!(!copied_into_note(&"n".repeat(129)));
    }

    /// Agreement with the reference engine's rule on every byte and on the length
    /// bounds: the spec states one rule. A test only, never a verdict's source.
    #[test]
    fn the_judges_rule_agrees_with_the_reference_engines_on_every_byte() {
        for b in 0..=255u8 {
            let name = String::from_utf8_lossy(&[b'x', b]).into_owned();
            assert_eq!(
                copied_into_note(&name),
                turnsim_core::note::is_plausible_tool_name(&name),
                "byte {b}"
            );
        }
        for len in [0, 1, 127, 128, 129] {
            let name = "a".repeat(len);
            assert_eq!(
                copied_into_note(&name),
                turnsim_core::note::is_plausible_tool_name(&name)
            );
        }
    }
}
