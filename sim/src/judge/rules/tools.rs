//! The rules about a request's tool definitions: `tool_names_unique`,
//! `tool_name_pattern` and `tool_schema_object`.
//!
//! Guarantee: judged from the definitions as the request lists them (a body's `tools`
//! array as sent, or the simulated request's tools), the same three rules for
//! `check`, `serve` and the simulator. Only custom tools (no `type`, or `"custom"`)
//! are held to the name pattern and the schema rule: a server tool (`web_search`,
//! `bash`…) is named by the API itself. Every tool, server ones included, counts for
//! uniqueness, because the API rejects a custom tool named like a server tool too.
//!
//! Why: the API refuses the whole request (and so every later one of the session)
//! when two tools share a name, which runtimes reach by merging tool lists: MCP
//! servers reconnected or offering the same tool twice, a built-in tool also
//! registered from a registry, a compaction request that lists the tools again
//! (anthropics/claude-code#14205); and when a tool's name or schema breaks the
//! API's definition, as MCP servers' dotted names do.

/// The pattern a custom tool's name must match, as the API's error quotes it.
pub const NAME_PATTERN: &str = "^[a-zA-Z0-9_-]{1,128}$";

/// The longest name [`NAME_PATTERN`] allows. The API's earlier bound was 64
/// (its errors quoted `{1,64}` until 2025); the current one is judged, so no name the
/// API takes today is reported.
pub const NAME_MAX: usize = 128;

/// One tool definition, as the rules read it.
#[derive(Clone, Copy, Debug)]
pub struct ToolDef<'a> {
    /// Its index in the request's `tools`.
    pub index: usize,
    pub name: &'a str,
    /// A custom tool (its definition is the client's); `false` for a server tool.
    pub custom: bool,
    /// A custom tool's `input_schema`, when it has one.
    pub schema: Option<&'a serde_json::Value>,
}

/// A breach of one of these rules: the tool's index in `tools`, the breach kind (a
/// row of [`super::table::RULES`]) and what is wrong, in our words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolBreach {
    pub index: usize,
    pub kind: &'static str,
    pub detail: String,
}

/// Whether `name` matches [`NAME_PATTERN`].
pub fn name_allowed(name: &str) -> bool {
    (1..=NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every breach of the three rules, in tool order (a tool's own rules first, then a
/// duplicate of an earlier name).
pub fn breaches<'a>(tools: impl IntoIterator<Item = ToolDef<'a>>) -> Vec<ToolBreach> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for t in tools {
        let index = t.index;
        if t.custom && !name_allowed(t.name) {
            out.push(ToolBreach {
                index,
                kind: "bad_tool_name",
                detail: format!(
                    "tools.{index}: the name {:?} does not match {NAME_PATTERN}",
                    t.name
                ),
            });
        }
        if t.custom {
            match t.schema.map(|s| s.get("type")) {
                Some(Some(serde_json::Value::String(ty))) if ty == "object" => {}
                Some(Some(ty)) => out.push(ToolBreach {
                    index,
                    kind: "tool_schema_not_object",
                    detail: format!(
                        "tools.{index} ({}): input_schema.type is {ty}, not \"object\"",
                        t.name
                    ),
                }),
                Some(None) | None => out.push(ToolBreach {
                    index,
                    kind: "tool_schema_not_object",
                    detail: format!(
                        "tools.{index} ({}): input_schema has no \"type\": \"object\"",
                        t.name
                    ),
                }),
            }
        }
        match seen.iter().position(|n| *n == t.name) {
            Some(first) => out.push(ToolBreach {
                index,
                kind: "duplicate_tool_name",
                detail: format!(
                    "tools.{index}: the name {:?} is tools.{first}'s too; tool names must be unique",
                    t.name
                ),
            }),
            None => seen.push(t.name),
        }
    }
    out
}

/// The definitions of a Messages API body's `tools` array. A definition that is not
/// an object or has no string `name` is left to the body's reader (it is not a tool
/// these rules can name) and skipped here.
pub fn defs_of_body(tools: Option<&serde_json::Value>) -> Vec<ToolDef<'_>> {
    let Some(serde_json::Value::Array(list)) = tools else {
        return Vec::new();
    };
    list.iter()
        .enumerate()
        .filter_map(|(index, t)| {
            let name = t.get("name")?.as_str()?;
            let custom = match t.get("type") {
                None | Some(serde_json::Value::Null) => true,
                Some(ty) => ty.as_str() == Some("custom"),
            };
            Some(ToolDef {
                index,
                name,
                custom,
                schema: t.get("input_schema"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(tools: serde_json::Value) -> Vec<(usize, &'static str)> {
        breaches(defs_of_body(Some(&tools)))
            .into_iter()
            .map(|b| (b.index, b.kind))
            .collect()
    }

    fn tool(name: &str) -> serde_json::Value {
        json!({"name": name, "input_schema": {"type": "object", "properties": {}}})
    }

    #[test]
    fn two_tools_of_one_name_are_refused_and_two_names_are_not() {
        assert_eq!(
            kinds(json!([tool("read_file"), tool("grep"), tool("read_file")])),
            vec![(2, "duplicate_tool_name")]
        );
        assert_eq!(
            kinds(json!([tool("read_file"), tool("read_files")])),
            vec![]
        );
        // A custom tool named like a server tool collides with it too.
        let server = json!({"type": "web_search_20250305", "name": "web_search"});
        assert_eq!(
            kinds(json!([server, tool("web_search")])),
            vec![(1, "duplicate_tool_name")]
        );
    }

    #[test]
    fn a_dotted_or_overlong_custom_name_is_refused_and_the_longest_allowed_is_not() {
        assert_eq!(
            kinds(json!([tool("github.create_issue")])),
            vec![(0, "bad_tool_name")]
        );
        assert_eq!(kinds(json!([tool("")])), vec![(0, "bad_tool_name")]);
        assert_eq!(kinds(json!([tool("sök")])), vec![(0, "bad_tool_name")]);
        assert_eq!(
            kinds(json!([tool(&"a".repeat(129))])),
            vec![(0, "bad_tool_name")]
        );
        assert_eq!(
            kinds(json!([
                tool(&"a".repeat(128)),
                tool("mcp__github__create-issue_2")
            ])),
            vec![]
        );
        // A server tool's name is the API's own, and an explicit custom type is custom.
        let server = json!({"type": "bash_20250124", "name": "bash"});
        assert_eq!(kinds(json!([server])), vec![]);
        let custom = json!({"type": "custom", "name": "a.b", "input_schema": {"type": "object"}});
        assert_eq!(kinds(json!([custom])), vec![(0, "bad_tool_name")]);
    }

    #[test]
    fn a_schema_without_an_object_root_is_refused_and_an_object_one_is_not() {
        let no_type = json!({"name": "t", "input_schema": {"properties": {}}});
        let array = json!({"name": "t", "input_schema": {"type": "array"}});
        let missing = json!({"name": "t"});
        let bare = json!({"name": "t", "input_schema": {"type": "object"}});
        assert_eq!(kinds(json!([no_type])), vec![(0, "tool_schema_not_object")]);
        assert_eq!(kinds(json!([array])), vec![(0, "tool_schema_not_object")]);
        assert_eq!(kinds(json!([missing])), vec![(0, "tool_schema_not_object")]);
        assert_eq!(kinds(json!([bare])), vec![]);
    }

    #[test]
    fn a_definition_without_a_name_is_skipped_and_keeps_the_others_indices() {
        let unnamed = json!({"input_schema": {"type": "object"}});
        assert_eq!(
            kinds(json!([unnamed, tool("a.b")])),
            vec![(1, "bad_tool_name")]
        );
        assert_eq!(breaches(defs_of_body(None)), vec![]);
        assert_eq!(breaches(defs_of_body(Some(&json!({})))), vec![]);
    }

    #[test]
    fn a_breach_names_the_tool_and_what_the_api_wants() {
        let b = breaches(defs_of_body(Some(&json!([tool("x"), tool("x")]))));
        assert_eq!(
            b[0].detail,
            "tools.1: the name \"x\" is tools.0's too; tool names must be unique"
        );
        let b = breaches(defs_of_body(Some(&json!([tool("a.b")]))));
        assert_eq!(
            b[0].detail,
            "tools.0: the name \"a.b\" does not match ^[a-zA-Z0-9_-]{1,128}$"
        );
    }
}
