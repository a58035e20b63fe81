//! One recorded HTTP exchange of a cassette, whichever library wrote it: go-vcr
//! (`url:`, `code:`, bodies as strings) or vcrpy (`uri:`, `status: {code}`, a
//! response body under `string:`, bytes that are not UTF-8 text as `!!binary`).
//!
//! Guarantees:
//! - Both layouts become the same [`Exchange`], so every request is judged by the same
//!   code whichever recorder wrote it.
//! - A body is read as the client sent it or the client received it: `!!binary` is
//!   base64-decoded, and a body the server compressed (`content-encoding: gzip` or
//!   `deflate`, which vcrpy keeps compressed unless told to decode) is inflated. A
//!   body that cannot be read (bad base64, a compression this reader does not know,
//!   bytes that are not UTF-8 after all) says why, never becomes an empty body.
//! - YAML's `!!binary` tag is read from the text of the interaction, since the YAML
//!   reader drops core tags: only where a `body:` or `string:` key is tagged, at the
//!   start of its line, which is where vcrpy's writer puts it.

use serde::Deserialize;
use serde_norway::Value as Yaml;
use std::collections::BTreeMap;
use std::io::Read;

/// One request and what answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub method: Option<String>,
    pub url: String,
    /// Header names lower-cased; several values joined by commas.
    pub headers: BTreeMap<String, String>,
    /// The request body as text (empty when none was sent).
    pub body: Result<String, String>,
    pub response: Option<Answer>,
}

/// A recorded response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: Option<u16>,
    /// The body as text, or why it cannot be read.
    pub body: Result<String, String>,
}

/// An interaction as either recorder writes it; fields of the other layout stay unset.
#[derive(Deserialize)]
pub struct Interaction {
    #[serde(default)]
    pub id: Option<u64>,
    pub request: HttpRequest,
    #[serde(default)]
    pub response: Option<HttpResponse>,
}

#[derive(Deserialize)]
pub struct HttpRequest {
    #[serde(default)]
    body: Yaml,
    /// go-vcr's name for the address.
    #[serde(default)]
    url: Option<String>,
    /// vcrpy's name for it.
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    headers: Yaml,
}

#[derive(Deserialize)]
pub struct HttpResponse {
    /// go-vcr: the body text; vcrpy: `{string: …}`.
    #[serde(default)]
    body: Yaml,
    /// go-vcr's status code.
    #[serde(default)]
    code: Option<u16>,
    /// vcrpy's `{code, message}` (go-vcr writes a `"200 OK"` text here).
    #[serde(default)]
    status: Yaml,
    #[serde(default)]
    headers: Yaml,
}

/// The tag vcrpy's `!!binary` is rewritten to, so the YAML reader keeps it.
const BINARY: &str = "!binary";

/// The interaction's text with vcrpy's `!!binary` tags kept as a local tag (see the
/// module's guarantee).
pub fn keep_binary_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("!!binary") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches([' ', '-']);
        let tagged = ["body: !!binary", "string: !!binary"]
            .iter()
            .any(|k| body.starts_with(k));
        if tagged {
            out.push_str(&line.replacen("!!binary", BINARY, 1));
        } else {
            out.push_str(line);
        }
    }
    out.into()
}

fn headers_of(v: &Yaml) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Yaml::Mapping(map) = v {
        for (name, v) in map {
            let Some(name) = name.as_str() else { continue };
            let value = match v {
                Yaml::Sequence(vs) => vs
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(","),
                other => match scalar_text(other) {
                    Some(s) => s,
                    None => continue,
                },
            };
            out.insert(name.to_ascii_lowercase(), value);
        }
    }
    out
}

fn scalar_text(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A body's bytes: text as is, `!binary` base64-decoded. `Ok(None)`: no body.
fn body_bytes(v: &Yaml) -> Result<Option<Vec<u8>>, String> {
    match v {
        Yaml::Null => Ok(None),
        Yaml::String(s) => Ok(Some(s.clone().into_bytes())),
        Yaml::Tagged(t) if t.tag == BINARY => match &t.value {
            Yaml::String(s) => base64(s).map(Some),
            _ => Err("a `!!binary` body that is not base64 text".into()),
        },
        Yaml::Tagged(t) => Err(format!("a body tagged {}, not text or !!binary", t.tag)),
        _ => Err("a body that is not text".into()),
    }
}

/// Standard base64 (RFC 4648, padded or not), whitespace between groups ignored, as
/// vcrpy's YAML writer wraps it: the text is normalised to the padded form and read by
/// the crate's one strict decoder.
fn base64(text: &str) -> Result<Vec<u8>, String> {
    let mut digits: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    match digits.len() % 4 {
        1 => {
            return Err(
                "a `!!binary` body that is not base64 (a stray character at its end)".into(),
            );
        }
        2 => digits.push_str("=="),
        3 => digits.push('='),
        _ => {}
    }
    crate::base64::decode(&digits).map_err(|e| format!("a `!!binary` body that is not {e}"))
}

/// Undoes the response's `content-encoding` when the bytes are still encoded (vcrpy
/// keeps them so; a client that decoded them before recording leaves plain bytes).
fn decoded(bytes: Vec<u8>, encoding: Option<&str>, max: usize) -> Result<Vec<u8>, String> {
    let encoding = encoding.map(|e| e.trim().to_ascii_lowercase());
    let inflate = |r: Box<dyn Read + '_>, name: &str| {
        let mut out = Vec::new();
        r.take(max as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("a {name} body that does not inflate: {e}"))?;
        if out.len() > max {
            return Err(format!(
                "a {name} body that inflates past the limit of {max} bytes for one element (raise it with --max-element-mib)"
            ));
        }
        Ok(out)
    };
    match encoding.as_deref() {
        Some("gzip" | "x-gzip") if bytes.starts_with(&[0x1f, 0x8b]) => inflate(
            Box::new(flate2::read::MultiGzDecoder::new(&bytes[..])),
            "gzip",
        ),
        // `deflate` is zlib-wrapped in HTTP; a first byte of 0x78 says it still is.
        Some("deflate") if bytes.first() == Some(&0x78) => inflate(
            Box::new(flate2::read::ZlibDecoder::new(&bytes[..])),
            "deflate",
        ),
        Some(other) if std::str::from_utf8(&bytes).is_err() && !other.is_empty() => Err(format!(
            "a body compressed with `{other}`, which this reader does not decode (record with vcrpy's decode_compressed_response=True)"
        )),
        _ => Ok(bytes),
    }
}

fn text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "a body that is not UTF-8 text (byte {} of it)",
            e.utf8_error().valid_up_to()
        )
    })
}

impl Interaction {
    /// The exchange, whichever recorder wrote it; no body inflates past `max` bytes.
    pub fn exchange(&self, max: usize) -> Exchange {
        let req = &self.request;
        let request_headers = headers_of(&req.headers);
        let body = body_bytes(&req.body).and_then(|b| {
            let encoding = request_headers.get("content-encoding").map(String::as_str);
            text(decoded(b.unwrap_or_default(), encoding, max)?)
        });
        Exchange {
            method: req.method.clone(),
            url: req
                .url
                .clone()
                .or_else(|| req.uri.clone())
                .unwrap_or_default(),
            headers: request_headers,
            body,
            response: self.response.as_ref().map(|r| r.answer(max)),
        }
    }
}

impl HttpResponse {
    fn answer(&self, max: usize) -> Answer {
        let status = self.code.or_else(|| {
            let code = match &self.status {
                Yaml::Mapping(m) => m.get("code"),
                other => Some(other),
            };
            code.and_then(|c| match c {
                Yaml::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
                // go-vcr's "200 OK".
                Yaml::String(s) => s.split_whitespace().next().and_then(|c| c.parse().ok()),
                _ => None,
            })
        });
        let headers = headers_of(&self.headers);
        let raw = match &self.body {
            Yaml::Mapping(m) => m.get("string").cloned().unwrap_or(Yaml::Null),
            other => other.clone(),
        };
        let body = body_bytes(&raw).and_then(|b| {
            let encoding = headers.get("content-encoding").map(String::as_str);
            text(decoded(b.unwrap_or_default(), encoding, max)?)
        });
        Answer { status, body }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(yaml: &str) -> Exchange {
        let items: Vec<Interaction> =
            serde_norway::from_str(&keep_binary_tags(yaml)).expect("test YAML parses");
        items[0].exchange(1 << 20)
    }

    #[test]
    fn base64_decodes_padded_unpadded_and_wrapped_text() {
        assert_eq!(base64("aGk="), Ok(b"hi".to_vec()));
        assert_eq!(base64("aGk"), Ok(b"hi".to_vec()));
        assert_eq!(base64("aGVs\n bG8="), Ok(b"hello".to_vec()));
        assert_eq!(base64(""), Ok(Vec::new()));
        assert!(base64("a*b=").is_err());
        assert!(base64("aGVsb").is_err());
    }

    #[test]
    fn a_vcrpy_binary_gzip_body_is_read_as_the_client_received_it() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(br#"{"id":"resp_1"}"#).expect("in memory");
        let packed = gz.finish().expect("in memory");
        let b64 = crate::base64::encode(&packed);
        let yaml = format!(
            "- request:\n    body: '{{\"model\":\"gpt-5\",\"input\":\"hi\"}}'\n    method: POST\n    uri: https://api.openai.com/v1/responses\n  response:\n    body:\n      string: !!binary |\n        {b64}\n    headers:\n      Content-Encoding:\n      - gzip\n    status:\n      code: 200\n      message: OK\n"
        );
        let ex = exchange(&yaml);
        assert_eq!(ex.url, "https://api.openai.com/v1/responses");
        assert_eq!(ex.method.as_deref(), Some("POST"));
        assert_eq!(ex.body.as_deref(), Ok(r#"{"model":"gpt-5","input":"hi"}"#));
        let answer = ex.response.expect("recorded");
        assert_eq!(answer.status, Some(200));
        assert_eq!(answer.body.as_deref(), Ok(r#"{"id":"resp_1"}"#));
    }

    #[test]
    fn inflating_stops_at_the_element_limit() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&[b'a'; 4096]).expect("in memory");
        let packed = gz.finish().expect("in memory");
        assert_eq!(
            decoded(packed.clone(), Some("gzip"), 4096).map(|b| b.len()),
            Ok(4096)
        );
        assert_eq!(
            decoded(packed, Some("gzip"), 4095),
            Err("a gzip body that inflates past the limit of 4095 bytes for one element (raise it with --max-element-mib)".into())
        );
    }

    #[test]
    fn a_body_that_cannot_be_read_says_why() {
        let brotli = "- request:\n    body: null\n    uri: u\n  response:\n    body:\n      string: !!binary |\n        /w==\n    headers:\n      content-encoding:\n      - br\n    status:\n      code: 200\n";
        let answer = exchange(brotli).response.expect("recorded");
        assert_eq!(
            answer.body,
            Err("a body compressed with `br`, which this reader does not decode (record with vcrpy's decode_compressed_response=True)".into())
        );
        let not_text = "- request:\n    body: !!binary |\n      /w==\n    uri: u\n";
        assert_eq!(
            exchange(not_text).body,
            Err("a body that is not UTF-8 text (byte 0 of it)".into())
        );
    }

    #[test]
    fn a_go_vcr_interaction_reads_its_code_and_string_body() {
        let yaml = "- id: 3\n  request:\n    body: '{}'\n    url: https://api.anthropic.com/v1/messages\n    headers:\n      Anthropic-Beta:\n      - a\n      - b\n  response:\n    body: 'event: ping'\n    code: 529\n    status: 529 status code 529\n";
        let ex = exchange(yaml);
        assert_eq!(
            ex.headers.get("anthropic-beta").map(String::as_str),
            Some("a,b")
        );
        let answer = ex.response.expect("recorded");
        assert_eq!(answer.status, Some(529));
        assert_eq!(answer.body.as_deref(), Ok("event: ping"));
    }

    #[test]
    fn only_a_tag_at_a_body_key_is_taken_for_binary() {
        let yaml = "- request:\n    body: \"x: !!binary\"\n  response:\n    body:\n      string: !!binary |\n        aGk=\n";
        let kept = keep_binary_tags(yaml);
        assert!(kept.contains("body: \"x: !!binary\""));
        assert!(kept.contains("string: !binary |"));
    }
}
