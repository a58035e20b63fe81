//! The harness must prove it can fail: each canary (the reference engine with one
//! planted bug) is found by `turnsim run` within a stated seed budget, shrunk by
//! `turnsim shrink`, and reproduced by `turnsim replay` of the shrunk file, all through
//! the CLI binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use turnsim::Bug;
use turnsim::Invariant;
use turnsim::{Expectation, load_scenario};

/// Seeds `turnsim run` gets to find each canary.
const SEED_BUDGET: u64 = 200;

fn turnsim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_turnsim"))
        .args(args)
        .output()
        .expect("the turnsim binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("canary-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The failure of the lowest seed, or with `of`, the lowest seed's failure of that
/// invariant.
fn first_scenario(dir: &Path, of: Option<&str>) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the failure directory exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| of.is_none_or(|inv| p.to_string_lossy().ends_with(&format!("-{inv}.json"))))
        .collect();
    files.sort_by_key(|p| {
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        name.trim_start_matches("seed-")
            .split('-')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    files.into_iter().next().expect("a scenario was written")
}

fn canary_is_found_shrunk_and_replayed(bug: Bug) {
    canary_is_found_within(bug, SEED_BUDGET);
}

/// Seeds `turnsim run` gets to find `reused_ids_verbatim`: it needs a seed with the
/// `reused_ids` option on (half of them) whose provider numbers two replies' calls
/// per reply within one history, which is rarer than the other canaries' triggers.
const REUSED_IDS_BUDGET: u64 = 1000;

/// Finds, shrinks and replays `bug`'s first failure; returns the replay's output.
fn canary_is_found_within(bug: Bug, budget: u64) -> String {
    canary_failure_is_shrunk(bug, budget, false)
}

/// [`canary_is_found_within`], shrinking the first failure of the canary's own
/// checker when another checker saw the bug at a lower seed first.
fn canary_failure_is_shrunk(bug: Bug, budget: u64, its_own: bool) -> String {
    let dir = scratch(bug.name());
    let seeds = format!("0..{budget}");
    let (code, text) = turnsim(&[
        "run",
        "--engine",
        bug.name(),
        "--seeds",
        &seeds,
        "--quiet",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    // A correctness failure is exit 1, a liveness failure 3, a panic 4.
    let exit = match bug.caught_by() {
        Invariant::Liveness => 3,
        Invariant::EnginePanic => 4,
        _ => 1,
    };
    assert_eq!(code, exit, "{} is exit {exit}:\n{text}", bug.caught_by());
    let wanted = format!(": {} at step", bug.caught_by());
    assert!(text.contains(&wanted), "expected {wanted:?} in:\n{text}");
    assert!(text.contains("replay:   turnsim replay "), "{text}");

    let own = bug.caught_by().to_string();
    let file = first_scenario(&dir, its_own.then_some(own.as_str()));
    let original = load_scenario(&file).expect("the written scenario loads");
    assert_eq!(original.engine, bug.name());

    let (code, text) = turnsim(&["shrink", file.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{text}");
    let min = turnsim::cli::min_path(&file);
    let shrunk = load_scenario(&min).expect("the shrunk scenario loads");
    assert!(
        shrunk.decisions.len() <= original.decisions.len(),
        "shrinking grew the list: {} -> {}",
        original.decisions.len(),
        shrunk.decisions.len()
    );
    let Expectation::Fail { invariant, step } = &shrunk.expect else {
        panic!("a shrunk scenario expects a failure");
    };
    assert_eq!(*invariant, bug.caught_by());

    let (code, text) = turnsim(&["replay", min.to_str().expect("utf-8 path")]);
    assert_eq!(code, exit, "{text}");
    assert!(
        text.contains(&format!("reproduced: {invariant} at step {step}")),
        "{text}"
    );
    text
}

/// A canary of one API rule: found within the budget, and what the shrunk failure
/// reports is that rule's breach, not another.
fn canary_breaks_the_rule(bug: Bug, breach: &str) {
    let text = canary_is_found_within(bug, SEED_BUDGET);
    assert!(text.contains(breach), "expected {breach:?} in:\n{text}");
}

#[test]
fn a_cancel_that_leaves_a_tool_use_unanswered_is_found_by_pairing() {
    canary_is_found_shrunk_and_replayed(Bug::CancelOrphansToolUse);
}

#[test]
fn a_stale_completion_that_is_applied_is_found_by_stale_noop() {
    canary_is_found_shrunk_and_replayed(Bug::StaleCompletionApplied);
}

#[test]
fn a_restart_that_dispatches_a_pending_tool_again_is_found_by_at_most_once() {
    canary_is_found_shrunk_and_replayed(Bug::RestartRedispatches);
}

#[test]
fn a_tail_moved_onto_a_tool_result_message_is_found_by_append_only() {
    canary_is_found_shrunk_and_replayed(Bug::TailOnToolResult);
}

#[test]
fn a_marker_appended_twice_is_found_by_marker_once() {
    canary_is_found_shrunk_and_replayed(Bug::MarkerTwice);
}

#[test]
fn a_provider_id_sent_back_verbatim_after_reuse_is_found_by_pairing() {
    canary_is_found_within(Bug::ReusedIdsVerbatim, REUSED_IDS_BUDGET);
}

#[test]
fn a_cancel_marker_without_its_cause_is_found_by_interruption_recorded() {
    canary_is_found_shrunk_and_replayed(Bug::MarkerWithoutCause);
}

/// Seeds `turnsim run` gets to find a canary whose trigger is rare: the acceptance
/// bound of issue 17.
const RARE_BUDGET: u64 = 10_000;

#[test]
fn a_note_naming_finished_calls_is_found_by_label_matches() {
    // First found at seed 259 since the world behaviours of issue 17 joined the swarm
    // (9 of seeds 0..1000 fail).
    canary_is_found_within(Bug::NoteNamesFinished, RARE_BUDGET);
}

#[test]
fn a_dispatch_after_an_accepted_cancel_is_found_by_quiet_after_cancel() {
    canary_is_found_shrunk_and_replayed(Bug::DispatchAfterCancel);
}

#[test]
fn a_restore_that_loses_the_streamed_text_is_found_by_shown_survives() {
    canary_is_found_shrunk_and_replayed(Bug::CrashLosesDraft);
}

#[test]
fn a_valid_reply_that_fails_the_turn_is_found_by_reply_never_fails() {
    canary_is_found_shrunk_and_replayed(Bug::ParallelCallsFail);
}

#[test]
fn a_finished_reply_resumed_as_truncated_is_found_by_model_ends_turn() {
    canary_is_found_shrunk_and_replayed(Bug::ContinuesAfterEndTurn);
}

#[test]
fn results_listed_in_completion_order_are_found_by_logical_order() {
    canary_is_found_shrunk_and_replayed(Bug::ResultsInCompletionOrder);
}

#[test]
fn thinking_sent_back_unsigned_is_found_by_pairing_as_the_api_rejects_it() {
    canary_is_found_shrunk_and_replayed(Bug::UnsignedThinking);
}

#[test]
fn the_time_in_the_system_prompt_is_found_by_prefix_stable() {
    canary_is_found_shrunk_and_replayed(Bug::TimeInSystemPrompt);
}

#[test]
fn a_turn_end_never_persisted_is_found_by_durable_live() {
    // Its own first seed is 213 since tools may answer with blocks (267 before, 182
    // before replies could stop on a stop sequence or a refusal); seed 133 fails
    // `interruption_recorded` first, the lost turn end seen from the restore.
    canary_failure_is_shrunk(Bug::TurnEndNotPersisted, RARE_BUDGET, true);
}

#[test]
fn a_stale_delivery_that_changes_the_cache_key_is_found_by_twin_agrees() {
    // Only seeds with a stale or duplicate delivery, a busy input or a cancel on make
    // a twin (first found at seed 2).
    canary_is_found_within(Bug::StaleBumpsCacheKey, RARE_BUDGET);
}

#[test]
fn a_receipt_with_an_empty_digest_is_found_by_prefix_reported() {
    canary_is_found_shrunk_and_replayed(Bug::EmptyReceipt);
}

#[test]
fn a_restore_that_adopts_an_invalid_log_is_found_by_hostile_input() {
    // Needs a seed with `hostile_input` on that hands a log-borne hostile input.
    canary_is_found_within(Bug::LenientRestore, RARE_BUDGET);
}

#[test]
fn a_cancel_that_tells_the_model_nothing_is_found_under_the_generic_profile() {
    // Judged as an engine with no profile is: the generic core of
    // interruption_recorded, which reads no wording.
    canary_is_found_shrunk_and_replayed(Bug::CancelRecordsNothing);
}

#[test]
fn model_text_scrubbed_before_it_goes_back_is_found_by_model_words_exact() {
    canary_is_found_shrunk_and_replayed(Bug::ScrubsMarkerText);
}

#[test]
fn a_cancel_that_aborts_nothing_is_found_by_quiet_after_cancel() {
    canary_is_found_shrunk_and_replayed(Bug::CancelLeavesToolsRunning);
}

#[test]
fn schema_keys_reordered_by_a_restore_are_found_by_prefix_stable_on_the_bytes() {
    // Equal values, other bytes: a value comparison cannot see it, and a restart
    // no longer excuses a new prefix.
    canary_is_found_shrunk_and_replayed(Bug::SchemaKeysReorderedOnRestore);
}

#[test]
fn a_body_that_writes_its_messages_before_its_tools_is_found_by_prefix_stable() {
    canary_is_found_shrunk_and_replayed(Bug::MessagesBeforeTools);
}

#[test]
fn tools_sent_in_the_host_s_order_are_found_by_tool_order() {
    // The reference profile says the engine orders its tools itself; this one keeps
    // the host's order, so its twin configured in reverse sends another prefix.
    canary_is_found_shrunk_and_replayed(Bug::HostToolOrder);
}

#[test]
fn directives_a_compaction_hid_and_the_turn_context_drops_are_found_by_directives_kept() {
    // Needs a seed with `compaction` on that compacts after an acknowledged prompt.
    canary_is_found_within(Bug::CompactionDropsDirectives, RARE_BUDGET);
}

#[test]
fn a_call_run_with_input_salvaged_from_a_cut_stream_is_found_by_model_words_exact() {
    canary_is_found_shrunk_and_replayed(Bug::SalvagesCutInput);
}

#[test]
fn a_compaction_applied_under_an_open_call_is_found_by_stale_noop() {
    canary_is_found_shrunk_and_replayed(Bug::CompactsWhileBusy);
}

#[test]
fn a_redacted_block_kept_from_its_start_when_its_stream_is_cut_is_found_by_thinking_intact() {
    let text = canary_is_found_within(Bug::KeepsRedactedAtStart, SEED_BUDGET);
    let breach = "is a redacted_thinking block whose block_stop the provider never streamed";
    assert!(text.contains(breach), "expected {breach:?} in:\n{text}");
}

#[test]
fn a_reply_kept_past_a_block_started_twice_is_found_by_model_words_exact() {
    canary_is_found_shrunk_and_replayed(Bug::IgnoresSecondBlockStart);
}

#[test]
fn a_result_of_blocks_stringified_into_one_text_is_found_by_no_lost_observation() {
    let text = canary_is_found_within(Bug::StringifiesResultBlocks, SEED_BUDGET);
    assert!(text.contains("came back altered"), "{text}");
}

#[test]
fn a_result_taken_with_no_persist_and_sent_later_is_found_by_no_lost_observation() {
    let text = canary_is_found_within(Bug::ResultTakenNotPersisted, SEED_BUDGET);
    assert!(
        text.contains("with no Persist (the profile logs each result as it arrives)"),
        "{text}"
    );
}

// The five planted from public agent-runtime issues (issue 25's detection figure; the
// issue of each is on its `Bug` variant and in docs/invariants.md).

#[test]
fn streamed_call_snapshots_appended_as_deltas_are_found_by_pairing() {
    canary_is_found_shrunk_and_replayed(Bug::RepeatsStreamedCalls);
}

#[test]
fn a_tool_loop_sent_back_without_its_thinking_is_found_by_pairing_when_thinking_is_on() {
    // Found only since the simulated request says whether thinking is on (the seed's
    // `thinking_on`): with it on, the API refuses the assistant turn that lost it.
    canary_is_found_shrunk_and_replayed(Bug::DropsThinkingInToolLoop);
}

#[test]
fn empty_text_blocks_replayed_after_a_resume_are_found_by_pairing() {
    canary_is_found_shrunk_and_replayed(Bug::ReplaysEmptyTextOnResume);
}

#[test]
fn calls_a_cancel_dropped_while_their_results_stay_are_found_by_pairing() {
    canary_is_found_shrunk_and_replayed(Bug::CancelDropsCallsKeepsResults);
}

#[test]
fn a_cancel_s_repair_kept_in_memory_only_is_found_by_durable_live() {
    // Some seeds leave a log the reference cannot restore at all, which
    // `no_lost_observation` reports first (seed 111 since replies may stop on a stop
    // sequence or a refusal); durable_live's own first is seed 217.
    canary_failure_is_shrunk(Bug::CancelRepairNotPersisted, RARE_BUDGET, true);
}

#[test]
fn a_compaction_accepted_and_never_applied_is_found_by_compaction_applied() {
    canary_is_found_shrunk_and_replayed(Bug::IgnoresAcceptedCompaction);
}

#[test]
fn a_tool_input_sent_as_a_string_is_found_by_pairing_as_not_an_object() {
    canary_breaks_the_rule(
        Bug::ToolInputAsString,
        "has an input that is not a JSON object",
    );
}

#[test]
fn empty_text_padded_with_a_space_is_found_by_pairing_as_blank() {
    canary_breaks_the_rule(Bug::PadsEmptyText, "text block holds only whitespace");
}

#[test]
fn a_result_sent_twice_after_a_resume_is_found_by_pairing() {
    canary_breaks_the_rule(Bug::DoublesResultsOnResume, "answers it a second time");
}

#[test]
fn text_before_the_results_of_a_message_is_found_by_pairing() {
    canary_breaks_the_rule(
        Bug::TextBeforeResults,
        "comes after a block that is not a tool_result",
    );
}

#[test]
fn a_history_trimmed_to_an_assistant_message_first_is_found_by_pairing() {
    canary_breaks_the_rule(
        Bug::TrimsToAssistantFirst,
        "the request's first message is an assistant message",
    );
}

#[test]
fn a_breakpoint_on_every_message_is_found_by_cache_breakpoints_past_four() {
    canary_breaks_the_rule(Bug::CachesEveryMessage, "the provider accepts 4");
}

#[test]
fn a_stop_sequence_the_engine_cannot_parse_is_found_by_reply_never_fails() {
    let text = canary_is_found_within(Bug::RejectsStopSequence, SEED_BUDGET);
    assert!(text.contains("unknown stop_reason"), "{text}");
}

#[test]
fn a_failed_reply_kept_with_its_calls_unanswered_is_found_by_pairing() {
    canary_breaks_the_rule(Bug::UnrepairedFailedReply, "has no tool_result in message");
}

// The canaries that close the catalogue (issue 25): the API rules and the checkers
// that had none (`canary::catalogue` holds every rule and invariant to a canary or a
// stated reason). Each is found within the first 20 seeds (docs/invariants.md).

#[test]
fn a_cancelled_reply_kept_as_an_empty_assistant_message_is_found_by_pairing() {
    let text = canary_is_found_within(Bug::KeepsEmptyCutReply, SEED_BUDGET);
    assert!(
        text.contains("assistant message has empty content"),
        "{text}"
    );
}

#[test]
fn assistant_text_sent_as_output_text_items_is_found_by_pairing_as_an_unknown_type() {
    let text = canary_is_found_within(Bug::SendsOutputTextBlocks, SEED_BUDGET);
    assert!(
        text.contains("block type \"output_text\" is not one the API accepts"),
        "{text}"
    );
}

#[test]
fn calls_written_beside_their_results_after_a_resume_are_found_by_pairing() {
    let text = canary_is_found_within(Bug::CallsBesideResultsOnResume, SEED_BUDGET);
    assert!(text.contains("in a user message"), "{text}");
}

#[test]
fn tool_results_of_earlier_turns_cleared_in_place_are_found_by_history_stable() {
    canary_is_found_within(Bug::ClearsOldToolResults, SEED_BUDGET);
}

#[test]
fn a_recovery_that_ends_the_crashed_turn_again_is_found_by_recovery_idempotent() {
    canary_is_found_within(Bug::RecoveryEndsTurnAgain, SEED_BUDGET);
}

#[test]
fn a_late_tool_result_that_panics_the_engine_is_found_by_engine_panic() {
    canary_is_found_within(Bug::UnwrapsStaleResult, SEED_BUDGET);
}

#[test]
fn a_stream_error_skipped_as_an_unknown_event_is_found_by_liveness() {
    canary_is_found_within(Bug::SkipsStreamError, SEED_BUDGET);
}

#[test]
fn a_turn_context_quoting_the_model_is_found_by_note_exact() {
    canary_is_found_within(Bug::TurnContextQuotesReply, SEED_BUDGET);
}

#[test]
fn a_tool_output_cut_before_it_enters_the_history_is_found_by_no_lost_observation() {
    canary_is_found_within(Bug::TruncatesToolOutput, SEED_BUDGET);
}

#[test]
fn thinking_sent_back_with_a_newline_added_is_found_by_thinking_intact() {
    canary_is_found_within(Bug::ThinkingStoredAsLine, SEED_BUDGET);
}

#[test]
fn thinking_switched_off_mid_loop_and_sent_at_the_next_request_is_found_by_pairing() {
    // It needs a seed with both the host's busy configures and its thinking switches
    // on, thinking on, and a switch off landing in a tool loop (first at seed 333).
    let text = canary_is_found_within(Bug::SwitchesThinkingMidLoop, RARE_BUDGET);
    let breach = "message 1, block 0: thinking is off and the assistant's final turn";
    assert!(text.contains(breach), "expected {breach:?} in:\n{text}");
}
