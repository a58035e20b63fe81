//! Sets of seeds as arithmetic progressions: what a shard asked for, which of its
//! seeds ran, and which did not.
//!
//! Guarantee: a [`Progression`] names its seeds exactly (first, step, count), whatever
//! their number, and [`first_common`] finds the lowest seed two progressions share,
//! or proves they share none, in constant time. So `turnsim merge` can refuse two
//! summaries that cover a seed twice without listing any seed, and a summary of a
//! billion seeds stays a few lines long.
//!
//! Why progressions: a shard `K/N` of `A..B` is the progression `A+K, A+K+N, ...`
//! (`crate::cliargs::shard_seeds`), and a time-boxed shard runs a prefix of it
//! (`crate::runner::run_batch_with` starts seeds in order), which is again a
//! progression. The union of every shard of a range is the range itself, which
//! [`normalize`] writes back as one progression of step 1.

use crate::cliargs::{parse_seed_range, parse_shard};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The seeds `first, first + step, ...`, `count` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Progression {
    pub first: u64,
    pub step: u64,
    pub count: u64,
}

impl Progression {
    /// The seeds of `range` in `shard` (all of it when `None`), in the order
    /// `turnsim run` starts them.
    pub fn of_shard(range: &Range<u64>, shard: Option<(u64, u64)>) -> Progression {
        let (k, n) = shard.unwrap_or((0, 1));
        match range.start.checked_add(k).filter(|&f| f < range.end) {
            Some(first) if n > 0 && k < n => Progression {
                first,
                step: n,
                count: (range.end - first - 1) / n + 1,
            },
            _ => Progression::EMPTY,
        }
    }

    pub const EMPTY: Progression = Progression {
        first: 0,
        step: 1,
        count: 0,
    };

    /// The last seed, if any.
    pub fn last(&self) -> Option<u64> {
        let span = (self.count.checked_sub(1)?).checked_mul(self.step)?;
        self.first.checked_add(span)
    }

    /// The first `n` seeds.
    pub fn prefix(&self, n: u64) -> Progression {
        Progression {
            count: n.min(self.count),
            ..*self
        }
        .normalized()
    }

    /// The seeds after the first `n`.
    pub fn after(&self, n: u64) -> Progression {
        if n >= self.count {
            return Progression::EMPTY;
        }
        Progression {
            first: self.first + n * self.step,
            step: self.step,
            count: self.count - n,
        }
        .normalized()
    }

    pub fn contains(&self, seed: u64) -> bool {
        match self.last() {
            Some(last) => {
                seed >= self.first && seed <= last && (seed - self.first).is_multiple_of(self.step)
            }
            None => false,
        }
    }

    /// One spelling per set: an empty progression is [`Progression::EMPTY`] and one
    /// of a single seed has step 1.
    pub fn normalized(self) -> Progression {
        match self.count {
            0 => Progression::EMPTY,
            1 => Progression { step: 1, ..self },
            _ => self,
        }
    }

    /// Whether a stored progression is well formed: a step of at least 1, at least
    /// one seed, and a last seed below `u64::MAX` (so `first..last+1` is a range).
    pub fn check(&self) -> Result<(), String> {
        if self.step == 0 {
            return Err(format!(
                "{self:?} has step 0; expected a step of at least 1"
            ));
        }
        if self.count == 0 {
            return Err(format!(
                "{self:?} holds no seed; expected a count of at least 1"
            ));
        }
        match self.last() {
            Some(last) if last < u64::MAX => Ok(()),
            _ => Err(format!(
                "{self:?} runs past the last seed a range can hold ({})",
                u64::MAX - 1
            )),
        }
    }

    /// The `turnsim run` flags that run exactly these seeds: `--seeds first..last+1`
    /// and, for a step above 1, `--shard 0/step`. `None` for an empty progression.
    pub fn as_flags(&self) -> Option<SeedFlags> {
        let end = self.last()?.checked_add(1)?;
        Some(SeedFlags {
            seeds: format!("{}..{end}", self.first),
            shard: (self.step > 1 && self.count > 1).then(|| format!("0/{}", self.step)),
        })
    }
}

/// A seed set as `turnsim run` flags: `--seeds` and an optional `--shard`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedFlags {
    pub seeds: String,
    pub shard: Option<String>,
}

impl SeedFlags {
    pub fn of(range: &Range<u64>, shard: Option<(u64, u64)>) -> SeedFlags {
        SeedFlags {
            seeds: format!("{}..{}", range.start, range.end),
            shard: shard.map(|(k, n)| format!("{k}/{n}")),
        }
    }

    /// The seeds the flags name; an error if either flag does not parse.
    pub fn progression(&self) -> Result<Progression, String> {
        let range = parse_seed_range(&self.seeds)?;
        let shard = self.shard.as_deref().map(parse_shard).transpose()?;
        Ok(Progression::of_shard(&range, shard))
    }

    /// The flags as they are typed: `--seeds A..B --shard K/N`.
    pub fn command_line(&self) -> String {
        match &self.shard {
            Some(s) => format!("--seeds {} --shard {s}", self.seeds),
            None => format!("--seeds {}", self.seeds),
        }
    }
}

/// The lowest seed in both `a` and `b`, or `None` if they share none. Solves
/// `x = a.first (mod a.step)`, `x = b.first (mod b.step)` by the Chinese remainder
/// theorem in 128-bit arithmetic, then bounds `x` by both progressions' ends.
pub fn first_common(a: &Progression, b: &Progression) -> Option<u64> {
    let (a_last, b_last) = (a.last()?, b.last()?);
    let lo = u128::from(a.first.max(b.first));
    let hi = u128::from(a_last.min(b_last));
    if lo > hi {
        return None;
    }
    let (p, q) = (u128::from(a.step.max(1)), u128::from(b.step.max(1)));
    let g = gcd(p, q);
    let diff = i128::from(b.first) - i128::from(a.first);
    if diff.rem_euclid(g as i128) != 0 {
        return None;
    }
    let (p1, q1) = (p / g, q / g);
    // t with a.first + p*t = b.first (mod q): p1*t = diff/g (mod q1).
    let rhs = (diff / g as i128).rem_euclid(q1 as i128) as u128;
    let t = if q1 == 1 {
        0
    } else {
        (rhs * mod_inverse(p1 % q1, q1)?) % q1
    };
    // Below 2^128: a.first < 2^64 and p*t < p*q1 <= (2^64-1)^2.
    let x0 = u128::from(a.first) + p * t;
    let lcm = p1 * q;
    // x0 is the lowest common value at or above a.first; step up to lo if needed.
    let x = if x0 >= lo {
        x0
    } else {
        x0.checked_add((lo - x0).div_ceil(lcm).checked_mul(lcm)?)?
    };
    (x <= hi).then_some(x as u64)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The inverse of `a` modulo `m` (coprime, both below 2^64), by extended Euclid.
fn mod_inverse(a: u128, m: u128) -> Option<u128> {
    let (mut old_r, mut r) = (a as i128, m as i128);
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let quotient = old_r / r;
        (old_r, r) = (r, old_r - quotient * r);
        (old_s, s) = (s, old_s - quotient * s);
    }
    (old_r == 1).then(|| old_s.rem_euclid(m as i128) as u128)
}

/// Disjoint progressions written in one spelling: empty ones dropped, sorted,
/// neighbours of one step that continue each other joined, and a set that fills its
/// span from lowest to highest seed written as one progression of step 1 (so the
/// shards of a range, together, read as the range).
pub fn normalize(pieces: &[Progression]) -> Vec<Progression> {
    let mut sorted: Vec<Progression> = pieces
        .iter()
        .map(|p| p.normalized())
        .filter(|p| p.count > 0)
        .collect();
    sorted.sort();
    let total: u128 = sorted.iter().map(|p| u128::from(p.count)).sum();
    let lo = sorted.iter().map(|p| p.first).min();
    let hi = sorted.iter().filter_map(|p| p.last()).max();
    if let (Some(lo), Some(hi)) = (lo, hi)
        && u128::from(hi - lo) + 1 == total
    {
        return vec![
            Progression {
                first: lo,
                step: 1,
                count: hi - lo + 1,
            }
            .normalized(),
        ];
    }
    let mut out: Vec<Progression> = Vec::new();
    for p in sorted {
        if let Some(prev) = out.last_mut()
            && let Some(last) = prev.last()
        {
            let step = if prev.count == 1 { p.step } else { prev.step };
            let joins = (p.step == step || p.count == 1) && last.checked_add(step) == Some(p.first);
            if joins {
                *prev = Progression {
                    first: prev.first,
                    step,
                    count: prev.count + p.count,
                };
                continue;
            }
        }
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cliargs::shard_seeds;
    use proptest::prelude::*;

    fn seeds(p: &Progression) -> Vec<u64> {
        (0..p.count).map(|i| p.first + i * p.step).collect()
    }

    #[test]
    fn a_shard_is_the_progression_of_its_seeds() {
        for (range, k, n) in [(0..10, 1, 3), (5..6, 0, 4), (5..6, 1, 4), (0..1000, 3, 4)] {
            let p = Progression::of_shard(&range, Some((k, n)));
            let want: Vec<u64> = shard_seeds(range.clone(), k, n).collect();
            assert_eq!(seeds(&p.normalized()), want, "{range:?} {k}/{n}");
            assert_eq!(p.count as usize, want.len());
        }
        assert_eq!(Progression::of_shard(&(0..10), None).count, 10);
    }

    #[test]
    fn the_shards_of_a_range_normalize_to_the_range() {
        let range = 7..1007;
        let shards: Vec<Progression> = (0..4)
            .map(|k| Progression::of_shard(&range, Some((k, 4))))
            .collect();
        assert_eq!(
            normalize(&shards),
            vec![Progression {
                first: 7,
                step: 1,
                count: 1000
            }]
        );
    }

    #[test]
    fn a_prefix_and_the_rest_partition_a_progression() {
        let p = Progression::of_shard(&(0..100), Some((2, 4)));
        let (head, tail) = (p.prefix(10), p.after(10));
        assert_eq!(head.count + tail.count, p.count);
        assert_eq!(tail.first, 42);
        assert_eq!(first_common(&head, &tail), None);
        assert_eq!(normalize(&[head, tail]), vec![p]);
        assert_eq!(p.after(p.count), Progression::EMPTY);
    }

    #[test]
    fn flags_name_the_same_seeds_as_the_progression() {
        let p = Progression::of_shard(&(0..1000), Some((2, 4))).after(5);
        let flags = p.as_flags().expect("not empty");
        assert_eq!(flags.command_line(), "--seeds 22..999 --shard 0/4");
        assert_eq!(flags.progression(), Ok(p));
        assert_eq!(Progression::EMPTY.as_flags(), None);
    }

    #[test]
    fn a_malformed_progression_says_what_is_expected() {
        let p = |first, step, count| Progression { first, step, count };
        assert!(
            p(0, 0, 3)
                .check()
                .unwrap_err()
                .contains("expected a step of at least 1")
        );
        assert!(
            p(0, 1, 0)
                .check()
                .unwrap_err()
                .contains("expected a count of at least 1")
        );
        assert!(
            p(u64::MAX - 1, 1, 2)
                .check()
                .unwrap_err()
                .contains("runs past")
        );
        assert!(p(1, u64::MAX, 3).check().unwrap_err().contains("runs past"));
        assert_eq!(p(u64::MAX - 1, 1, 1).check(), Ok(()));
    }

    #[test]
    fn common_seeds_are_found_near_the_top_of_u64() {
        let a = Progression {
            first: u64::MAX - 1_000_001,
            step: 1_000_000,
            count: 2,
        };
        let b = Progression {
            first: u64::MAX - 11,
            step: 10,
            count: 2,
        };
        assert_eq!(first_common(&a, &b), Some(u64::MAX - 1));
        let c = Progression {
            first: 1,
            step: u64::MAX - 2,
            count: 2,
        };
        let d = Progression {
            first: 0,
            step: 3,
            count: u64::MAX / 3,
        };
        assert_eq!(first_common(&c, &d), None);
        let e = Progression {
            first: 3,
            step: u64::MAX - 3,
            count: 2,
        };
        assert_eq!(first_common(&e, &d), Some(3));
    }

    proptest! {
        #[test]
        fn first_common_agrees_with_listing_both(
            f1 in 0u64..60, s1 in 1u64..12, c1 in 0u64..12,
            f2 in 0u64..60, s2 in 1u64..12, c2 in 0u64..12,
        ) {
            let a = Progression { first: f1, step: s1, count: c1 };
            let b = Progression { first: f2, step: s2, count: c2 };
            let bs = seeds(&b);
            let want = seeds(&a).into_iter().find(|x| bs.contains(x));
            prop_assert_eq!(first_common(&a, &b), want);
            prop_assert_eq!(first_common(&b, &a), want);
        }

        #[test]
        fn normalizing_keeps_the_seeds(
            pieces in proptest::collection::vec((0u64..40, 1u64..6, 0u64..6), 0..5)
        ) {
            let pieces: Vec<Progression> = pieces
                .into_iter()
                .map(|(first, step, count)| Progression { first, step, count })
                .collect();
            let disjoint = pieces.iter().enumerate().all(|(i, a)| {
                pieces[i + 1..].iter().all(|b| first_common(a, b).is_none())
            });
            prop_assume!(disjoint);
            let mut before: Vec<u64> = pieces.iter().flat_map(seeds).collect();
            let mut after: Vec<u64> = normalize(&pieces).iter().flat_map(seeds).collect();
            before.sort();
            after.sort();
            prop_assert_eq!(before, after);
        }
    }
}
