//! The bytes of a cached prefix (`system`, `tools`) and the judge's digest of them,
//! remembered per thread for the last few prefixes.
//!
//! Guarantee: every answer is the one computing it again would give. A hit needs the
//! same `system` and tools that write the same bytes ([`same_tools`]: the same
//! allocation, or names, descriptions and schemas equal key for key in the same order,
//! numbers by their text), compared with the judge's own code, never the engine's. An
//! allocation the memo holds cannot be freed and reused for other tools meanwhile.
//!
//! Why: every seed serializes its tools at its first request, once for the trace, once
//! for `prefix_stable` and once more for `prefix_reported`'s digest, and the world's
//! tool lists are shared by every seed a thread runs: those three writes of the same
//! schemas were a fifth of a short seed's judging.

use super::same_json::same_tools;
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use turnsim_core::ToolSpec;

/// One prefix as JSON text: what serde_json writes for `tools` and for `system`, and
/// the judge's digest of the two ([`crate::judge::prefix_digest`]), computed on demand.
pub struct PrefixBytes {
    pub tools_json: String,
    pub system_json: String,
    system: String,
    tools: Arc<[ToolSpec]>,
    digest: OnceCell<String>,
}

impl PrefixBytes {
    fn new(system: &str, tools: &Arc<[ToolSpec]>) -> Result<PrefixBytes, String> {
        let tools_json = serde_json::to_string(&**tools).map_err(|e| e.to_string())?;
        let system_json = serde_json::to_string(system).map_err(|e| e.to_string())?;
        Ok(PrefixBytes {
            tools_json,
            system_json,
            system: system.to_owned(),
            tools: Arc::clone(tools),
            digest: OnceCell::new(),
        })
    }

    /// The spec's prefix digest of these bytes, by the judge's own writer.
    pub fn digest(&self) -> &str {
        self.digest
            .get_or_init(|| crate::judge::prefix_digest::prefix_digest(&self.system, &self.tools))
    }
}

/// How many (allocation, prefix) pairs a thread remembers: a seed changes its
/// configuration a few times at most, its engine and twin hold equal tools in
/// allocations of their own, and consecutive seeds share theirs.
const KEPT: usize = 8;

type Memo = Vec<(Arc<[ToolSpec]>, Rc<PrefixBytes>)>;

thread_local! {
    static MEMO: RefCell<Memo> = const { RefCell::new(Vec::new()) };
}

/// The prefix `system` + `tools` as bytes, from the memo when it holds the same bytes.
/// The very allocation is looked for first; tools equal in another allocation are
/// compared in full once, then remembered by their allocation too.
pub fn prefix_bytes(system: &str, tools: &Arc<[ToolSpec]>) -> Result<Rc<PrefixBytes>, String> {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let by_address = memo
            .iter()
            .position(|(t, p)| Arc::ptr_eq(t, tools) && p.system == system);
        if let Some(i) = by_address {
            let hit = memo.remove(i);
            let bytes = Rc::clone(&hit.1);
            memo.insert(0, hit);
            return Ok(bytes);
        }
        let by_bytes = memo
            .iter()
            .find(|(t, p)| p.system == system && same_tools(t, tools))
            .map(|(_, p)| Rc::clone(p));
        let bytes = match by_bytes {
            Some(p) => p,
            None => Rc::new(PrefixBytes::new(system, tools)?),
        };
        memo.truncate(KEPT - 1);
        memo.insert(0, (Arc::clone(tools), Rc::clone(&bytes)));
        Ok(bytes)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools(schema: serde_json::Value) -> Arc<[ToolSpec]> {
        vec![ToolSpec {
            name: "read".into(),
            description: "Read a file.".into(),
            input_schema: schema,
        }]
        .into()
    }

    /// Prefixes equal as values but other bytes (keys reordered, `0.0` and `-0.0`,
    /// `1` and `1.0`), asked in turns and more of them than the memo keeps: every
    /// answer is the one computed from scratch.
    #[test]
    fn a_remembered_prefix_is_the_one_computed_again() {
        let schemas = [
            json!({"type": "object", "required": []}),
            json!({"required": [], "type": "object"}),
            json!({"minimum": 0.0}),
            json!({"minimum": -0.0}),
            json!({"minimum": 1}),
            json!({"minimum": 1.0}),
        ];
        let lists: Vec<Arc<[ToolSpec]>> = schemas.iter().cloned().map(tools).collect();
        for round in 0..3 {
            for (i, list) in lists.iter().enumerate() {
                for system in ["s", "t"] {
                    // A new allocation of equal tools as often as the same one.
                    let asked: Arc<[ToolSpec]> = if (i + round) % 2 == 0 {
                        Arc::clone(list)
                    } else {
                        list.iter().cloned().collect()
                    };
                    let got = prefix_bytes(system, &asked).expect("serializes");
                    let fresh = PrefixBytes::new(system, &asked).expect("serializes");
                    assert_eq!(got.tools_json, fresh.tools_json, "round {round}, {i}");
                    assert_eq!(got.system_json, fresh.system_json);
                    assert_eq!(got.digest(), fresh.digest());
                }
            }
        }
    }
}
