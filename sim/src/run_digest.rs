//! The run digest: one string that names every (seed, trace digest) pair of a run,
//! composable across machines.
//!
//! Guarantee: the digest of a set of seeds depends only on the set and each seed's
//! trace digest, never on the order the seeds ran in or how they were split, so the
//! shards of a range, each digested on its own machine and combined with
//! [`RunDigest::combine`], give exactly the digest of the whole range run on one
//! machine (`turnsim merge` relies on it).
//!
//! Why a sum: each pair is hashed on its own (BLAKE3 of the seed's little-endian bytes
//! and its trace digest) and the 256-bit hashes are added modulo 2^256. Addition is
//! associative and commutative, so partial sums combine in any grouping; the sum and
//! the seed count are then hashed once more, under a label, into the printed digest.
//! (Until this module the digest was one BLAKE3 stream over the pairs in seed order,
//! which only a machine holding every pair could compute; digests printed before it
//! differ from today's for the same range.) A sum is not a defence against someone
//! forging a set on purpose; it is a fingerprint that any changed, missing or extra
//! seed changes, which is what a regression digest needs.

/// The label hashed with the final sum, so the printed digest is never mistaken for
/// a plain BLAKE3 of some other input.
const LABEL: &[u8] = b"turnsim run digest v2\0";

/// A partial run digest: the seed count and the sum of the pairs' hashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunDigest {
    count: u64,
    /// Little-endian 64-bit limbs of a 256-bit number.
    sum: [u64; 4],
}

impl RunDigest {
    /// Adds one seed's pair.
    pub fn add(&mut self, seed: u64, trace_digest: &str) {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&seed.to_le_bytes());
        hasher.update(trace_digest.as_bytes());
        let bytes = hasher.finalize();
        self.count += 1;
        self.add_limbs(limbs(bytes.as_bytes()));
    }

    /// The digest of the union of two disjoint sets of seeds.
    pub fn combine(mut self, other: RunDigest) -> RunDigest {
        self.count += other.count;
        self.add_limbs(other.sum);
        self
    }

    /// How many seeds were added.
    pub fn count(&self) -> u64 {
        self.count
    }

    fn add_limbs(&mut self, other: [u64; 4]) {
        let mut carry = false;
        for (a, b) in self.sum.iter_mut().zip(other) {
            let (s1, c1) = a.overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *a = s2;
            carry = c1 || c2;
        }
    }

    /// The printed run digest (64 hex digits).
    pub fn finish(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(LABEL);
        hasher.update(&self.count.to_le_bytes());
        hasher.update(&self.sum_bytes());
        hasher.finalize().to_hex().to_string()
    }

    fn sum_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_exact_mut(8).zip(self.sum) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }

    /// The sum as 64 hex digits (little-endian bytes), as a summary file stores it.
    pub fn sum_hex(&self) -> String {
        self.sum_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A partial digest read back from a summary file: the seed count and
    /// [`RunDigest::sum_hex`].
    pub fn from_parts(count: u64, sum_hex: &str) -> Result<RunDigest, String> {
        let bad = || format!("expected 64 lowercase hex digits, got {sum_hex:?}");
        if sum_hex.len() != 64
            || !sum_hex
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&sum_hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(RunDigest {
            count,
            sum: limbs(&bytes),
        })
    }
}

fn limbs(bytes: &[u8; 32]) -> [u64; 4] {
    let mut out = [0u64; 4];
    for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(u64, &str)]) -> RunDigest {
        let mut d = RunDigest::default();
        for (seed, t) in pairs {
            d.add(*seed, t);
        }
        d
    }

    #[test]
    fn the_digest_does_not_depend_on_order_or_grouping() {
        let pairs = [(0, "aa"), (1, "bb"), (2, "cc"), (3, "dd")];
        let whole = of(&pairs).finish();
        let reversed: Vec<_> = pairs.iter().rev().copied().collect();
        assert_eq!(of(&reversed).finish(), whole);
        let split = of(&[(3, "dd"), (0, "aa")]).combine(of(&[(2, "cc"), (1, "bb")]));
        assert_eq!(split.finish(), whole);
        assert_eq!(split.count(), 4);
    }

    #[test]
    fn a_changed_missing_or_extra_seed_changes_the_digest() {
        let base = of(&[(0, "aa"), (1, "bb")]).finish();
        assert_ne!(of(&[(0, "aa"), (1, "bc")]).finish(), base);
        assert_ne!(of(&[(0, "aa")]).finish(), base);
        assert_ne!(of(&[(0, "aa"), (1, "bb"), (2, "cc")]).finish(), base);
        assert_ne!(of(&[(0, "bb"), (1, "aa")]).finish(), base);
    }

    #[test]
    fn the_sum_carries_across_limbs_and_wraps_at_two_to_the_256() {
        let mut d = RunDigest::from_parts(1, &"ff".repeat(32)).expect("valid");
        d.add_limbs([1, 0, 0, 0]);
        assert_eq!(d.sum, [0; 4]);
        let mut d = RunDigest::from_parts(1, &format!("{}{}", "ff".repeat(8), "00".repeat(24)))
            .expect("valid");
        d.add_limbs([1, 0, 0, 0]);
        assert_eq!(d.sum, [0, 1, 0, 0]);
    }

    #[test]
    fn a_sum_reads_back_from_its_hex() {
        let d = of(&[(7, "x"), (9, "y")]);
        assert_eq!(RunDigest::from_parts(2, &d.sum_hex()), Ok(d));
    }

    #[test]
    fn a_malformed_sum_is_an_error_naming_the_expected_form() {
        for bad in [
            "",
            "00",
            &"g0".repeat(32),
            &"AA".repeat(32),
            &"0".repeat(65),
        ] {
            assert_eq!(
                RunDigest::from_parts(0, bad),
                Err(format!("expected 64 lowercase hex digits, got {bad:?}"))
            );
        }
    }

    #[test]
    fn an_empty_run_sums_to_zero() {
        assert_eq!(RunDigest::default().sum_hex(), "0".repeat(64));
        assert_eq!(RunDigest::default().count(), 0);
    }
}
