//! The judge's own digest of the cached prefix (`system` + `tools`), as docs/spec.md
//! §8 defines it: BLAKE3, in lowercase hex, of the JSON object
//! `{"system":…,"tools":[{"name":…,"description":…,"input_schema":…},…]}` written
//! compactly, keys in that order, each schema's keys in the order the map holds them.
//!
//! Guarantee: computed from the bytes alone, with a serializer and a hash call of its
//! own and no memo here, sharing no code with the engine's `turnsim_core::prefix_digest`
//! (a caller may keep the digest of a prefix it still holds: `prefix_reported` reads it
//! through the checkers' per-thread memo, which reuses it only for tools that write the
//! same bytes, compared by the checkers' own code, never by the engine's).
//! A judge that asked the engine's function expected whatever the engine computed: a
//! digest broken to a constant (mutant 78 of docs/mutants.md) or a stale memo hit
//! fooled engine and judge together, and no prefix change was ever missed.
//!
//! The JSON text is the one serde_json writes (the spec says "the JSON object", and
//! every platform's reference writes serde_json's bytes): strings escape `"`, `\`,
//! the five short control escapes (`\b \f \n \r \t`) and every other byte below 0x20
//! as `\u00xx` in lowercase hex, and nothing else; numbers are written as their own
//! text (`1` and `1.0` are other bytes).

use serde_json::Value;
use turnsim_core::ToolSpec;

/// The digest the spec defines for a request's `system` and `tools`.
pub fn prefix_digest(system: &str, tools: &[ToolSpec]) -> String {
    let mut out = Writer(Vec::with_capacity(system.len() + 256 * tools.len() + 32));
    out.raw("{\"system\":");
    out.string(system);
    out.raw(",\"tools\":[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.raw(",");
        }
        out.raw("{\"name\":");
        out.string(&tool.name);
        out.raw(",\"description\":");
        out.string(&tool.description);
        out.raw(",\"input_schema\":");
        out.value(&tool.input_schema);
        out.raw("}");
    }
    out.raw("]}");
    blake3::hash(&out.0).to_hex().to_string()
}

/// Writes the JSON text, hashed whole once written: one BLAKE3 call over the text
/// rather than one per token (tokens are a few bytes, and BLAKE3's cost per call
/// dominated the run's profile when each went in on its own).
struct Writer(Vec<u8>);

impl Writer {
    fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    fn string(&mut self, s: &str) {
        self.raw("\"");
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let short = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                0x08 => "\\b",
                0x0c => "\\f",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                _ if b < 0x20 => "",
                _ => continue,
            };
            self.0.extend_from_slice(&bytes[start..i]);
            start = i + 1;
            if short.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let escaped = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ];
                self.0.extend_from_slice(&escaped);
            } else {
                self.raw(short);
            }
        }
        self.0.extend_from_slice(&bytes[start..]);
        self.raw("\"");
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.raw("null"),
            Value::Bool(true) => self.raw("true"),
            Value::Bool(false) => self.raw("false"),
            // A number's own text: the value parsed keeps it (`1.0` stays `1.0`).
            Value::Number(n) => {
                use std::io::Write as _;
                // Writing into a Vec cannot fail.
                let _ = write!(self.0, "{n}");
            }
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.raw("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.raw(",");
                    }
                    self.value(item);
                }
                self.raw("]");
            }
            Value::Object(map) => {
                self.raw("{");
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.raw(",");
                    }
                    self.string(k);
                    self.raw(":");
                    self.value(item);
                }
                self.raw("}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("Does {name}."),
            input_schema: schema,
        }
    }

    #[test]
    fn the_digest_is_blake3_of_the_spec_json_text() {
        let tools = [tool("a", json!({"type": "object"}))];
        let text = r#"{"system":"s","tools":[{"name":"a","description":"Does a.","input_schema":{"type":"object"}}]}"#;
        assert_eq!(
            prefix_digest("s", &tools),
            blake3::hash(text.as_bytes()).to_hex().to_string()
        );
    }

    #[test]
    fn control_bytes_and_quotes_are_escaped_as_serde_json_writes_them() {
        let system = "q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}é";
        let text = format!(
            "{{\"system\":{},\"tools\":[]}}",
            serde_json::to_string(system).unwrap()
        );
        assert_eq!(
            text,
            "{\"system\":\"q\\\"b\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}é\",\"tools\":[]}"
        );
        assert_eq!(
            prefix_digest(system, &[]),
            blake3::hash(text.as_bytes()).to_hex().to_string()
        );
    }

    #[test]
    fn a_reordered_schema_and_a_number_written_otherwise_change_the_digest() {
        let a: Value = serde_json::from_str(r#"{"type":"object","maxItems":1}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"maxItems":1,"type":"object"}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"type":"object","maxItems":1.0}"#).unwrap();
        let d = |v: &Value| prefix_digest("s", &[tool("t", v.clone())]);
        assert_ne!(d(&a), d(&b));
        assert_ne!(d(&a), d(&c));
        assert_eq!(d(&a), d(&a.clone()));
    }

    /// A string of bytes the escaper treats differently: controls, quotes,
    /// backslashes, non-ASCII.
    fn text(rng: &mut ChaCha8Rng) -> String {
        const PIECES: [&str; 12] = [
            "a", "Z9", "_.:-", " ", "\"", "\\", "\n", "\t", "\u{1}", "\u{1f}", "é", "💡",
        ];
        (0..rng.random_range(0..6))
            .map(|_| PIECES[rng.random_range(0..PIECES.len())])
            .collect()
    }

    fn value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
        match rng.random_range(0..if depth == 0 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(rng.random_range(0..2) == 1),
            2 => match rng.random_range(0..3) {
                0 => json!(rng.random_range(-1000i64..1000)),
                1 => json!(f64::from(rng.random_range(-1000i32..1000)) / 8.0),
                _ => serde_json::from_str::<Value>("1.0").unwrap(),
            },
            3 | 4 => Value::String(text(rng)),
            5 => Value::Array(
                (0..rng.random_range(0..4))
                    .map(|_| value(rng, depth - 1))
                    .collect(),
            ),
            _ => Value::Object(
                (0..rng.random_range(0..4))
                    .map(|_| (text(rng), value(rng, depth - 1)))
                    .collect(),
            ),
        }
    }

    /// Equality with the engine's function is what the spec promises (one digest on
    /// every platform); checked here, in a test only, never to compute a verdict.
    #[test]
    fn the_judges_digest_equals_the_reference_engines_on_generated_prefixes() {
        let mut rng = ChaCha8Rng::seed_from_u64(78);
        for _ in 0..2000 {
            let tools: Vec<ToolSpec> = (0..rng.random_range(0..4))
                .map(|_| ToolSpec {
                    name: text(&mut rng),
                    description: text(&mut rng),
                    input_schema: value(&mut rng, 3),
                })
                .collect();
            let system = text(&mut rng);
            assert_eq!(
                prefix_digest(&system, &tools),
                turnsim_core::prefix_digest(&system, &tools),
                "system {system:?}, tools {tools:?}"
            );
        }
    }
}
