//! The summary file: one run's results as JSON (`turnsim run --summary-json`), and
//! the same shape for a merge of several (`turnsim merge`).
//!
//! Guarantee: a summary file says exactly which seeds ran. `ran` lists them as
//! progressions (`crate::seedset`), `not_run` as the `turnsim run` flags that run
//! the rest, and every count, the failures and the run digest are of exactly the
//! seeds in `ran`. [`read`] accepts a file only if those agree with each other (the
//! counts add up, every failure is a seed that ran, the digest is the one its partial
//! sum gives), so a hand-edited or truncated summary is an error, not a wrong merge.
//!
//! Why the partial sum is stored beside the digest: the digest is a hash of the sum
//! of per-seed hashes (`crate::run_digest`), and only the sum combines with another
//! shard's. The schema is documented in docs/scale-out.md; `format_version` changes
//! with any change to it.

pub mod merge;

use crate::checkers::{Invariant, Violation};
use crate::conventions::Judging;
use crate::options::{FaultKind, HOSTILE_KINDS};
use crate::provider::{Interruption, StreamPos};
use crate::run_digest::RunDigest;
use crate::runner::Summary;
use crate::scenario::EngineProcess;
use crate::seedset::{Progression, SeedFlags, first_common, normalize};
use crate::world::EnginePhase;
use crate::world::SHAPES;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The value of `format` in every summary file.
pub const FORMAT: &str = "turnsim-summary";
/// The schema version this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A summary file, field for field (docs/scale-out.md describes each).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryFile {
    pub format: String,
    pub format_version: u32,
    pub turnsim_version: String,
    pub options: RunOptions,
    /// The seed sets asked for, as `turnsim run` flags.
    pub requested: Vec<SeedFlags>,
    /// Exactly the seeds that ran.
    pub ran: Vec<Progression>,
    /// The requested seeds that did not start, as the flags that run them.
    pub not_run: Vec<SeedFlags>,
    /// Why seeds were left unstarted: `time`, `max_failures`, `interrupted`.
    pub stopped: Vec<String>,
    pub counts: Counts,
    pub faults: BTreeMap<FaultKind, u64>,
    pub checks: BTreeMap<Invariant, u64>,
    /// Hostile inputs handed, by kind (every kind, zeros included).
    pub hostile: BTreeMap<String, u64>,
    /// Replies and tool results planned with each shape of the wide grammar (every
    /// shape, zeros included); a file written before the count existed has none.
    #[serde(default)]
    pub shapes: BTreeMap<String, u64>,
    /// Fault kind, then engine phase: whether the combination was hit. Only possible
    /// combinations are listed.
    pub coverage: BTreeMap<FaultKind, BTreeMap<String, bool>>,
    /// Interruption, then stream position: whether the pair was hit. Only possible
    /// pairs are listed; a file written before the gate existed has none.
    #[serde(default)]
    pub stream_coverage: BTreeMap<String, BTreeMap<String, bool>>,
    pub failures: Vec<FailureEntry>,
    pub digest: String,
    pub digest_sum: String,
    /// Not part of the results: two runs of one range differ here and nowhere else.
    pub wall_clock: WallClock,
}

/// What decides a seed's result besides the seed: two summaries merge only if these
/// are equal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    pub engine: String,
    pub engine_process: Option<EngineProcess>,
    pub judging: Judging,
    pub check_determinism: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    pub seeds: u64,
    pub not_started: u64,
    pub failed: u64,
    pub steps: u64,
    pub events: u64,
    pub tool_runs: u64,
}

/// One failing seed and where its scenario went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureEntry {
    pub seed: u64,
    pub invariant: Invariant,
    pub step: u64,
    pub message: String,
    /// The scenario file as the run wrote it (relative to the run's directory when
    /// `--out` was relative); `null` when none was written.
    pub scenario: Option<String>,
    /// Why there is no scenario file, when there is none.
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallClock {
    /// The run's seconds; for a merge, the longest input's.
    pub seconds: f64,
    /// Worker threads; for a merge, the sum over the inputs.
    pub jobs: u64,
    /// How many run summaries this one is made of.
    pub summaries: u64,
}

/// Everything `turnsim run` knows at its end that a summary file holds.
pub struct RunFacts<'a> {
    pub options: RunOptions,
    pub range: std::ops::Range<u64>,
    pub shard: Option<(u64, u64)>,
    pub summary: &'a Summary,
    /// Per failing seed: the scenario file, or why there is none.
    pub scenarios: BTreeMap<u64, Result<String, String>>,
    pub stopped: Option<&'static str>,
    pub seconds: f64,
    pub jobs: u64,
}

impl SummaryFile {
    /// The summary of one run. The seeds that ran are the first `summary.seeds` of
    /// the shard's seeds ([`crate::runner::run_batch_with`] starts them in order).
    pub fn of_run(f: RunFacts<'_>) -> SummaryFile {
        let s = f.summary;
        let all = Progression::of_shard(&f.range, f.shard);
        let ran = all.prefix(s.seeds);
        let failures = s
            .failures
            .iter()
            .map(|(seed, v)| {
                let (scenario, note) = match f.scenarios.get(seed) {
                    Some(Ok(path)) => (Some(path.clone()), None),
                    Some(Err(why)) => (None, Some(why.clone())),
                    None => (None, Some("no scenario was saved".to_string())),
                };
                FailureEntry {
                    seed: *seed,
                    invariant: v.invariant,
                    step: v.step,
                    message: v.message.clone(),
                    scenario,
                    note,
                }
            })
            .collect();
        SummaryFile {
            format: FORMAT.to_string(),
            format_version: FORMAT_VERSION,
            turnsim_version: env!("CARGO_PKG_VERSION").to_string(),
            options: f.options,
            requested: vec![SeedFlags::of(&f.range, f.shard)],
            ran: normalize(&[ran]),
            not_run: all.after(s.seeds).as_flags().into_iter().collect(),
            stopped: f.stopped.map(str::to_string).into_iter().collect(),
            counts: Counts {
                seeds: s.seeds,
                not_started: s.skipped,
                failed: s.failures.len() as u64,
                steps: s.steps,
                events: s.events,
                tool_runs: s.tool_executions,
            },
            faults: FaultKind::ALL
                .iter()
                .map(|k| (*k, s.faults.get(k).copied().unwrap_or(0)))
                .collect(),
            checks: s
                .checks
                .iter()
                .filter_map(|(name, n)| name.parse::<Invariant>().ok().map(|i| (i, *n)))
                .collect(),
            hostile: HOSTILE_KINDS
                .iter()
                .map(|k| (k.to_string(), s.hostile.get(k).copied().unwrap_or(0)))
                .collect(),
            shapes: SHAPES
                .iter()
                .map(|k| (k.to_string(), s.shapes.get(k).copied().unwrap_or(0)))
                .collect(),
            coverage: coverage_matrix(&s.coverage),
            stream_coverage: stream_matrix(&s.stream_coverage),
            failures,
            digest: s.run_digest.finish(),
            digest_sum: s.run_digest.sum_hex(),
            wall_clock: WallClock {
                seconds: f.seconds,
                jobs: f.jobs,
                summaries: 1,
            },
        }
    }

    /// The results as a [`Summary`], for the printed report.
    pub fn to_summary(&self) -> Result<Summary, String> {
        let mut coverage = BTreeSet::new();
        for (kind, phases) in &self.coverage {
            for (name, hit) in phases {
                if *hit {
                    coverage.insert((*kind, phase(name)?));
                }
            }
        }
        let mut stream_coverage = BTreeSet::new();
        for (how, row) in &self.stream_coverage {
            for (pos, hit) in row {
                if *hit {
                    stream_coverage.insert(stream_cell(how, pos)?);
                }
            }
        }
        let shapes = self
            .shapes
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| {
                SHAPES
                    .iter()
                    .find(|known| *known == k)
                    .map(|known| (*known, *n))
                    .ok_or_else(|| format!("shapes: unknown shape {k:?}"))
            })
            .collect::<Result<_, String>>()?;
        Ok(Summary {
            stream_coverage,
            shapes,
            seeds: self.counts.seeds,
            skipped: self.counts.not_started,
            steps: self.counts.steps,
            events: self.counts.events,
            tool_executions: self.counts.tool_runs,
            failures: self
                .failures
                .iter()
                .map(|f| {
                    let v = Violation {
                        invariant: f.invariant,
                        step: f.step,
                        message: f.message.clone(),
                    };
                    (f.seed, v)
                })
                .collect(),
            faults: self.faults.clone(),
            coverage,
            checks: self.checks.iter().map(|(i, n)| (i.name(), *n)).collect(),
            hostile: self
                .hostile
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(k, n)| {
                    HOSTILE_KINDS
                        .iter()
                        .find(|known| *known == k)
                        .map(|known| (*known, *n))
                        .ok_or_else(|| format!("hostile: unknown kind {k:?}"))
                })
                .collect::<Result<_, _>>()?,
            digest: self.digest.clone(),
            run_digest: self.run_digest()?,
            // Not stored in a summary file: a merged run shows only what was handed.
            hostile_not_applicable: BTreeMap::new(),
        })
    }

    fn run_digest(&self) -> Result<RunDigest, String> {
        RunDigest::from_parts(self.counts.seeds, &self.digest_sum)
            .map_err(|e| format!("digest_sum: {e}"))
    }

    /// Every seed set of `requested`, as progressions.
    pub fn requested_seeds(&self) -> Result<Vec<Progression>, String> {
        self.requested
            .iter()
            .map(|r| r.progression().map_err(|e| format!("requested: {e}")))
            .collect()
    }

    /// The stopping reasons as the printed summary words them.
    pub fn stopped_text(&self) -> Option<String> {
        let words: Vec<&str> = self
            .stopped
            .iter()
            .map(|s| match s.as_str() {
                "time" => "--time budget spent",
                "max_failures" => "--max-failures reached",
                "interrupted" => "interrupted by Ctrl-C",
                other => other,
            })
            .collect();
        (!words.is_empty()).then(|| words.join("; "))
    }

    /// Whether the file agrees with itself (see the module comment); the first
    /// disagreement found, naming the field, otherwise.
    pub fn check(&self) -> Result<(), String> {
        let requested = self.requested_seeds()?;
        disjoint("requested", &requested)?;
        for p in &self.ran {
            p.check().map_err(|e| format!("ran: {e}"))?;
        }
        disjoint("ran", &self.ran)?;
        let not_run: Vec<Progression> = self
            .not_run
            .iter()
            .map(|r| r.progression().map_err(|e| format!("not_run: {e}")))
            .collect::<Result<_, _>>()?;
        let total = |ps: &[Progression]| ps.iter().map(|p| u128::from(p.count)).sum::<u128>();
        let c = &self.counts;
        if total(&self.ran) != u128::from(c.seeds) {
            return Err(format!(
                "counts.seeds is {} but `ran` holds {} seeds",
                c.seeds,
                total(&self.ran)
            ));
        }
        if total(&not_run) != u128::from(c.not_started) {
            return Err(format!(
                "counts.not_started is {} but `not_run` holds {} seeds",
                c.not_started,
                total(&not_run)
            ));
        }
        if total(&requested) != u128::from(c.seeds) + u128::from(c.not_started) {
            return Err(format!(
                "`requested` holds {} seeds but {} ran and {} did not start",
                total(&requested),
                c.seeds,
                c.not_started
            ));
        }
        if c.failed != self.failures.len() as u64 {
            return Err(format!(
                "counts.failed is {} but `failures` lists {}",
                c.failed,
                self.failures.len()
            ));
        }
        if let Some(w) = self.failures.windows(2).find(|w| w[0].seed >= w[1].seed) {
            return Err(format!(
                "failures: seed {} is listed after seed {}; expected increasing seeds",
                w[1].seed, w[0].seed
            ));
        }
        if let Some(f) = self
            .failures
            .iter()
            .find(|f| !self.ran.iter().any(|p| p.contains(f.seed)))
        {
            return Err(format!("failures: seed {} is not a seed in `ran`", f.seed));
        }
        if let Some(k) = FaultKind::ALL.iter().find(|k| !self.faults.contains_key(k)) {
            return Err(format!(
                "faults: no count for {k}; expected every fault kind"
            ));
        }
        if self.coverage != coverage_matrix(&self.to_summary()?.coverage) {
            return Err(
                "coverage: expected each possible fault kind x engine phase exactly once"
                    .to_string(),
            );
        }
        let digest = self.run_digest()?.finish();
        if digest != self.digest {
            return Err(format!(
                "digest is {} but digest_sum and counts.seeds give {digest}",
                self.digest
            ));
        }
        Ok(())
    }
}

fn disjoint(field: &str, pieces: &[Progression]) -> Result<(), String> {
    for (i, a) in pieces.iter().enumerate() {
        for b in &pieces[i + 1..] {
            if let Some(seed) = first_common(a, b) {
                return Err(format!("{field}: seed {seed} is listed twice"));
            }
        }
    }
    Ok(())
}

fn phase(name: &str) -> Result<EnginePhase, String> {
    EnginePhase::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            let known: Vec<&str> = EnginePhase::ALL.iter().map(|p| p.name()).collect();
            format!(
                "coverage: unknown engine phase {name:?}; expected one of: {}",
                known.join(", ")
            )
        })
}

/// The coverage matrix with every possible combination, hit or not.
fn coverage_matrix(
    hit: &BTreeSet<(FaultKind, EnginePhase)>,
) -> BTreeMap<FaultKind, BTreeMap<String, bool>> {
    FaultKind::ALL
        .iter()
        .map(|k| {
            let row = EnginePhase::ALL
                .iter()
                .filter(|p| p.possible(*k))
                .map(|p| (p.name().to_string(), hit.contains(&(*k, *p))))
                .collect();
            (*k, row)
        })
        .collect()
}

/// The stream coverage matrix with every possible pair, hit or not.
fn stream_matrix(
    hit: &BTreeSet<(Interruption, StreamPos)>,
) -> BTreeMap<String, BTreeMap<String, bool>> {
    Interruption::ALL
        .iter()
        .map(|how| {
            let row = StreamPos::ALL
                .iter()
                .filter(|p| how.possible(**p))
                .map(|p| (p.name().to_string(), hit.contains(&(*how, *p))))
                .collect();
            (how.name().to_string(), row)
        })
        .collect()
}

fn stream_cell(how: &str, pos: &str) -> Result<(Interruption, StreamPos), String> {
    let how = Interruption::ALL
        .into_iter()
        .find(|h| h.name() == how)
        .ok_or_else(|| format!("stream_coverage: unknown interruption {how:?}"))?;
    let pos = StreamPos::ALL
        .into_iter()
        .find(|p| p.name() == pos)
        .ok_or_else(|| format!("stream_coverage: unknown stream position {pos:?}"))?;
    Ok((how, pos))
}

/// Reads and checks one summary file.
pub fn read(path: &Path) -> Result<SummaryFile, String> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{name}: cannot read it: {e}"))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{name}: not JSON ({e}); expected a turnsim summary file"))?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(format!(
            "{name}: not a turnsim summary file (expected \"format\": \"{FORMAT}\", as \
             `turnsim run --summary-json` writes)"
        ));
    }
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(FORMAT_VERSION)) {
        return Err(format!(
            "{name}: summary format_version {} is not the one this turnsim reads ({FORMAT_VERSION})",
            version.map_or("(missing)".to_string(), |v| v.to_string())
        ));
    }
    let file: SummaryFile = serde_path_to_error::deserialize(value)
        .map_err(|e| format!("{name}: at {}: {}", e.path(), e.inner()))?;
    file.check().map_err(|e| format!("{name}: {e}"))?;
    Ok(file)
}

/// The file as written: pretty JSON and a final newline.
pub fn to_json(file: &SummaryFile) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(file)
        .map_err(|e| format!("cannot write the summary as JSON: {e}"))?;
    text.push('\n');
    Ok(text)
}
