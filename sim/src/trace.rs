//! The trace digest: a stable hash of every event and request byte of a run.
//!
//! Guarantee: two runs that feed the same bytes in the same order get the same digest
//! on every platform and version (BLAKE3 for the run's digest), and the same per-step
//! checkpoints (a word-wise multiply-rotate hash, specified here, not `std`'s hasher,
//! whose output may change between releases). The per-step checkpoints are cheap, so
//! every step keeps one and a determinism mismatch names the first differing step.

/// Feeds the run digest and the per-step checkpoint together.
#[derive(Clone)]
pub struct TraceHasher {
    run: blake3::Hasher,
    /// Small updates gathered before they reach BLAKE3, whose per-call cost dominates
    /// for the few bytes a step usually feeds.
    pending: Vec<u8>,
    step: u64,
    /// Reused for the JSON of each tool call's input, which would otherwise be a new
    /// `String` built through `fmt` per block hashed.
    scratch: String,
}

/// Sixteen BLAKE3 chunks: flushed in whole multiples of this, every chunk reaches
/// BLAKE3 in a batch it hashes eight at a time (AVX2) rather than a few; the digest
/// does not depend on how bytes are split between updates. (8 KiB leaves less for
/// `finish` but measured 0.2 M instructions worse over 200 seeds.)
const FLUSH_AT: usize = 16 * 1024;

const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// What the other three lanes of a long update start from, XORed into the running
/// value, so that the lanes differ even when the bytes repeat every eight.
const L1: u64 = 0xC2B2_AE3D_27D4_EB4F;
const L2: u64 = 0x1656_67B1_9E37_79F9;
const L3: u64 = 0x85EB_CA77_C2B2_AE63;

impl Default for TraceHasher {
    fn default() -> Self {
        TraceHasher {
            run: blake3::Hasher::new(),
            pending: Vec::with_capacity(FLUSH_AT * 2),
            step: K,
            scratch: String::new(),
        }
    }
}

impl TraceHasher {
    #[inline]
    pub fn update(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= FLUSH_AT {
            self.flush();
        }
        let mut h = self.step;
        // Long updates (log records, tool output) in 32-byte blocks over four lanes:
        // one chain of multiplies per word would wait on each product, four run side
        // by side; the lanes start from the running value and fold back into it, so
        // every byte and its place still change the checkpoint.
        let mut blocks = bytes.chunks_exact(32);
        if bytes.len() >= 64 {
            let mut lanes = [h, h ^ L1, h ^ L2, h ^ L3];
            for block in &mut blocks {
                for (lane, c) in lanes.iter_mut().zip(block.chunks_exact(8)) {
                    let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                    *lane = (lane.rotate_left(23) ^ w).wrapping_mul(K);
                }
            }
            for lane in lanes {
                h = (h.rotate_left(23) ^ lane).wrapping_mul(K);
            }
        }
        let tail = if bytes.len() >= 64 {
            blocks.remainder()
        } else {
            bytes
        };
        let mut chunks = tail.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            h = (h.rotate_left(23) ^ w).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            h = (h.rotate_left(23) ^ u64::from_le_bytes(last) ^ (rest.len() as u64) << 56)
                .wrapping_mul(K);
        }
        self.step = h;
    }

    /// Hands BLAKE3 the whole multiples of `FLUSH_AT` pending; the rest waits. Every
    /// BLAKE3 update then starts on a chunk boundary with no partial chunk buffered, so
    /// all its chunks are hashed eight at a time, none alone. Out of line: it runs once
    /// per 16 KiB, `update` once per field.
    #[inline(never)]
    fn flush(&mut self) {
        let whole = self.pending.len() - self.pending.len() % FLUSH_AT;
        self.run.update(&self.pending[..whole]);
        self.pending.drain(..whole);
    }

    /// Feeds a message field by field: the same information as its JSON (role, each
    /// block's kind and every string), without paying for JSON escaping on the hot path.
    pub fn message(&mut self, m: &turnsim_core::Message) {
        use turnsim_core::{Block, Content, ToolResultContent};
        let field = |h: &mut TraceHasher, b: &[u8]| {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(b);
        };
        field(self, m.role.as_str().as_bytes());
        match &m.content {
            Content::Text(t) => field(self, t.as_bytes()),
            Content::Blocks(blocks) => {
                for b in blocks {
                    field(self, b.kind().as_bytes());
                    match b {
                        Block::Text { text } => field(self, text.as_bytes()),
                        Block::Thinking {
                            thinking,
                            signature,
                        } => {
                            field(self, thinking.as_bytes());
                            field(self, signature.as_bytes());
                        }
                        Block::RedactedThinking { data } => field(self, data.as_bytes()),
                        Block::ToolUse { id, name, input } => {
                            field(self, id.as_bytes());
                            field(self, name.as_bytes());
                            // The bytes `input.to_string()` gives (compact JSON), written
                            // into a kept buffer by core's writer, which writes
                            // serde_json's bytes and escapes strings a word at a time.
                            let mut json = std::mem::take(&mut self.scratch);
                            json.clear();
                            let _ = turnsim_core::json::write(&mut json, input);
                            field(self, json.as_bytes());
                            self.scratch = json;
                        }
                        Block::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                        } => {
                            field(self, tool_use_id.as_bytes());
                            field(
                                self,
                                &[
                                    u8::from(is_error.unwrap_or(false)),
                                    u8::from(is_error.is_some()),
                                ],
                            );
                            match content {
                                ToolResultContent::Text(t) => field(self, t.as_bytes()),
                                ToolResultContent::Blocks(_) => field(
                                    self,
                                    serde_json::to_string(content)
                                        .unwrap_or_default()
                                        .as_bytes(),
                                ),
                            }
                        }
                        Block::Unknown(map) => field(
                            self,
                            serde_json::to_string(map).unwrap_or_default().as_bytes(),
                        ),
                    }
                }
            }
        }
    }

    /// The checkpoint after everything fed so far.
    pub fn checkpoint(&self) -> u64 {
        self.step
    }

    /// The run's digest, hex.
    pub fn finish(&self) -> String {
        let mut run = self.run.clone();
        run.update(&self.pending);
        run.finalize().to_hex().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_bytes_give_the_same_checkpoint_and_digest() {
        let mut a = TraceHasher::default();
        let mut b = TraceHasher::default();
        for h in [&mut a, &mut b] {
            h.update(b"step 1");
            h.update(b"persist 0123456789abcdef");
        }
        assert_eq!(a.checkpoint(), b.checkpoint());
        assert_eq!(a.finish(), b.finish());
    }

    #[test]
    fn the_digest_is_blake3_of_the_bytes_however_they_are_split() {
        // Sizes that cross the flush threshold at odd offsets, one far past it.
        let sizes = [1usize, 7, 16_380, 9, 40_000, 3, 16_384, 100, 5_000, 33_000];
        let mut fed = TraceHasher::default();
        let mut all = Vec::new();
        for (i, size) in sizes.into_iter().enumerate() {
            let bytes: Vec<u8> = (0..size).map(|j| (i * 31 + j * 7) as u8).collect();
            fed.update(&bytes);
            all.extend_from_slice(&bytes);
        }
        assert_eq!(fed.finish(), blake3::hash(&all).to_hex().to_string());
        assert!(fed.pending.len() < FLUSH_AT);
    }

    #[test]
    fn one_changed_byte_changes_the_checkpoint() {
        let mut a = TraceHasher::default();
        let mut b = TraceHasher::default();
        a.update(b"abcdefghij");
        b.update(b"abcdefghik");
        assert_ne!(a.checkpoint(), b.checkpoint());
    }

    #[test]
    fn in_a_long_update_every_byte_and_the_order_of_its_words_change_the_checkpoint() {
        // Long enough for the four lanes, with a tail past the last whole block.
        let base: Vec<u8> = (0..203u32).map(|i| (i * 7 % 251) as u8).collect();
        let of = |bytes: &[u8]| {
            let mut h = TraceHasher::default();
            h.update(bytes);
            h.checkpoint()
        };
        let first = of(&base);
        for at in 0..base.len() {
            let mut changed = base.clone();
            changed[at] ^= 1;
            assert_ne!(of(&changed), first, "byte {at}");
        }
        // Two words of one lane swapped, and two words of two lanes swapped.
        for (x, y) in [(0, 32), (0, 8)] {
            let mut swapped = base.clone();
            for k in 0..8 {
                swapped.swap(x + k, y + k);
            }
            assert_ne!(of(&swapped), first, "words at {x} and {y}");
        }
        // Equal repeated words still depend on the lane they fall in.
        assert_ne!(of(&[7u8; 64]), of(&[7u8; 72]));
    }

    #[test]
    fn a_tool_calls_input_is_hashed_as_its_compact_json_text() {
        let input = serde_json::json!({"path": "src/a \"b\".rs", "n": [1, 2.5, null]});
        let m = turnsim_core::Message::assistant_blocks(vec![turnsim_core::Block::ToolUse {
            id: "toolu_1".into(),
            name: "read".into(),
            input: input.clone(),
        }]);
        let mut fed = TraceHasher::default();
        fed.message(&m);
        fed.message(&m);
        let text = input.to_string();
        let fields: [&[u8]; 5] = [
            b"assistant",
            b"tool_use",
            b"toolu_1",
            b"read",
            text.as_bytes(),
        ];
        let mut by_hand = TraceHasher::default();
        for _ in 0..2 {
            for b in fields {
                by_hand.update(&(b.len() as u64).to_le_bytes());
                by_hand.update(b);
            }
        }
        assert_eq!(fed.checkpoint(), by_hand.checkpoint());
        assert_eq!(fed.finish(), by_hand.finish());
    }

    #[test]
    fn the_checkpoint_is_pinned_across_platforms() {
        let mut a = TraceHasher::default();
        a.update(b"turnsim");
        assert_eq!(a.checkpoint(), 3_013_733_215_052_691_048);
    }
}
