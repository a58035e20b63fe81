//! `turnsim merge`: several summary files into one, as if their seeds had run on one
//! machine.
//!
//! Guarantee: the merge of summaries whose seeds partition a set is the summary a
//! single run of that set writes, apart from `wall_clock`: counts and fault, check
//! and coverage totals are sums and unions, failures are listed in seed order, the
//! digest is the combined partial sums' (`crate::run_digest`), and the seed sets
//! are written in the one spelling `crate::seedset::normalize` gives. Inputs that
//! cannot come from one fleet are refused before anything is combined: two turnsim
//! versions, two sets of options (engine, engine command, judging, determinism
//! checking), or a seed asked for by two files.

use super::{Counts, FORMAT, FORMAT_VERSION, SummaryFile, WallClock};
use crate::run_digest::RunDigest;
use crate::seedset::{Progression, SeedFlags, first_common, normalize};
use std::path::PathBuf;

/// Merges summary files read from `paths` (same order). An error names the files
/// that cannot be merged and why.
pub fn merge(inputs: &[(PathBuf, SummaryFile)]) -> Result<SummaryFile, String> {
    let Some((first_path, first)) = inputs.first() else {
        return Err("no summary files to merge".to_string());
    };
    for (path, f) in &inputs[1..] {
        if f.turnsim_version != first.turnsim_version {
            return Err(format!(
                "{} was written by turnsim {} and {} by turnsim {}; merge summaries of one \
                 version (a seed's result may differ between versions)",
                first_path.display(),
                first.turnsim_version,
                path.display(),
                f.turnsim_version
            ));
        }
        if let Some(field) = differing_option(first, f) {
            return Err(format!(
                "{} and {} ran with different {field}; merge summaries of one run \
                 configuration (each seed's result depends on it)",
                first_path.display(),
                path.display()
            ));
        }
    }
    let mut requested: Vec<(usize, Progression, &SeedFlags)> = Vec::new();
    for (i, (_, f)) in inputs.iter().enumerate() {
        for (flags, p) in f.requested.iter().zip(f.requested_seeds()?) {
            requested.push((i, p, flags));
        }
    }
    for (n, (i, a, fa)) in requested.iter().enumerate() {
        for (j, b, fb) in &requested[n + 1..] {
            if let Some(seed) = first_common(a, b) {
                return Err(format!(
                    "seed {seed} is in both {} ({}) and {} ({}); each seed may be in one \
                     summary only",
                    inputs[*i].0.display(),
                    fa.command_line(),
                    inputs[*j].0.display(),
                    fb.command_line()
                ));
            }
        }
    }
    let files: Vec<&SummaryFile> = inputs.iter().map(|(_, f)| f).collect();
    let mut out = SummaryFile {
        format: FORMAT.to_string(),
        format_version: FORMAT_VERSION,
        turnsim_version: first.turnsim_version.clone(),
        options: first.options.clone(),
        requested: merged_requested(&requested),
        ran: normalize(&files.iter().flat_map(|f| f.ran.clone()).collect::<Vec<_>>()),
        not_run: Vec::new(),
        stopped: Vec::new(),
        counts: Counts::default(),
        faults: first.faults.clone(),
        checks: Default::default(),
        hostile: Default::default(),
        shapes: Default::default(),
        coverage: first.coverage.clone(),
        stream_coverage: first.stream_coverage.clone(),
        failures: Vec::new(),
        digest: String::new(),
        digest_sum: String::new(),
        wall_clock: WallClock {
            seconds: 0.0,
            jobs: 0,
            summaries: 0,
        },
    };
    let mut not_run = Vec::new();
    let mut digest = RunDigest::default();
    for (k, f) in files.iter().enumerate() {
        for r in &f.not_run {
            not_run.push(r.progression()?);
        }
        out.stopped.extend(f.stopped.iter().cloned());
        let c = &mut out.counts;
        c.seeds += f.counts.seeds;
        c.not_started += f.counts.not_started;
        c.failed += f.counts.failed;
        c.steps += f.counts.steps;
        c.events += f.counts.events;
        c.tool_runs += f.counts.tool_runs;
        if k > 0 {
            for (kind, n) in &f.faults {
                *out.faults.entry(*kind).or_default() += n;
            }
            for (kind, row) in &f.coverage {
                let merged = out.coverage.entry(*kind).or_default();
                for (phase, hit) in row {
                    *merged.entry(phase.clone()).or_default() |= hit;
                }
            }
            for (how, row) in &f.stream_coverage {
                let merged = out.stream_coverage.entry(how.clone()).or_default();
                for (pos, hit) in row {
                    *merged.entry(pos.clone()).or_default() |= hit;
                }
            }
        }
        for (inv, n) in &f.checks {
            *out.checks.entry(*inv).or_default() += n;
        }
        for (kind, n) in &f.hostile {
            *out.hostile.entry(kind.clone()).or_default() += n;
        }
        for (shape, n) in &f.shapes {
            *out.shapes.entry(shape.clone()).or_default() += n;
        }
        out.failures.extend(f.failures.iter().cloned());
        digest = digest.combine(RunDigest::from_parts(f.counts.seeds, &f.digest_sum)?);
        out.wall_clock.seconds = out.wall_clock.seconds.max(f.wall_clock.seconds);
        out.wall_clock.jobs += f.wall_clock.jobs;
        out.wall_clock.summaries += f.wall_clock.summaries;
    }
    out.not_run = normalize(&not_run)
        .iter()
        .filter_map(Progression::as_flags)
        .collect();
    out.stopped.sort();
    out.stopped.dedup();
    out.failures.sort_by_key(|f| f.seed);
    out.digest = digest.finish();
    out.digest_sum = digest.sum_hex();
    out.check()?;
    Ok(out)
}

/// The first option two summaries disagree on, by the name the error prints.
fn differing_option(a: &SummaryFile, b: &SummaryFile) -> Option<&'static str> {
    let (a, b) = (&a.options, &b.options);
    if a.engine != b.engine {
        Some("engines")
    } else if a.engine_process != b.engine_process {
        Some("engine commands (--engine-cmd and its flags)")
    } else if a.judging != b.judging {
        Some("judging (--checks, --skip or --conventions)")
    } else if a.check_determinism != b.check_determinism {
        Some("--check-determinism settings")
    } else {
        None
    }
}

/// The requested sets: written as one set of flags per normalized piece when the
/// union reads shorter that way (every shard of a range becomes the range), else as
/// the inputs gave them, in seed order.
fn merged_requested(requested: &[(usize, Progression, &SeedFlags)]) -> Vec<SeedFlags> {
    let pieces: Vec<Progression> = requested.iter().map(|(_, p, _)| *p).collect();
    let joined = normalize(&pieces);
    if joined.len() < requested.len() {
        return joined.iter().filter_map(Progression::as_flags).collect();
    }
    let mut given: Vec<(Progression, SeedFlags)> = requested
        .iter()
        .map(|(_, p, f)| (*p, (*f).clone()))
        .collect();
    given.sort_by_key(|(p, _)| (p.first, p.step));
    given.into_iter().map(|(_, f)| f).collect()
}
