//! The planted bugs of a request's tool definitions, one per rule of
//! `judge/rules/tools.rs`, each a mechanism public runtimes shipped:
//!
//! - `registers_tools_twice`: every tool is listed twice, as when a runtime merges
//!   its built-in tools with a registry or an MCP server offering the same ones
//!   (`tools: Tool names must be unique.`: anthropics/claude-code#10687 and #14205,
//!   incidentfox/incidentfox#349, danny-avila/LibreChat#13162);
//! - `dotted_tool_names`: tools namespaced by their server with a dot, `host.name`,
//!   which the API's name pattern refuses (cyanheads/atlas-mcp-server#14,
//!   apify/tester-mcp-client#11);
//! - `schema_without_object_type`: a tool's input schema passed on without its root
//!   `"type": "object"`, as MCP servers publish them (awwaiid/mcp-server-taskwarrior#11,
//!   zereight/gitlab-mcp#286) and a runtime forwards them unchecked.
//!
//! Guarantee: only the request's `tools` are rewritten, every request the same way,
//! so the run finds the broken rule (the judge's validator behind `pairing`) at the
//! first request, and nothing else of what the reference engine built changes.

use super::Bug;
use std::sync::Arc;
use turnsim_core::{Request, ToolSpec};

/// The namespace `dotted_tool_names` puts in front of every tool's name.
const SERVER: &str = "host";

/// Rewrites the request's tool definitions per the bug (other bugs: untouched).
pub(super) fn rewrite(bug: Bug, request: &mut Request) {
    let tools: Vec<ToolSpec> = match bug {
        Bug::RegistersToolsTwice => request
            .tools
            .iter()
            .chain(request.tools.iter())
            .cloned()
            .collect(),
        Bug::DottedToolNames => request
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: format!("{SERVER}.{}", t.name),
                ..t.clone()
            })
            .collect(),
        Bug::SchemaWithoutObjectType => request
            .tools
            .iter()
            .map(|t| {
                let mut t = t.clone();
                if let Some(schema) = t.input_schema.as_object_mut() {
                    schema.remove("type");
                }
                t
            })
            .collect(),
        _ => return,
    };
    request.tools = Arc::from(tools);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::rules::tools::{ToolDef, breaches};
    use turnsim_core::CacheHints;

    fn request() -> Request {
        Request {
            system: String::new(),
            tools: Arc::from(vec![ToolSpec {
                name: "read_file".into(),
                description: String::new(),
                input_schema: serde_json::json!({"type": "object", "properties": {}}),
            }]),
            thinking: None,
            messages: Vec::new(),
            cache: CacheHints {
                session_key: String::new(),
                breakpoints: Vec::new(),
            },
        }
    }

    fn kinds(r: &Request) -> Vec<&'static str> {
        let defs = r.tools.iter().enumerate().map(|(index, t)| ToolDef {
            index,
            name: &t.name,
            custom: true,
            schema: Some(&t.input_schema),
        });
        breaches(defs).into_iter().map(|b| b.kind).collect()
    }

    #[test]
    fn each_bug_breaks_its_own_rule_and_the_reference_tools_break_none() {
        assert_eq!(kinds(&request()), Vec::<&str>::new());
        for (bug, kind) in [
            (Bug::RegistersToolsTwice, "duplicate_tool_name"),
            (Bug::DottedToolNames, "bad_tool_name"),
            (Bug::SchemaWithoutObjectType, "tool_schema_not_object"),
        ] {
            let mut r = request();
            rewrite(bug, &mut r);
            assert_eq!(kinds(&r), vec![kind], "{}", bug.name());
        }
        let mut r = request();
        rewrite(Bug::CachesEveryMessage, &mut r);
        assert_eq!(r.tools[0].name, "read_file");
    }
}
