//! Where two texts first differ, and the context around it, for a violation's two
//! sides.
//!
//! Guarantee: the difference is the first byte at which the two texts differ (or the
//! end of the shorter one), moved back to a character boundary so that every slice
//! taken here is valid UTF-8 and never panics, whatever the texts hold; two equal
//! texts have no difference.

/// The first difference of two texts and the context either side of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Byte offset (the same in both texts, which agree before it).
    pub at: usize,
    /// 1-based line of that byte.
    pub line: usize,
}

/// Bytes of context shown before the difference.
pub const BEFORE: usize = 240;
/// Bytes shown from the difference on.
pub const AFTER: usize = 320;

/// The first difference, or `None` when the texts are equal.
pub fn first_difference(a: &str, b: &str) -> Option<Difference> {
    if a == b {
        return None;
    }
    let same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Both agree up to `same`, so a boundary of one is a boundary of the other.
    let mut at = same;
    while !a.is_char_boundary(at) {
        at -= 1;
    }
    let line = a[..at].bytes().filter(|&c| c == b'\n').count() + 1;
    Some(Difference { at, line })
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` around byte `at`: the context before it (with `…` when cut) and the part from
/// `at` on (cut after [`AFTER`] bytes, with `…`).
pub fn around(s: &str, at: usize) -> (String, String) {
    let at = floor(s, at);
    let from = floor(s, at.saturating_sub(BEFORE));
    let to = floor(s, at.saturating_add(AFTER));
    let mut before = String::new();
    if from > 0 {
        before.push('…');
    }
    before.push_str(&s[from..at]);
    let mut rest = s[at..to].to_owned();
    if to < s.len() {
        rest.push('…');
    }
    (before, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_difference() {
        assert_eq!(first_difference("abc", "abc"), None);
    }

    #[test]
    fn the_difference_is_the_first_differing_byte_and_its_line() {
        assert_eq!(
            first_difference("one\ntwo\nthree", "one\ntwo\nthrEe"),
            Some(Difference { at: 11, line: 3 })
        );
    }

    #[test]
    fn a_prefix_differs_where_it_ends() {
        assert_eq!(
            first_difference("abc", "abcdef"),
            Some(Difference { at: 3, line: 1 })
        );
    }

    #[test]
    fn a_difference_inside_a_character_moves_back_to_its_start() {
        // "é" is c3 a9 and "è" is c3 a8: they differ at their second byte.
        assert_eq!(
            first_difference("café", "cafè"),
            Some(Difference { at: 3, line: 1 })
        );
    }

    #[test]
    fn context_is_cut_at_character_boundaries_and_marked() {
        let s = format!("{}x{}", "é".repeat(200), "ü".repeat(200));
        let at = 400; // the `x`
        let (before, rest) = around(&s, at);
        assert!(before.starts_with('…'), "{before}");
        assert_eq!(before.trim_start_matches('…'), "é".repeat(BEFORE / 2));
        assert!(rest.starts_with('x') && rest.ends_with('…'), "{rest}");
        assert_eq!(rest.len(), 1 + 2 * ((AFTER - 1) / 2) + '…'.len_utf8());
    }

    #[test]
    fn context_of_short_texts_is_the_whole_text() {
        assert_eq!(around("abcdef", 2), ("ab".to_owned(), "cdef".to_owned()));
        assert_eq!(around("ab", 99), ("ab".to_owned(), String::new()));
    }
}
