//! JSON string escaping with exactly serde_json's output, eight bytes at a time.
//!
//! Guarantee: `write_str(out, s)` appends the same bytes as `serde_json::to_string(s)`:
//! `"` and `\` escaped with a backslash, `\b \f \n \r \t` by name, every other byte
//! below 0x20 as `\u00xx` with lowercase hex, and nothing else escaped (DEL, non-ASCII
//! and U+2028/U+2029 pass through). The log's bytes and every digest over them depend on
//! this, so `tests/json_writer.rs` compares it with serde_json on every byte value.
//!
//! Why: the durable log escapes every string of every record on each engine step, and
//! serde_json's escaper looks at one byte per iteration. Most strings there are short
//! (keys, ids, tool names) and need no escape at all, so the common path asks once, a
//! whole `u64` at a time, whether any byte is below 0x20, `"` or `\`, and copies the
//! string as one slice; only the rare string that needs escapes is walked byte by byte.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bit 7 of each byte of `w` that is a zero byte, plus possibly bits above the lowest
/// one (a borrow only propagates upwards from a real zero), so the lowest set bit always
/// marks a real zero byte and the mask is nonzero exactly when one exists.
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// The bytes of `w` (little-endian: lowest byte first in the string) that JSON escapes,
/// with the same lowest-bit exactness as [`zero_bytes`]. A byte below 0x20 is the only
/// one whose subtraction of 0x20 borrows without its bit 7 being set beforehand.
#[inline(always)]
fn special_bytes(w: u64) -> u64 {
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    control | zero_bytes(w ^ (ONES * u64::from(b'"'))) | zero_bytes(w ^ (ONES * u64::from(b'\\')))
}

#[inline(always)]
fn is_special(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn half_at(bytes: &[u8], at: usize) -> u64 {
    let mut half = [0u8; 4];
    half.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(half))
}

/// Whether any byte of `bytes` must be escaped. Exact, and cheap for the short strings
/// that dominate a log (keys, ids, names): every byte is looked at as part of a word,
/// the last word or half-word overlapping the one before rather than falling back to a
/// byte loop. Overlap only repeats bytes, which cannot change whether one is special.
#[inline(always)]
fn has_special(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            if special_bytes(word_at(bytes, at)) != 0 {
                return true;
            }
            at += 8;
        }
        return special_bytes(word_at(bytes, n - 8)) != 0;
    }
    let word = if n >= 4 {
        half_at(bytes, 0) | (half_at(bytes, n - 4) << 32)
    } else {
        // 0 to 3 bytes, padded with spaces (never special).
        let mut word = [b' '; 8];
        for (slot, &b) in word.iter_mut().zip(bytes) {
            *slot = b;
        }
        u64::from_le_bytes(word)
    };
    special_bytes(word) != 0
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_escape(out: &mut String, b: u8) {
    let named = match b {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        0x08 => "\\b",
        0x0c => "\\f",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0x0f)]));
            return;
        }
    };
    out.push_str(named);
}

/// Appends `s` as a quoted JSON string.
#[inline]
pub fn write_str(out: &mut String, s: &str) {
    if has_special(s.as_bytes()) {
        write_escaped(out, s);
        return;
    }
    out.reserve(s.len() + 2);
    out.push('"');
    out.push_str(s);
    out.push('"');
}

/// The rare string that needs escapes (about one in a hundred in a simulated log, but
/// those are the long texts): unescaped runs are skipped a word at a time and copied
/// whole, escapes written one by one.
#[cold]
#[inline(never)]
fn write_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 8);
    out.push('"');
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Whole words without a special byte are skipped; in a word holding one, the
        // lowest set bit of its mask marks the first special byte exactly
        // ([`special_bytes`]), so the bytes before it are skipped at once.
        if at + 8 <= bytes.len() {
            let mask = special_bytes(word_at(bytes, at));
            if mask == 0 {
                at += 8;
                continue;
            }
            at += (mask.trailing_zeros() / 8) as usize;
        }
        let b = bytes[at];
        if is_special(b) {
            // `b` is ASCII, so both ends of the run fall on character boundaries.
            out.push_str(&s[run..at]);
            push_escape(out, b);
            run = at + 1;
        }
        at += 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = String::new();
        write_str(&mut out, s);
        out
    }

    #[test]
    fn every_single_byte_string_escapes_as_serde_json_does() {
        for c in (0u32..0x800).filter_map(char::from_u32) {
            let s = c.to_string();
            assert_eq!(escaped(&s), serde_json::to_string(&s).expect("a string"));
        }
    }

    #[test]
    fn a_special_byte_at_every_offset_of_every_short_length_is_escaped() {
        for len in 0..=24 {
            let plain = "a".repeat(len);
            assert_eq!(escaped(&plain), format!("\"{plain}\""), "length {len}");
            for at in 0..len {
                for special in [0u8, 0x1f, b'"', b'\\', b'\n'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    let s = String::from_utf8(bytes).expect("ascii");
                    assert_eq!(escaped(&s), serde_json::to_string(&s).expect("a string"));
                }
            }
        }
    }

    #[test]
    fn bytes_just_outside_the_escaped_ranges_pass_through() {
        let s = " !#[]^\u{7f}\u{80}\u{ff}\u{2028}\u{2029}\u{1f980}~";
        assert_eq!(escaped(s), format!("\"{s}\""));
    }
}
