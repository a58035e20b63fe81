//! Standard base64 (RFC 4648 §4, with padding): the engine protocol's byte strings,
//! the world's image blocks and the VCR reader's binary bodies, one codec for all.
//!
//! Guarantee: `decode(encode(b)) == b` for every byte string, and anything that is not
//! standard padded base64 is an error naming the first offending character, never a
//! guess. Table-driven, four characters at a time, because every `persist` record of
//! every reply crosses the pipe in this encoding: a per-character branch chain cost
//! the harness more than the whole JSON parse of the reply.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Marks a byte that is not in the alphabet.
const INVALID: u8 = 0xFF;

/// Each byte's 6-bit value, or [`INVALID`].
const VALUES: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Standard base64 with padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    encode_into(bytes, &mut out);
    // Only alphabet bytes and '=' were pushed: always ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends standard base64 with padding to `out`: only alphabet bytes and `=`,
/// which a JSON string carries unescaped, so a reply writes them straight into
/// its line.
pub fn encode_into(bytes: &[u8], out: &mut Vec<u8>) {
    // Sized once and filled in place: pushing four bytes at a time paid a capacity
    // check per group, as much as the encoding itself.
    let start = out.len();
    out.resize(start + bytes.len().div_ceil(3) * 4, 0);
    let mut groups = out[start..].chunks_exact_mut(4);
    let mut chunks = bytes.chunks_exact(3);
    for (c, o) in (&mut chunks).zip(&mut groups) {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        o[0] = ALPHABET[(n >> 18) as usize & 63];
        o[1] = ALPHABET[(n >> 12) as usize & 63];
        o[2] = ALPHABET[(n >> 6) as usize & 63];
        o[3] = ALPHABET[n as usize & 63];
    }
    let (n, pad) = match *chunks.remainder() {
        [a] => (u32::from(a) << 16, 2),
        [a, b] => ((u32::from(a) << 16) | (u32::from(b) << 8), 1),
        _ => return,
    };
    if let Some(o) = groups.next() {
        o[0] = ALPHABET[(n >> 18) as usize & 63];
        o[1] = ALPHABET[(n >> 12) as usize & 63];
        o[2] = if pad == 2 {
            b'='
        } else {
            ALPHABET[(n >> 6) as usize & 63]
        };
        o[3] = b'=';
    }
}

/// The error for the first character of `chunk` (at `start` in the text) that is
/// not in the alphabet.
fn unexpected(chunk: &[u8], start: usize) -> String {
    let (j, &c) = chunk
        .iter()
        .enumerate()
        .find(|&(_, &c)| VALUES[c as usize] == INVALID)
        .unwrap_or((0, &chunk[0]));
    format!("base64: unexpected {:?} at {}", c as char, start + j)
}

/// Decodes standard base64 with padding; anything else is an error naming the first
/// offending character.
pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "base64 of {} characters (not a multiple of 4)",
            bytes.len()
        ));
    }
    let Some(last_start) = bytes.len().checked_sub(4) else {
        return Ok(Vec::new());
    };
    let (body, last) = bytes.split_at(last_start);
    let pad = last.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return Err(format!("base64: {pad} padding characters"));
    }
    // Sized once and filled in place, and a group checked with one test (valid
    // values are below 64, INVALID has the top bits set): a `contains` and a
    // pushed slice per group cost more than the decoding.
    let mut out = vec![0u8; body.len() / 4 * 3];
    for (k, (c, o)) in body
        .chunks_exact(4)
        .zip(out.chunks_exact_mut(3))
        .enumerate()
    {
        let v = [
            VALUES[c[0] as usize],
            VALUES[c[1] as usize],
            VALUES[c[2] as usize],
            VALUES[c[3] as usize],
        ];
        if (v[0] | v[1] | v[2] | v[3]) & !63 != 0 {
            return Err(unexpected(c, 4 * k));
        }
        let n = (u32::from(v[0]) << 18)
            | (u32::from(v[1]) << 12)
            | (u32::from(v[2]) << 6)
            | u32::from(v[3]);
        o[0] = (n >> 16) as u8;
        o[1] = (n >> 8) as u8;
        o[2] = n as u8;
    }
    let mut n = 0u32;
    for (j, &c) in last.iter().enumerate() {
        let v = if j >= 4 - pad {
            0
        } else {
            match VALUES[c as usize] {
                INVALID => return Err(unexpected(&last[j..], last_start + j)),
                v => v,
            }
        };
        n = (n << 6) | u32::from(v);
    }
    let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
    out.extend_from_slice(&three[..3 - pad]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length_and_matches_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
        }
        let all: Vec<u8> = (0..=255u8).collect();
        for len in 0..all.len() {
            assert_eq!(decode(&encode(&all[..len])).unwrap(), &all[..len]);
        }
        // Appended after what the buffer held, as a reply line writes it.
        let mut line = b"{\"bytes\":\"".to_vec();
        encode_into(b"fooba", &mut line);
        assert_eq!(line, b"{\"bytes\":\"Zm9vYmE=");
    }

    #[test]
    fn base64_rejects_bad_characters_and_lengths() {
        assert_eq!(
            decode("Zm9").unwrap_err(),
            "base64 of 3 characters (not a multiple of 4)"
        );
        assert_eq!(decode("Zm-v").unwrap_err(), "base64: unexpected '-' at 2");
        assert_eq!(
            decode("Zm9vZm9vZ\u{7f}9v").unwrap_err(),
            "base64: unexpected '\\u{7f}' at 9"
        );
        assert_eq!(
            decode("Zm9v=m9v").unwrap_err(),
            "base64: unexpected '=' at 4"
        );
        assert_eq!(decode("Z===").unwrap_err(), "base64: 3 padding characters");
        assert_eq!(
            decode("Zm9vZ=9v").unwrap_err(),
            "base64: unexpected '=' at 5"
        );
    }

    #[test]
    fn a_non_ascii_character_is_named_by_its_first_byte() {
        // 'é' is two bytes (C3 A9), so "Zmé" is four: its first byte is named.
        assert_eq!(decode("Zmé").unwrap_err(), "base64: unexpected 'Ã' at 2");
    }
}
