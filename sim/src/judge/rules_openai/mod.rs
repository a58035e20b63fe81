//! What OpenAI's Responses and Chat Completions APIs reject in a request, as the
//! judge's own table-driven validators: [`table`] lists every rule with the API's
//! error text and its source; [`responses`] judges a Responses body's `input`,
//! [`chat`] a Chat Completions body's `messages`.
//!
//! Guarantees:
//! - The judge shares no validation code with what it judges: the validators read the
//!   body's JSON as sent (not the wire readers' typed model, which folds part types
//!   together and refuses some of these bodies before any rule could name them), and
//!   never call `turnsim_core`'s history validation.
//! - Every breach names a row of its API's table and the index of the item or message
//!   at fault as the client sent it (`input[i]`, `messages[i]`), or says it lies in
//!   the response a `previous_response_id` stands for.
//! - Deterministic: ordered maps only; breaches come out in wire order.

pub mod chat;
pub mod responses;
pub mod table;
pub mod tools;

use super::finding::{Finding, Place, Severity, excerpt};
// The wire reader's own type names, so the judge and the reader never word one type two ways.
pub(crate) use crate::openai::field::type_name;
use serde_json::Value;
use table::{Api, rule_of};

/// One breach of an OpenAI rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// A kind of the API's table.
    pub kind: &'static str,
    /// The index in `input` / `messages` as sent; `None` for an item of the response
    /// `previous_response_id` stands for, or for the request as a whole.
    pub at: Option<usize>,
    /// The index in the request's `tools` when the breach is in a tool's definition
    /// (then `at` is `None`).
    pub tool: Option<usize>,
    /// What is wrong, naming the ids involved.
    pub detail: String,
    /// The fields that identify the item at fault, as JSON.
    pub excerpt: String,
}

impl Breach {
    /// The judge's rule family a finding of this breach is reported under (the
    /// table's row says; `request_valid` for a kind no row names).
    pub fn family(&self, api: Api) -> &'static str {
        rule_of(api, self.kind).map_or("request_valid", |r| r.family)
    }

    /// The row's name.
    pub fn rule(&self, api: Api) -> &'static str {
        rule_of(api, self.kind).map_or("unlisted", |r| r.id)
    }

    /// The breach as a finding of request `request`: the family is its `check`, the
    /// kind its `kind`, the wire index its `message`, and the text names the row.
    pub fn finding(&self, api: Api, request: usize) -> Finding {
        let where_ = match (self.tool, self.at, api) {
            (Some(t), _, _) => format!("tools[{t}]"),
            (None, Some(i), _) => format!("{}[{i}]", api.list()),
            (None, None, Api::Responses) => "in the context of previous_response_id".to_owned(),
            (None, None, Api::Chat) => "messages".to_owned(),
        };
        let mut f = Finding::new(
            Severity::Violation,
            self.family(api),
            self.kind,
            Place {
                request: Some(request),
                message: self.at,
                ..Place::default()
            },
            format!("{where_}: {} (rule {})", self.detail, self.rule(api)),
        );
        f.excerpt = excerpt(&self.excerpt);
        f
    }
}

/// The fields of a wire item or message that identify it (type, role, ids, name),
/// as compact JSON: what a finding quotes.
pub(crate) fn identity(v: &Value) -> String {
    let mut out = serde_json::Map::new();
    for key in ["call_id", "tool_call_id", "id", "type", "role", "name"] {
        if let Some(x) = v.get(key)
            && !x.is_null()
        {
            out.insert(key.to_owned(), x.clone());
        }
    }
    Value::Object(out).to_string()
}

#[cfg(test)]
mod tests_chat;
#[cfg(test)]
mod tests_responses;
#[cfg(test)]
mod tests_tools;
