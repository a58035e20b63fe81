//! Pure parsers for the command line's values: seed ranges, shards, durations.
//!
//! Guarantee: every parser is total. Any string gives either a value or a message that
//! says what was given and what is allowed; none panics, none overflows silently, and
//! none reads the environment except through the getter it is handed, so each is
//! tested with plain strings.
//!
//! Why shards are offsets modulo N: seed k, k+N, k+2N, ... gives every shard a share
//! of cheap and expensive seeds alike, and the shards of a range partition it exactly
//! whatever its length, so N parallel jobs together run each seed once.

use std::ops::Range;
use std::time::Duration;

const SEEDS_USAGE: &str = "expected A..B, A..=B or a single seed";

/// Parses `--seeds`: `A..B` (end exclusive), `A..=B` (end inclusive) or `N` (just
/// seed N). Numbers are decimal or `0x` hex. An empty range is an error, since a run
/// over no seed is almost certainly a typo.
pub fn parse_seed_range(s: &str) -> Result<Range<u64>, String> {
    let usage = || format!("--seeds: {SEEDS_USAGE}, got {s:?}");
    let text = s.trim();
    if text.is_empty() {
        return Err(usage());
    }
    let (start, end, inclusive) = if let Some((a, b)) = text.split_once("..=") {
        (a, Some(b), true)
    } else if let Some((a, b)) = text.split_once("..") {
        (a, Some(b), false)
    } else {
        (text, None, true)
    };
    let number = |part: &str| -> Result<u64, String> {
        let part = part.trim();
        parse_u64(part).map_err(|err| match err {
            NumberError::NotANumber if part == text => usage(),
            NumberError::NotANumber => format!(
                "{}; {part:?} is not a number (decimal, or 0x and hex digits)",
                usage()
            ),
            NumberError::TooLarge => format!(
                "--seeds: {part:?} is larger than the largest seed, {}",
                u64::MAX
            ),
        })
    };
    let start = number(start)?;
    let end = match end {
        Some(end) => number(end)?,
        None => start,
    };
    let end = if inclusive {
        end.checked_add(1).ok_or_else(|| {
            format!(
                "--seeds: {s:?} includes seed {}, which is past the last seed a range can \
                 hold; the largest inclusive end is {}",
                u64::MAX,
                u64::MAX - 1
            )
        })?
    } else {
        end
    };
    if end <= start {
        return Err(format!(
            "--seeds: {s:?} is empty; the end of A..B is exclusive and must be greater \
             than A (use A..=B to include B)"
        ));
    }
    Ok(start..end)
}

/// Parses one seed, decimal or `0x` hex, as `turnsim options` and `TURNSIM_SEED`
/// take it.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    parse_u64(s.trim()).map_err(|err| match err {
        NumberError::NotANumber => {
            format!("expected one seed (decimal, or 0x and hex digits), got {s:?}")
        }
        NumberError::TooLarge => {
            format!("{s:?} is larger than the largest seed, {}", u64::MAX)
        }
    })
}

enum NumberError {
    NotANumber,
    TooLarge,
}

/// A u64 in decimal or `0x`/`0X` hex.
fn parse_u64(part: &str) -> Result<u64, NumberError> {
    let (digits, radix) = match part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (part, 10),
    };
    // from_str_radix would accept a leading '+'; a seed is digits only.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(NumberError::NotANumber);
    }
    // With only digits left, the one way left to fail is overflow.
    u64::from_str_radix(digits, radix).map_err(|_| NumberError::TooLarge)
}

/// Parses `--shard K/N`: shard K of N, counting from 0, so `0/4` to `3/4`.
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let usage =
        || format!("--shard: expected K/N with 0 <= K < N, counting from 0 (e.g. 0/4), got {s:?}");
    let (k, n) = s.trim().split_once('/').ok_or_else(usage)?;
    let k = parse_decimal(k.trim()).ok_or_else(usage)?;
    let n = parse_decimal(n.trim()).ok_or_else(usage)?;
    check_shard(k, n).map_err(|why| format!("--shard: {why}"))
}

fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn check_shard(k: u64, n: u64) -> Result<(u64, u64), String> {
    if n == 0 {
        Err("a shard count of 0 has no shards; N must be at least 1".to_owned())
    } else if k >= n {
        Err(format!(
            "shard {k} of {n} does not exist; shards count from 0, so K must be below {n}"
        ))
    } else {
        Ok((k, n))
    }
}

pub const SHARD_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";
pub const SHARD_COUNT_VAR: &str = "JOB_COMPLETION_COUNT";

/// The shard given by an indexed batch job: `JOB_COMPLETION_INDEX` (set by the job
/// runner, 0-based) and `JOB_COMPLETION_COUNT` (the number of completions). Neither
/// set: `Ok(None)`. Only one set: an error naming the missing one, since guessing a
/// count would make shards overlap or leave seeds out.
pub fn shard_from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<(u64, u64)>, String> {
    let number = |name: &str, raw: &str| -> Result<u64, String> {
        parse_decimal(raw.trim())
            .ok_or_else(|| format!("{name}: expected a non-negative whole number, got {raw:?}"))
    };
    let both_or_neither = |set: &str, unset: &str| {
        format!(
            "{set} is set but {unset} is not; set both (the shard and the number of \
             shards) or neither"
        )
    };
    match (get(SHARD_INDEX_VAR), get(SHARD_COUNT_VAR)) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(both_or_neither(SHARD_INDEX_VAR, SHARD_COUNT_VAR)),
        (None, Some(_)) => Err(both_or_neither(SHARD_COUNT_VAR, SHARD_INDEX_VAR)),
        (Some(index), Some(count)) => {
            let k = number(SHARD_INDEX_VAR, &index)?;
            let n = number(SHARD_COUNT_VAR, &count)?;
            check_shard(k, n)
                .map(Some)
                .map_err(|why| format!("{SHARD_INDEX_VAR}/{SHARD_COUNT_VAR}: {why}"))
        }
    }
}

/// The seeds of `range` in shard `k` of `n`: those whose offset from `range.start` is
/// congruent to `k` modulo `n`, in increasing order. An invalid shard (`n == 0` or
/// `k >= n`) has no seeds rather than overlapping a valid one.
pub fn shard_seeds(range: Range<u64>, k: u64, n: u64) -> impl Iterator<Item = u64> {
    let first = if n == 0 || k >= n {
        None
    } else {
        range.start.checked_add(k).filter(|&s| s < range.end)
    };
    std::iter::successors(first, move |&seed| {
        seed.checked_add(n).filter(|&next| next < range.end)
    })
}

const DURATION_USAGE: &str =
    "expected a whole number with a unit, like 500ms, 30s, 5m or 2h (a bare number is seconds)";

/// Parses a duration: `500ms`, `30s`, `5m`, `2h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let usage = || format!("{DURATION_USAGE}, got {s:?}");
    let too_long = || format!("{s:?} is too long a duration");
    let amount = match parse_decimal(digits) {
        Some(amount) => amount,
        // `digits` holds only ASCII digits, so a non-empty one failed by overflowing.
        None if !digits.is_empty() => return Err(too_long()),
        None => return Err(usage()),
    };
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(amount)),
        "" | "s" => Ok(Duration::from_secs(amount)),
        "m" => amount
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(too_long),
        "h" => amount
            .checked_mul(3600)
            .map(Duration::from_secs)
            .ok_or_else(too_long),
        _ => Err(usage()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn seed_ranges_accept_exclusive_inclusive_and_single_forms() {
        assert_eq!(parse_seed_range("0..100"), Ok(0..100));
        assert_eq!(parse_seed_range("5..=9"), Ok(5..10));
        assert_eq!(parse_seed_range("42"), Ok(42..43));
        assert_eq!(parse_seed_range(" 1 .. 3 "), Ok(1..3));
        assert_eq!(parse_seed_range("0x10..0x20"), Ok(16..32));
        assert_eq!(parse_seed_range("0XfF"), Ok(255..256));
        assert_eq!(parse_seed_range("0..18446744073709551615"), Ok(0..u64::MAX));
        assert_eq!(
            parse_seed_range("0..=18446744073709551614"),
            Ok(0..u64::MAX)
        );
    }

    #[test]
    fn one_seed_is_decimal_or_hex_like_a_range() {
        assert_eq!(parse_seed("16"), Ok(16));
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed(" 0XfF "), Ok(255));
        assert_eq!(
            parse_seed("0..3"),
            Err("expected one seed (decimal, or 0x and hex digits), got \"0..3\"".to_owned())
        );
        assert_eq!(
            parse_seed("0x10000000000000000"),
            Err(
                "\"0x10000000000000000\" is larger than the largest seed, 18446744073709551615"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_seed_range_that_is_not_one_says_what_is_allowed() {
        assert_eq!(
            parse_seed_range("x"),
            Err("--seeds: expected A..B, A..=B or a single seed, got \"x\"".to_owned())
        );
        assert_eq!(
            parse_seed_range("1..y"),
            Err(
                "--seeds: expected A..B, A..=B or a single seed, got \"1..y\"; \"y\" is not \
                 a number (decimal, or 0x and hex digits)"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_seed_range(""),
            Err("--seeds: expected A..B, A..=B or a single seed, got \"\"".to_owned())
        );
        for bad in [
            "..5", "5..", "1...3", "+5", "-1", "0x", "1..2..3", "1.5", "0xg",
        ] {
            let err = parse_seed_range(bad).unwrap_err();
            assert!(err.starts_with("--seeds: "), "{bad}: {err}");
            assert!(
                err.contains("expected A..B, A..=B or a single seed"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn an_empty_seed_range_is_rejected() {
        for bad in ["5..5", "9..3"] {
            let err = parse_seed_range(bad).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "--seeds: {bad:?} is empty; the end of A..B is exclusive and must be \
                     greater than A (use A..=B to include B)"
                )
            );
        }
        assert!(parse_seed_range("9..=3").is_err());
    }

    #[test]
    fn seed_range_overflow_is_reported_not_wrapped() {
        let err = parse_seed_range("18446744073709551616").unwrap_err();
        assert_eq!(
            err,
            "--seeds: \"18446744073709551616\" is larger than the largest seed, \
             18446744073709551615"
        );
        let err = parse_seed_range("18446744073709551615").unwrap_err();
        assert!(
            err.contains("the largest inclusive end is 18446744073709551614"),
            "{err}"
        );
        assert!(parse_seed_range("0..=0xffffffffffffffff").is_err());
        assert!(parse_seed_range("0x10000000000000000").is_err());
    }

    #[test]
    fn shards_parse_as_k_of_n_counting_from_zero() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        assert_eq!(parse_shard(" 2 / 5 "), Ok((2, 5)));
    }

    #[test]
    fn a_bad_shard_says_what_is_allowed() {
        assert_eq!(
            parse_shard("4/4"),
            Err(
                "--shard: shard 4 of 4 does not exist; shards count from 0, so K must be \
                 below 4"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_shard("0/0"),
            Err("--shard: a shard count of 0 has no shards; N must be at least 1".to_owned())
        );
        for bad in ["", "1", "1/", "/4", "a/4", "-1/4", "1/4/5", "1.0/4"] {
            assert_eq!(
                parse_shard(bad),
                Err(format!(
                    "--shard: expected K/N with 0 <= K < N, counting from 0 (e.g. 0/4), got \
                     {bad:?}"
                )),
            );
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn shard_from_env_reads_both_variables_or_neither() {
        assert_eq!(shard_from_env(env(&[])), Ok(None));
        assert_eq!(
            shard_from_env(env(&[
                ("JOB_COMPLETION_INDEX", "2"),
                ("JOB_COMPLETION_COUNT", "8")
            ])),
            Ok(Some((2, 8)))
        );
    }

    #[test]
    fn shard_from_env_names_the_missing_variable() {
        assert_eq!(
            shard_from_env(env(&[("JOB_COMPLETION_INDEX", "2")])),
            Err(
                "JOB_COMPLETION_INDEX is set but JOB_COMPLETION_COUNT is not; set both (the \
                 shard and the number of shards) or neither"
                    .to_owned()
            )
        );
        assert_eq!(
            shard_from_env(env(&[("JOB_COMPLETION_COUNT", "2")])),
            Err(
                "JOB_COMPLETION_COUNT is set but JOB_COMPLETION_INDEX is not; set both (the \
                 shard and the number of shards) or neither"
                    .to_owned()
            )
        );
    }

    #[test]
    fn shard_from_env_rejects_bad_values_naming_the_variable() {
        assert_eq!(
            shard_from_env(env(&[
                ("JOB_COMPLETION_INDEX", "two"),
                ("JOB_COMPLETION_COUNT", "8")
            ])),
            Err(
                "JOB_COMPLETION_INDEX: expected a non-negative whole number, got \"two\""
                    .to_owned()
            )
        );
        assert_eq!(
            shard_from_env(env(&[
                ("JOB_COMPLETION_INDEX", "1"),
                ("JOB_COMPLETION_COUNT", "")
            ])),
            Err("JOB_COMPLETION_COUNT: expected a non-negative whole number, got \"\"".to_owned())
        );
        assert_eq!(
            shard_from_env(env(&[
                ("JOB_COMPLETION_INDEX", "8"),
                ("JOB_COMPLETION_COUNT", "8")
            ])),
            Err(
                "JOB_COMPLETION_INDEX/JOB_COMPLETION_COUNT: shard 8 of 8 does not exist; \
                 shards count from 0, so K must be below 8"
                    .to_owned()
            )
        );
    }

    #[test]
    fn the_shards_of_a_range_partition_it() {
        for (range, n) in [(0..100, 7), (5..6, 3), (10..10, 2), (3..50, 1), (0..4, 9)] {
            let mut all: Vec<u64> = (0..n)
                .flat_map(|k| shard_seeds(range.clone(), k, n))
                .collect();
            let total = all.len();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), total, "shards overlap for {range:?} / {n}");
            assert_eq!(all, range.clone().collect::<Vec<_>>(), "{range:?} / {n}");
        }
    }

    #[test]
    fn a_shard_takes_every_nth_seed_from_its_offset() {
        assert_eq!(shard_seeds(10..20, 1, 3).collect::<Vec<_>>(), [11, 14, 17]);
        assert_eq!(shard_seeds(10..20, 0, 1).count(), 10);
    }

    #[test]
    fn shards_near_the_top_of_u64_stop_without_overflow() {
        let range = u64::MAX - 5..u64::MAX;
        assert_eq!(shard_seeds(range, 2, 4).collect::<Vec<_>>(), [u64::MAX - 3]);
        assert_eq!(
            shard_seeds(0..u64::MAX, 0, u64::MAX).collect::<Vec<_>>(),
            [0]
        );
    }

    #[test]
    fn an_invalid_shard_has_no_seeds() {
        assert_eq!(shard_seeds(0..10, 0, 0).count(), 0);
        assert_eq!(shard_seeds(0..10, 3, 3).count(), 0);
    }

    #[test]
    fn durations_take_ms_s_m_h_or_bare_seconds() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration(" 10 s "), Ok(Duration::from_secs(10)));
    }

    #[test]
    fn a_bad_duration_says_what_is_allowed() {
        for bad in [
            "",
            "s",
            "1.5s",
            "-3s",
            "5d",
            "10 minutes",
            "ms500",
            "1h30m",
            "0x10",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err(format!(
                    "expected a whole number with a unit, like 500ms, 30s, 5m or 2h (a bare \
                     number is seconds), got {bad:?}"
                )),
            );
        }
    }

    #[test]
    fn a_duration_too_long_to_represent_is_an_error() {
        assert_eq!(
            parse_duration("18446744073709551615h"),
            Err("\"18446744073709551615h\" is too long a duration".to_owned())
        );
        assert_eq!(
            parse_duration("99999999999999999999999s"),
            Err("\"99999999999999999999999s\" is too long a duration".to_owned())
        );
        assert_eq!(
            parse_duration("18446744073709551615s"),
            Ok(Duration::from_secs(u64::MAX))
        );
    }
}
