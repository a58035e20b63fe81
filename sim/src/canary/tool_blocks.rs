//! The planted bug of tool results that hold blocks: the result's array is written
//! into the history as one string, its JSON text, as a runtime that passes every
//! tool output through `JSON.stringify` or `serde_json::to_string` does
//! (<https://github.com/openai/codex/issues/31136>: an MCP tool's content array
//! reaches the model as `[{"type":"text","text":…}]` text).
//!
//! Guarantee: only a result whose content is an array of blocks is changed, and only
//! its content (id and error flag kept); a string result reaches the reference engine
//! untouched, so a seed without blocks runs as the reference does and
//! `no_lost_observation` (the array the tool gave is not in the history) is the
//! checker that sees it.

use turnsim_core::ToolResultContent;

/// `stringifies_result_blocks`: an array becomes the string of its JSON.
pub(super) fn stringified(content: ToolResultContent) -> ToolResultContent {
    match content {
        ToolResultContent::Blocks(_) => {
            ToolResultContent::Text(serde_json::to_string(&content).unwrap_or_default())
        }
        text => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnsim_core::Block;

    #[test]
    fn an_array_becomes_its_json_text_and_a_string_is_untouched() {
        let blocks = ToolResultContent::Blocks(vec![Block::text("a"), Block::text("b")]);
        assert_eq!(
            stringified(blocks),
            ToolResultContent::Text(
                r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#.into()
            )
        );
        let text = ToolResultContent::Text("[1]".into());
        assert_eq!(stringified(text.clone()), text);
    }
}
