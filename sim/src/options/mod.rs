//! The options of one simulated run, derived from its seed alone (swarm testing).
//!
//! Guarantee: `SimOptions::from_seed(s)` is the same value on every machine and every
//! run, and it draws from a generator of its own rather than from the run's
//! [`Decider`](crate::decide::Decider). That keeps the decision list free of option
//! draws, so shrinking a decision list never changes which faults are switched on, and
//! a scenario file can pin its options while its decisions are edited.
//!
//! Why swarm: a run where every fault is possible at once spends its budget on the
//! commonest fault and rarely reaches the states that need a long quiet stretch
//! followed by one rare event. Switching each kind on or off per seed, and giving the
//! ones that are on very different weights, spreads the seeds over many different
//! mixes instead of one average mix.

mod fault;
mod ratio;
mod stream;
#[cfg(test)]
mod tests;

pub use fault::{FaultKind, HOSTILE_KINDS, UnknownFaultKind};
pub use ratio::Ratio;
pub use stream::StreamShapes;

use std::collections::BTreeMap;
use std::fmt;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Everything about a run that is fixed before its first decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimOptions {
    pub seed: u64,
    /// User prompts in the safety phase, 1..=6.
    pub turns: u32,
    /// Steps the safety phase may take, 400..=1200.
    pub safety_step_limit: u32,
    /// Steps the quiet liveness phase gets to settle the open turn and run one more: `LIVENESS_STEPS`.
    pub liveness_step_limit: u32,
    /// Chance that a generation asks for tools.
    pub tool_call: Ratio,
    /// Tool calls per batch, 1..=4.
    pub parallel_max: u32,
    /// Chance that a generation opens with a thinking block.
    pub thinking: Ratio,
    /// Chance that a generation stops with `max_tokens`.
    pub max_tokens: Ratio,
    /// Text deltas per block, 1..=6.
    pub text_chunks_max: u32,
    /// Virtual milliseconds per provider stream event, `[min, max]` inclusive.
    pub provider_latency: [u32; 2],
    /// Virtual milliseconds per tool execution, `[min, max]` inclusive.
    pub tool_latency: [u32; 2],
    /// The faults switched on for this seed; a kind absent is off.
    pub faults: BTreeMap<FaultKind, Ratio>,
    /// The fixed rates: the same for every seed, never drawn from the options
    /// generator (so adding one changes no seed's options or decisions), and left out
    /// of a saved scenario while they have their default value (so files written
    /// before they existed, and files written now, are the same bytes).
    #[serde(default, skip_serializing_if = "FixedRates::is_default")]
    pub rates: FixedRates,
    /// How finely the provider splits what it streams and how much tools write
    /// ([`StreamShapes`]): drawn from a generator of their own, and left out of a saved
    /// scenario while they are the narrow grammar's, so older files replay unchanged.
    #[serde(default, skip_serializing_if = "StreamShapes::is_default")]
    pub stream: StreamShapes,
}

/// Probabilities the simulator and `turnsim serve` apply on top of the seed's own,
/// named here so that none is a bare number in the code that uses it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedRates {
    /// Of the stale deliveries that happen, the share held back to land in a later
    /// operation instead of at once.
    #[serde(default = "FixedRates::half")]
    pub stale_held_back: Ratio,
    /// The crash rate is scaled by this before each output the engine asks for is
    /// carried out (a crash between two outputs), so that the per-output rolls do not
    /// swamp the crashes scheduled during operations.
    #[serde(default = "FixedRates::crash_per_output_default")]
    pub crash_per_output: Ratio,
    /// Given a crash while a persist is in flight, the torn-write rate is multiplied
    /// by this (capped at certainty): a seed with torn writes tears often.
    #[serde(default = "FixedRates::torn_write_factor_default")]
    pub torn_write_factor: u32,
    /// Of the rewinds when the history has directive messages, the share that go to
    /// one of them rather than to any index.
    #[serde(default = "FixedRates::rewind_to_directive_default")]
    pub rewind_to_directive: Ratio,
    /// Chance that a generation that calls tools also has text before the calls.
    #[serde(default = "FixedRates::half")]
    pub text_with_tools: Ratio,
    /// Chance that a generated tool call names a tool the request does not offer.
    #[serde(default = "FixedRates::implausible_tool_default")]
    pub implausible_tool: Ratio,
    /// `turnsim serve`: chance that a seeded connection reset cuts the stream in the
    /// middle of an event rather than between two.
    #[serde(default = "FixedRates::half")]
    pub cut_mid_event: Ratio,
    /// Share of the output lists that wrote to the log after which `durable_live`
    /// restores the log, picked by a hash of (seed, write index), never by a decision.
    /// A restore decodes the whole log: after every write it would cost several times
    /// the run itself (docs/invariants.md, `durable_live`, has the measured figures),
    /// so the share is what fits the throughput budget beside `twin_check`.
    #[serde(default = "FixedRates::durable_check_default")]
    pub durable_check: Ratio,
    /// Share of seeds, picked by a hash of the seed, in which `twin_agrees` keeps every
    /// live input and, after each no-op delivery (stale, duplicate, refused), rebuilds
    /// a twin that never saw it. A rebuild replays every input since the engine
    /// started; in every seed that costs about a tenth of the run, so every seed
    /// does it.
    #[serde(default = "FixedRates::twin_check_default")]
    pub twin_check: Ratio,
    /// Share of seeds, picked by a hash of the seed ([`SimOptions::thinking_on`]),
    /// whose session turns extended thinking on in every request. Most agent runtimes
    /// run with it on, and only then does the API demand a tool loop's thinking back;
    /// the rest keep the path where no thinking is ever streamed.
    #[serde(default = "FixedRates::thinking_on_default")]
    pub thinking_on: Ratio,
}

impl FixedRates {
    fn half() -> Ratio {
        Ratio::new(1, 2)
    }
    fn crash_per_output_default() -> Ratio {
        Ratio::new(1, 8)
    }
    fn torn_write_factor_default() -> u32 {
        5
    }
    fn rewind_to_directive_default() -> Ratio {
        Ratio::new(3, 4)
    }
    fn implausible_tool_default() -> Ratio {
        Ratio::new(1, 25)
    }
    fn durable_check_default() -> Ratio {
        Ratio::new(1, 256)
    }
    fn twin_check_default() -> Ratio {
        Ratio::new(1, 1)
    }
    fn thinking_on_default() -> Ratio {
        Ratio::new(3, 4)
    }

    /// Whether the `index`th occasion of `seed` is one of the `ratio` share, by a fixed
    /// hash (SplitMix64's finalizer), so the choice draws nothing from the decisions
    /// and replays exactly.
    pub fn picked(seed: u64, index: u64, ratio: Ratio) -> bool {
        let mut z = seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(index)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ratio.den > 0 && z % u64::from(ratio.den) < u64::from(ratio.num)
    }

    fn is_default(&self) -> bool {
        *self == FixedRates::default()
    }
}

impl Default for FixedRates {
    fn default() -> Self {
        FixedRates {
            stale_held_back: FixedRates::half(),
            crash_per_output: FixedRates::crash_per_output_default(),
            torn_write_factor: FixedRates::torn_write_factor_default(),
            rewind_to_directive: FixedRates::rewind_to_directive_default(),
            text_with_tools: FixedRates::half(),
            implausible_tool: FixedRates::implausible_tool_default(),
            cut_mid_event: FixedRates::half(),
            durable_check: FixedRates::durable_check_default(),
            twin_check: FixedRates::twin_check_default(),
            thinking_on: FixedRates::thinking_on_default(),
        }
    }
}

/// The liveness bound: room for the open turn and one more, each up to the provider's
/// wrap-up point (six tool rounds of four parallel calls, thinking and text at the
/// longest) plus three `max_tokens` resumptions, with stale deliveries in between.
/// Long enough that only a turn that cannot end exceeds it.
pub const LIVENESS_STEPS: u32 = 2000;

/// The occasion index [`SimOptions::thinking_on`] hashes with the seed: far from the
/// small indices the per-write and per-seed picks use, so the choices are unrelated.
const THINKING_ON_PICK: u64 = 0x7468_696e_6b5f_6f6e;

/// XORed into the seed so that the options generator and a `Decider` built from the
/// same seed produce unrelated streams.
const OPTIONS_SALT: u64 = 0x5157_4152_4d5f_4f50;

/// Fault numerators over [`FAULT_DEN`]: a spread of two orders of magnitude, so that a
/// seed can have one fault nearly every step and another almost never.
const FAULT_WEIGHTS: [u32; 5] = [1, 5, 20, 60, 150];
const FAULT_DEN: u32 = 1000;

const TOOL_CALL_NUMS: [u32; 5] = [100, 250, 400, 600, 800];
// Zero is in the tables below on purpose: some seeds never think and never hit
// max_tokens, which is the plain path every other feature is layered on.
const THINKING_NUMS: [u32; 4] = [0, 200, 500, 900];
const MAX_TOKENS_NUMS: [u32; 4] = [0, 10, 50, 150];
const DEN: u32 = 1000;

fn pick(rng: &mut ChaCha8Rng, table: &[u32]) -> u32 {
    table
        .get(rng.random_range(0..table.len()))
        .copied()
        .unwrap_or(0)
}

impl SimOptions {
    /// The options for `seed`. The draws below happen in a fixed order; changing that
    /// order (or a table) changes what every seed means, so do it knowingly.
    pub fn from_seed(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ OPTIONS_SALT);
        let turns = rng.random_range(1..=6);
        let safety_step_limit = rng.random_range(400..=1200);
        let tool_call = Ratio::new(pick(&mut rng, &TOOL_CALL_NUMS), DEN);
        let parallel_max = rng.random_range(1..=4);
        let thinking = Ratio::new(pick(&mut rng, &THINKING_NUMS), DEN);
        let max_tokens = Ratio::new(pick(&mut rng, &MAX_TOKENS_NUMS), DEN);
        let text_chunks_max = rng.random_range(1..=6);
        let provider_min = rng.random_range(0..=20);
        let provider_latency = [provider_min, provider_min + rng.random_range(0..=200)];
        let tool_min = rng.random_range(0..=50);
        let tool_latency = [tool_min, tool_min + rng.random_range(0..=2000)];

        let mut faults = BTreeMap::new();
        let (first, later) = FaultKind::ALL.split_at(FaultKind::FIRST_DRAWN);
        for &kind in first {
            // Both draws happen for every kind, on or off, so that one kind's coin
            // never shifts the draws of the kinds after it.
            let on = rng.random_range(0..2u32) == 1;
            let num = pick(&mut rng, &FAULT_WEIGHTS);
            if on {
                faults.insert(kind, Ratio::new(num, FAULT_DEN));
            }
        }
        if faults.is_empty() {
            // A seed with no fault at all would only repeat the liveness phase.
            let kind = first[rng.random_range(0..first.len())];
            faults.insert(kind, Ratio::new(pick(&mut rng, &FAULT_WEIGHTS), FAULT_DEN));
        }
        // The world behaviours added later: the same two draws per kind, after every
        // draw above, so no earlier option of any seed moves.
        for &kind in later {
            let on = rng.random_range(0..2u32) == 1;
            let num = pick(&mut rng, &FAULT_WEIGHTS);
            if on {
                faults.insert(kind, Ratio::new(num, FAULT_DEN));
            }
        }

        SimOptions {
            seed,
            turns,
            safety_step_limit,
            liveness_step_limit: LIVENESS_STEPS,
            tool_call,
            parallel_max,
            thinking,
            max_tokens,
            text_chunks_max,
            provider_latency,
            tool_latency,
            faults,
            rates: FixedRates::default(),
            stream: StreamShapes::from_seed(seed),
        }
    }

    /// The same options with every fault off: the liveness phase and the tests that
    /// want a run that only exercises the happy path with this seed's shape.
    pub fn quiet(seed: u64) -> Self {
        SimOptions {
            faults: BTreeMap::new(),
            ..SimOptions::from_seed(seed)
        }
    }

    /// Whether this seed's session turns extended thinking on: one of the
    /// `rates.thinking_on` share of seeds, by a hash of the seed, so it draws nothing
    /// from the options generator or the decisions (no earlier option moves, and a
    /// shrunk decision list keeps the setting).
    pub fn thinking_on(&self) -> bool {
        FixedRates::picked(self.seed, THINKING_ON_PICK, self.rates.thinking_on)
    }

    /// The rate of `kind`, or `None` when it is off for this seed.
    pub fn fault(&self, kind: FaultKind) -> Option<Ratio> {
        self.faults.get(&kind).copied()
    }
}

fn row(f: &mut fmt::Formatter<'_>, label: &str, value: fmt::Arguments<'_>) -> fmt::Result {
    writeln!(f, "  {label:<18} {value}")
}

impl fmt::Display for SimOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "options (seed {}):", self.seed)?;
        row(f, "turns", format_args!("{}", self.turns))?;
        row(
            f,
            "safety steps",
            format_args!("{}", self.safety_step_limit),
        )?;
        row(
            f,
            "liveness steps",
            format_args!("{}", self.liveness_step_limit),
        )?;
        row(f, "tool call", format_args!("{}", self.tool_call))?;
        row(f, "parallel max", format_args!("{}", self.parallel_max))?;
        row(f, "thinking", format_args!("{}", self.thinking))?;
        row(f, "max tokens", format_args!("{}", self.max_tokens))?;
        row(
            f,
            "text chunks max",
            format_args!("{}", self.text_chunks_max),
        )?;
        let [pmin, pmax] = self.provider_latency;
        row(f, "provider latency", format_args!("{pmin}..={pmax} ms"))?;
        let [tmin, tmax] = self.tool_latency;
        row(f, "tool latency", format_args!("{tmin}..={tmax} ms"))?;
        let on: Vec<String> = self
            .faults
            .iter()
            .map(|(kind, ratio)| format!("{kind} {ratio}"))
            .collect();
        let off: Vec<&str> = FaultKind::ALL
            .iter()
            .filter(|kind| !self.faults.contains_key(kind))
            .map(|kind| kind.name())
            .collect();
        let r = &self.rates;
        row(f, "stale held back", format_args!("{}", r.stale_held_back))?;
        row(
            f,
            "crash per output",
            format_args!("{} of crash", r.crash_per_output),
        )?;
        row(
            f,
            "torn write factor",
            format_args!("{}x after a crash", r.torn_write_factor),
        )?;
        row(
            f,
            "rewind directive",
            format_args!("{}", r.rewind_to_directive),
        )?;
        row(f, "text with tools", format_args!("{}", r.text_with_tools))?;
        row(
            f,
            "implausible tool",
            format_args!("{}", r.implausible_tool),
        )?;
        row(f, "cut mid event", format_args!("{}", r.cut_mid_event))?;
        row(
            f,
            "durable check",
            format_args!("{} of log writes", r.durable_check),
        )?;
        row(f, "twin check", format_args!("{} of seeds", r.twin_check))?;
        let thinks = if self.thinking_on() { "on" } else { "off" };
        row(
            f,
            "thinking on",
            format_args!("{} of seeds ({thinks} for this seed)", r.thinking_on),
        )?;
        let st = &self.stream;
        row(
            f,
            "input pieces max",
            format_args!("{}", st.input_pieces_max),
        )?;
        row(
            f,
            "empty input delta",
            format_args!("{}", st.empty_input_delta),
        )?;
        row(
            f,
            "signature pieces",
            format_args!("{} max", st.signature_pieces_max),
        )?;
        row(f, "long tool output", format_args!("{}", st.long_output))?;
        row(
            f,
            "other stop",
            format_args!("{} of end_turn stops", st.other_stop),
        )?;
        row(
            f,
            "blank text",
            format_args!("{} of replies", st.blank_text),
        )?;
        row(
            f,
            "block restart",
            format_args!("{} of replies", st.block_restart),
        )?;
        row(
            f,
            "result blocks",
            format_args!("{} of tool results", st.result_blocks),
        )?;
        row(
            f,
            "late delta",
            format_args!("{} of replies", st.late_delta),
        )?;
        row(
            f,
            "redacted thinking",
            format_args!(
                "{} of thinking replies{}",
                st.redacted_thinking,
                if st.opening_redacted_in_place {
                    "; in place of every turn's opening thinking"
                } else {
                    ""
                }
            ),
        )?;
        row(
            f,
            "schema edit",
            format_args!("{} of prefix changes", st.schema_edit),
        )?;
        row(
            f,
            "shared call id",
            format_args!("{} of replies with per-reply ids", st.shared_call_id),
        )?;
        row(
            f,
            "hang cut min",
            format_args!("after event {}", st.hang_cut_min),
        )?;
        row(f, "faults on", format_args!("{}", list_or_none(&on)))?;
        row(f, "faults off", format_args!("{}", list_or_none(&off)))?;
        if self.faults.contains_key(&FaultKind::HostileInput) {
            row(
                f,
                "hostile kinds",
                format_args!("{}", HOSTILE_KINDS.join(", ")),
            )?;
        }
        Ok(())
    }
}

fn list_or_none<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
