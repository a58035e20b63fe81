//! The branches of a Claude Code session: every entry names its parent
//! (`parentUuid`), and a session rewound to an earlier prompt goes on from there, so
//! the file holds a tree whose branches are histories of their own.
//!
//! Guarantee: a branch is judged as the history the provider saw, its shared prefix
//! and then its own messages, never glued onto the branch it left. A fork is an
//! entry whose parent lies before the latest message of the branch being read;
//! what is *not* a fork is as important, because real logs point back all the time:
//! a tool result names the `tool_use` line it answers (parallel results point at
//! several lines of one assistant message), and a line continuing the latest message
//! or answering it hangs under that message. A parent the file does not hold (a
//! log cut at its start) is not a fork either: nothing earlier can be replayed. A
//! second root (an entry with a `uuid` and no parent) is a session rewound to its
//! first prompt: a branch with no prefix.
//!
//! Memory: the messages of the current window are kept (shared, not copied) so a
//! branch can replay its prefix: that is what every request of the window carried,
//! so it is bounded by the provider's context, not by the file. A compaction boundary
//! drops them.

use super::source::Located;
use std::collections::HashMap;

/// Where an entry sits among handed-out messages: before any, or on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Start,
    Node(usize),
}

/// The window's messages as a tree, and where every entry hangs in it.
#[derive(Default)]
pub(super) struct Tree {
    /// Handed-out messages with the index of the message before them.
    nodes: Vec<(Located, Option<usize>)>,
    /// The latest handed-out message of the branch being read.
    head: Option<usize>,
    at: HashMap<String, At>,
    /// The entries of each message still being assembled, oldest message first: they
    /// are handed out in that order.
    waiting: Vec<Vec<String>>,
}

impl Tree {
    /// Places an entry (`uuid`) on the message being assembled at `pending` (its
    /// index among the messages not yet handed out), or, with `None`, on the latest
    /// handed-out message.
    pub fn place(&mut self, uuid: Option<&str>, pending: Option<usize>) {
        let Some(uuid) = uuid else { return };
        match pending {
            Some(k) => {
                if self.waiting.len() <= k {
                    self.waiting.resize_with(k + 1, Vec::new);
                }
                self.waiting[k].push(uuid.to_owned());
            }
            None => {
                let at = self.head.map_or(At::Start, At::Node);
                self.at.insert(uuid.to_owned(), at);
            }
        }
    }

    /// The oldest message being assembled is handed out.
    pub fn handed_out(&mut self, message: &Located) {
        let i = self.nodes.len();
        self.nodes.push((message.clone(), self.head));
        self.head = Some(i);
        if !self.waiting.is_empty() {
            for uuid in self.waiting.remove(0) {
                self.at.insert(uuid, At::Node(i));
            }
        }
    }

    /// Whether an entry hanging under `parent` starts a new branch, while `pending`
    /// messages are still being assembled after the latest handed-out one. An entry
    /// of the tree (`uuid`) without a parent is a new root: a session rewound to its
    /// first prompt.
    pub fn forks(&self, uuid: Option<&str>, parent: Option<&str>, pending: usize) -> bool {
        let Some(parent) = parent else {
            return uuid.is_some() && (pending > 0 || self.head.is_some());
        };
        if self.waiting.iter().flatten().any(|u| u == parent) {
            return false;
        }
        match self.at.get(parent) {
            None => false,
            Some(At::Node(i)) => pending > 0 || Some(*i) != self.head,
            Some(At::Start) => pending > 0 || self.head.is_some(),
        }
    }

    /// The messages of the prefix a branch starting under `parent` continues (oldest
    /// first); the tree then reads on from there. Called once nothing is pending.
    pub fn branch(&mut self, parent: Option<&str>) -> Vec<Located> {
        let from = match parent.and_then(|p| self.at.get(p)) {
            Some(At::Node(i)) => Some(*i),
            _ => None,
        };
        let mut prefix = Vec::new();
        let mut cur = from;
        while let Some(i) = cur {
            prefix.push(self.nodes[i].0.clone());
            cur = self.nodes[i].1;
        }
        prefix.reverse();
        self.head = from;
        prefix
    }

    /// A compaction boundary: nothing before it is replayed into what follows.
    pub fn clear(&mut self) {
        *self = Tree::default();
    }
}
