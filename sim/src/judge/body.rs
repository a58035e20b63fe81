//! A request body's top-level fields as the bytes that carry them, in the order they
//! were written.
//!
//! Guarantee: [`fields`] returns, for a JSON object, each member's key (decoded as
//! JSON decodes it) and the exact slice of the input that is its value, in input
//! order, and refuses anything that is not one well-formed object with an error
//! naming the byte where it went wrong. Nothing is parsed into a value and written
//! back: the provider's prompt cache keys on the bytes an engine sends, and a parsed
//! value forgets key order, spacing and escapes, which are exactly the changes that
//! cost a cache hit while leaving every value equal. The judge reads the bytes here
//! with code of its own, so it shares nothing with the serializer it judges.

/// One top-level member: its key and the raw bytes of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    pub key: std::borrow::Cow<'a, str>,
    pub value: &'a str,
    /// Where the member starts in the object: its key's opening quote.
    pub at: usize,
}

/// The members of the object `body`, in order.
pub fn fields(body: &str) -> Result<Vec<Field<'_>>, String> {
    let b = body.as_bytes();
    let mut at = skip_space(b, 0);
    if b.get(at) != Some(&b'{') {
        return Err(format!("byte {at}: a request body opens with `{{`"));
    }
    at = skip_space(b, at + 1);
    let mut out = Vec::new();
    if b.get(at) == Some(&b'}') {
        return end(b, at + 1, out);
    }
    loop {
        if b.get(at) != Some(&b'"') {
            return Err(format!("byte {at}: expected a member's key"));
        }
        let key_start = at;
        let key_end = skip_string(b, at)?;
        let raw_key = &body[at..key_end];
        let key = if raw_key.contains('\\') {
            std::borrow::Cow::Owned(
                serde_json::from_str::<String>(raw_key)
                    .map_err(|e| format!("byte {at}: a key that does not decode ({e})"))?,
            )
        } else {
            std::borrow::Cow::Borrowed(&raw_key[1..raw_key.len() - 1])
        };
        at = skip_space(b, key_end);
        if b.get(at) != Some(&b':') {
            return Err(format!("byte {at}: expected `:` after key {key:?}"));
        }
        let start = skip_space(b, at + 1);
        let stop = skip_value(b, start)?;
        out.push(Field {
            key,
            value: &body[start..stop],
            at: key_start,
        });
        at = skip_space(b, stop);
        match b.get(at) {
            Some(b',') => at = skip_space(b, at + 1),
            Some(b'}') => return end(b, at + 1, out),
            _ => return Err(format!("byte {at}: expected `,` or `}}` after a member")),
        }
    }
}

fn end<'a>(b: &[u8], at: usize, out: Vec<Field<'a>>) -> Result<Vec<Field<'a>>, String> {
    let at = skip_space(b, at);
    if at == b.len() {
        Ok(out)
    } else {
        Err(format!("byte {at}: bytes after the body's closing `}}`"))
    }
}

/// The value of `key` among `fields`, when present (the first, as it is written).
pub fn get<'a>(fields: &'a [Field<'a>], key: &str) -> Option<&'a str> {
    fields.iter().find(|f| f.key == key).map(|f| f.value)
}

/// The raw value of the first member `key` of `object`, read no further than that
/// member: for a line already parsed whole (so well formed, with no key twice),
/// where reading the rest again would only cost time.
pub fn first_member<'a>(object: &'a str, key: &str) -> Result<Option<&'a str>, String> {
    let b = object.as_bytes();
    let mut at = skip_space(b, 0);
    if b.get(at) != Some(&b'{') {
        return Err(format!("byte {at}: expected an object"));
    }
    at = skip_space(b, at + 1);
    if b.get(at) == Some(&b'}') {
        return Ok(None);
    }
    loop {
        if b.get(at) != Some(&b'"') {
            return Err(format!("byte {at}: expected a member's key"));
        }
        let key_end = skip_string(b, at)?;
        let raw_key = &object[at..key_end];
        let same = if raw_key.contains('\\') {
            serde_json::from_str::<String>(raw_key)
                .map_err(|e| format!("byte {at}: a key that does not decode ({e})"))?
                == key
        } else {
            &raw_key[1..raw_key.len() - 1] == key
        };
        at = skip_space(b, key_end);
        if b.get(at) != Some(&b':') {
            return Err(format!("byte {at}: expected `:` after a key"));
        }
        let start = skip_space(b, at + 1);
        let stop = skip_value(b, start)?;
        if same {
            return Ok(Some(&object[start..stop]));
        }
        at = skip_space(b, stop);
        match b.get(at) {
            Some(b',') => at = skip_space(b, at + 1),
            Some(b'}') => return Ok(None),
            _ => return Err(format!("byte {at}: expected `,` or `}}` after a member")),
        }
    }
}

/// The elements of the array whose bytes are `array`, each as its raw bytes.
pub fn elements(array: &str) -> Result<Vec<&str>, String> {
    let b = array.as_bytes();
    let mut at = skip_space(b, 0);
    if b.get(at) != Some(&b'[') {
        return Err(format!("byte {at}: expected an array"));
    }
    at = skip_space(b, at + 1);
    let mut out = Vec::new();
    if b.get(at) == Some(&b']') {
        return Ok(out);
    }
    loop {
        let stop = skip_value(b, at)?;
        out.push(&array[at..stop]);
        at = skip_space(b, stop);
        match b.get(at) {
            Some(b',') => at = skip_space(b, at + 1),
            Some(b']') => return Ok(out),
            _ => return Err(format!("byte {at}: expected `,` or `]` in an array")),
        }
    }
}

/// The bytes of the prefix fields of the request body `raw` exactly as sent:
/// `[system, tools]`, each through [`prefix_bytes`] (empty when absent), the system
/// read under `system_key` (`system`; Responses `instructions`; Gemini
/// `systemInstruction`). `None` when the body is not one JSON object in UTF-8: then
/// there are no bytes to judge, and the prefix is judged on values.
pub fn prefix_of(raw: &[u8], system_key: &str) -> Option<[String; 2]> {
    let text = std::str::from_utf8(raw).ok()?;
    let fs = fields(text).ok()?;
    let one = |key: &str| prefix_bytes(get(&fs, key).unwrap_or_default()).ok();
    Some([one(system_key)?, one("tools")?])
}

/// Where `part` (a slice of `whole`) starts in `whole`.
fn offset(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// The bytes of the object `object` with every member named `key` cut out, with the
/// one separator that joined it, every other byte as written.
pub fn without_member(object: &str, key: &str) -> Result<String, String> {
    let fs = fields(object)?;
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for (i, f) in fs.iter().enumerate() {
        if f.key != key {
            continue;
        }
        let value_end = offset(object, f.value) + f.value.len();
        let cut = match (fs.get(i + 1), i.checked_sub(1).and_then(|p| fs.get(p))) {
            (Some(next), _) => (f.at, next.at),
            (None, Some(prev)) => (offset(object, prev.value) + prev.value.len(), value_end),
            (None, None) => (f.at, value_end),
        };
        cuts.push(cut);
    }
    let mut out = String::with_capacity(object.len());
    let mut from = 0;
    for (start, end) in cuts {
        // A member cut after its predecessor's value may overlap a cut that ended there.
        let start = start.max(from);
        out.push_str(&object[from..start]);
        from = end.max(from);
    }
    out.push_str(&object[from..]);
    Ok(out)
}

/// The bytes of a prefix field's value (`system`, `tools`) as its cache reads them:
/// the value as written, with each element's own `cache_control` member cut out when
/// it is an array (clients move their breakpoints as a conversation grows; a moved
/// breakpoint is not a changed prefix).
pub fn prefix_bytes(value: &str) -> Result<String, String> {
    if !value.trim_start().starts_with('[') {
        return Ok(value.to_owned());
    }
    let mut out = String::with_capacity(value.len());
    let mut from = 0;
    for element in elements(value)? {
        let start = offset(value, element);
        out.push_str(&value[from..start]);
        if element.starts_with('{') {
            out.push_str(&without_member(element, "cache_control")?);
        } else {
            out.push_str(element);
        }
        from = start + element.len();
    }
    out.push_str(&value[from..]);
    Ok(out)
}

fn skip_space(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Past the string opening at `at` (its closing quote included).
/// Why memchr: a request or reply line is mostly string bytes (texts, base64 log
/// records), and this runs on every line a subprocess engine writes.
fn skip_string(b: &[u8], at: usize) -> Result<usize, String> {
    let mut i = at + 1;
    while let Some(rest) = b.get(i..) {
        match memchr::memchr2(b'"', b'\\', rest) {
            Some(k) if rest[k] == b'"' => return Ok(i + k + 1),
            Some(k) => i += k + 2,
            None => break,
        }
    }
    Err(format!("byte {at}: a string that never closes"))
}

/// Past the value starting at `at`: a string, an object or array (brackets counted
/// outside strings), or a scalar up to the next delimiter.
fn skip_value(b: &[u8], at: usize) -> Result<usize, String> {
    match b.get(at) {
        None => Err(format!("byte {at}: a value is missing")),
        Some(b'"') => skip_string(b, at),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&c) = b.get(i) {
                match c {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            Err(format!("byte {at}: an object or array that never closes"))
        }
        Some(_) => {
            let mut i = at;
            while let Some(&c) = b.get(i) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                i += 1;
            }
            if i == at {
                Err(format!("byte {at}: a value is missing"))
            } else {
                Ok(i)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_the_exact_value_bytes_in_written_order() {
        let body = r#" {"tools" : [{"b":1,"a":"x]}"}], "system":"s\"}","messages":[ ],"n":-1.5e3}"#;
        let f = fields(body).unwrap();
        let got: Vec<(&str, &str)> = f.iter().map(|f| (&*f.key, f.value)).collect();
        assert_eq!(
            got,
            vec![
                ("tools", r#"[{"b":1,"a":"x]}"}]"#),
                ("system", r#""s\"}""#),
                ("messages", "[ ]"),
                ("n", "-1.5e3"),
            ]
        );
    }

    #[test]
    fn an_escaped_key_is_read_as_json_decodes_it() {
        let f = fields(r#"{"t\u006fols":[]}"#).unwrap();
        assert_eq!(f[0].key, "tools");
        assert_eq!(f[0].value, "[]");
    }

    #[test]
    fn a_body_that_is_not_one_object_is_refused_where_it_breaks() {
        assert_eq!(
            fields("[1]").unwrap_err(),
            "byte 0: a request body opens with `{`"
        );
        assert_eq!(
            fields(r#"{"a":[1,2"#).unwrap_err(),
            "byte 5: an object or array that never closes"
        );
        assert_eq!(
            fields(r#"{"a":1} x"#).unwrap_err(),
            "byte 8: bytes after the body's closing `}`"
        );
        assert_eq!(
            fields(r#"{"a" 1}"#).unwrap_err(),
            "byte 5: expected `:` after key \"a\""
        );
    }

    #[test]
    fn a_cut_member_takes_one_separator_and_leaves_every_other_byte() {
        let o = r#"{"a":1, "cache_control":{"type":"ephemeral"},"b":[2]}"#;
        assert_eq!(
            without_member(o, "cache_control").unwrap(),
            r#"{"a":1, "b":[2]}"#
        );
        let last = r#"{"a":1 ,"cache_control":{}}"#;
        assert_eq!(without_member(last, "cache_control").unwrap(), r#"{"a":1}"#);
        assert_eq!(
            without_member(r#"{"cache_control":{}}"#, "cache_control").unwrap(),
            "{}"
        );
        assert_eq!(
            without_member(r#"{ "a" : 1 }"#, "x").unwrap(),
            r#"{ "a" : 1 }"#
        );
    }

    #[test]
    fn prefix_bytes_drop_each_element_s_breakpoint_and_keep_spacing_and_order() {
        let tools =
            r#"[ {"name":"a","cache_control":{"type":"ephemeral"}}, {"b" : 1,"name":"b"} ]"#;
        assert_eq!(
            prefix_bytes(tools).unwrap(),
            r#"[ {"name":"a"}, {"b" : 1,"name":"b"} ]"#
        );
        assert_eq!(
            prefix_bytes(r#""You are \u0041""#).unwrap(),
            r#""You are \u0041""#
        );
        assert!(prefix_bytes("[1,").is_err());
    }

    #[test]
    fn elements_are_each_element_s_bytes() {
        assert_eq!(
            elements(r#"[ {"a":[1]} ,"x",3]"#).unwrap(),
            vec![r#"{"a":[1]}"#, r#""x""#, "3"]
        );
        assert_eq!(elements("[]").unwrap(), Vec::<&str>::new());
        assert_eq!(
            first_member(r#"{"a":1,"b":{"c":2}}"#, "b").unwrap(),
            Some(r#"{"c":2}"#)
        );
    }

    #[test]
    fn first_member_stops_at_the_first_match_and_reads_escaped_keys() {
        // Nothing after the member is read: the rest here is not even JSON.
        assert_eq!(
            first_member(r#" { "x" : "a\"}" , "b\u0061":[1,"]"], oops"#, "ba").unwrap(),
            Some(r#"[1,"]"]"#)
        );
        assert_eq!(first_member(r#"{"a":1}"#, "b").unwrap(), None);
        assert_eq!(first_member("{}", "b").unwrap(), None);
        assert_eq!(
            first_member(r#"{"a" 1}"#, "a").unwrap_err(),
            "byte 5: expected `:` after a key"
        );
    }

    #[test]
    fn strings_with_escapes_are_skipped_whole() {
        let body = r#"{"a":"x\\","b":"\"y\\\"","c":"unterminated\"}"#;
        let f = first_member(body, "b").unwrap();
        assert_eq!(f, Some(r#""\"y\\\"""#));
        assert_eq!(
            first_member(body, "d").unwrap_err(),
            "byte 29: a string that never closes"
        );
    }
}
