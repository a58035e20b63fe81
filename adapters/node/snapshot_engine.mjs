// Snapshot engine: a turn engine of its own design, written from
// docs/engine-protocol.md and docs/invariants.md alone, served over engine protocol
// v1 ("node adapters/node/snapshot_engine.mjs"). It exists to show that turnsim
// judges a correct engine that is not the reference engine without false findings.
//
// Design (deliberately unlike the reference engine and the event-log engine):
// - Snapshot log. Every durable change writes the whole session as one record
//   (`#<bytes>:<json>\n`); a restore reads only the last complete record, so no
//   crash can separate two halves of one change.
// - No retries: a failed generation fails the turn.
// - Only completed blocks are kept: a cancel keeps the blocks that finished
//   streaming; while a reply streams, a snapshot is written when a text block
//   completes, and a crash keeps exactly the text blocks that snapshot holds.
// - Prompts are one text block; a compaction keeps its summary in a user message
//   (the summary is the host's `compact` input) followed by the user's prompts
//   verbatim; a reply cut off at max_tokens is
//   resumed with a fixed user text, at most `max_truncated_resumes` times in a row.
//
// Guarantees: write-ahead (the snapshot describing a send or dispatch is written
// before it); a stale or duplicate delivery returns no outputs and changes nothing;
// a restore never reissues an operation (a call that may have run is answered as
// unknown and counted in a note), and restoring twice equals restoring once; a torn
// last record is the only thing dropped. Every tool_use id is unique in the session,
// across compaction, rewind and restart (a repeated provider id is renamed).
//
// An imported history (the protocol's `import`) is repaired, never refused: a call
// nothing answers gets a stand-in result, a result that answers no call of the
// message before it is dropped, a repeated tool_use id is renamed (with its results),
// and a message left with no content is dropped.
//
// TURNSIM_EXAMPLE_BUG plants one realistic bug (see adapters/DESIGNS.md):
// cancel_records_nothing, jsonb_reorders_input, restart_redispatches,
// stale_delta_applied.

import { createHash } from "node:crypto";
import { Refused, RestoreFailed, run } from "./turnsim_engine.mjs";

const BUGS = ["cancel_records_nothing", "jsonb_reorders_input", "restart_redispatches", "stale_delta_applied"];
const BUG = process.env.TURNSIM_EXAMPLE_BUG || "";
if (BUG && !BUGS.includes(BUG)) {
  process.stderr.write(`snapshot_engine: unknown TURNSIM_EXAMPLE_BUG=${JSON.stringify(BUG)}; known: ${BUGS.join(", ")}\n`);
  process.exit(2);
}

const STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"];
const LIVE_CAUSES = ["user", "cost_cap", "restart", "host", "driver"];
const RESUME_TEXT = "Continue from exactly where your reply was cut off.";
const SUMMARY_HEAD = "Summary of the conversation so far, written when it was compacted:\n\n";
const record = (reason) => `Turn interrupted (reason: ${reason}).`;
const runningNote = (n) =>
  `Note: ${n} tool call${n === 1 ? " was" : "s were"} still running when the turn was interrupted; ` +
  `${n === 1 ? "it" : "they"} may have taken effect.`;
const NOT_STARTED = "Not run: the turn was interrupted before this call started.";
const CUT_SHORT = "Interrupted while running; the call may have taken effect.";
const UNKNOWN_AFTER_CRASH = "The runtime stopped while this call was pending; it may have taken effect.";

class BadStream extends Error {}

// The user's own words that stand in `history`, oldest first: the text of every prompt
// (a user message of text blocks only; the runtime's own user texts are strings), and
// those a compaction kept after its summary. A rewind needs nothing more: what it cuts
// off is no longer in the history.
function directives(history) {
  const words = [];
  for (const [i, m] of history.entries()) {
    if (m.role !== "user" || !Array.isArray(m.content) || !m.content.every((b) => b.type === "text")) continue;
    const kept = i === 0 && m.content[0].text.startsWith(SUMMARY_HEAD) ? m.content.slice(1) : m.content;
    for (const b of kept) words.push(b.text);
  }
  return words;
}

// What a compaction leaves: the summary (the host's words), then every directive
// verbatim, each its own block, since a summary paraphrases exactly what the user
// asked and must never stand in for it.
function compacted(summary, words) {
  if (!words.length) return { role: "user", content: SUMMARY_HEAD + summary };
  return { role: "user", content: [{ type: "text", text: SUMMARY_HEAD + summary }, ...words.map((text) => ({ type: "text", text }))] };
}

const isText = (s) => typeof s === "string";

// A JSON store that normalises objects (as Postgres jsonb does) sorts their keys.
function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === "object") {
    const out = {};
    for (const k of Object.keys(value).sort()) out[k] = sortedKeys(value[k]);
    return out;
  }
  return value;
}

/** The reply being streamed; lives only in memory. */
class Stream {
  constructor(op) {
    this.op = op;
    this.started = false;
    this.blocks = [];
    this.stop = null;
  }

  open(index, type) {
    const b = Number.isInteger(index) ? this.blocks[index] : undefined;
    if (!b) throw new BadStream(`delta for block ${index}, which never started`);
    if (b.closed) throw new BadStream(`delta for block ${index} after its stop`);
    if (!type.includes(b.type)) throw new BadStream(`a delta of the wrong kind for the ${b.type} block ${index}`);
    return b;
  }

  /** Applies one event; returns "done" when the reply is complete, "text" when a text block completed. */
  apply(e, taken) {
    const kind = e && e.event;
    if (kind === "error") throw new BadStream(`provider error ${e.kind}: ${e.message}`);
    if (kind === "message_start") {
      if (this.started) throw new BadStream("a second message_start");
      this.started = true;
      return null;
    }
    if (!this.started) throw new BadStream(`${kind} before message_start`);
    switch (kind) {
      case "block_start": {
        const block = e.block || {};
        if (e.index !== this.blocks.length) throw new BadStream(`block ${e.index} started out of order`);
        const b = { type: block.type, closed: false };
        if (block.type === "text") b.text = "";
        else if (block.type === "thinking") Object.assign(b, { thinking: "", signature: "" });
        else if (block.type === "redacted_thinking" && isText(block.data)) b.data = block.data;
        else if (block.type === "tool_use" && isText(block.id) && isText(block.name)) {
          Object.assign(b, { id: this.freshId(block.id, taken), name: block.name, json: "" });
        } else throw new BadStream(`block ${e.index}: unusable block ${JSON.stringify(block).slice(0, 80)}`);
        this.blocks.push(b);
        return null;
      }
      case "text_delta":
        this.open(e.index, ["text"]).text += String(e.text ?? "");
        return null;
      case "thinking_delta":
        this.open(e.index, ["thinking"]).thinking += String(e.thinking ?? "");
        return null;
      case "signature_delta":
        this.open(e.index, ["thinking"]).signature += String(e.signature ?? "");
        return null;
      case "input_json_delta":
        this.open(e.index, ["tool_use"]).json += String(e.partial_json ?? "");
        return null;
      case "block_stop": {
        const b = this.open(e.index, ["text", "thinking", "redacted_thinking", "tool_use"]);
        if (b.type === "tool_use") {
          let input;
          try {
            input = b.json.trim() === "" ? {} : JSON.parse(b.json);
          } catch (err) {
            throw new BadStream(`tool input of block ${e.index} is not JSON: ${err.message}`);
          }
          if (!input || typeof input !== "object" || Array.isArray(input)) {
            throw new BadStream(`tool input of block ${e.index} is not an object`);
          }
          b.input = input;
        }
        b.closed = true;
        return b.type === "text" && b.text.trim() ? "text" : null;
      }
      case "message_delta":
        if (!STOP_REASONS.includes(e.stop_reason)) throw new BadStream(`stop reason ${JSON.stringify(e.stop_reason)}`);
        this.stop = e.stop_reason;
        return null;
      case "message_stop":
        if (this.blocks.some((b) => !b.closed)) throw new BadStream("message_stop before every block stopped");
        if (this.stop === null) throw new BadStream("message_stop without a stop reason");
        return "done";
      default:
        throw new BadStream(`unknown event ${JSON.stringify(kind)}`);
    }
  }

  freshId(wanted, taken) {
    const here = new Set(this.blocks.filter((b) => b.type === "tool_use").map((b) => b.id));
    const free = (id) => !taken.has(id) && !here.has(id);
    if (free(wanted)) return wanted;
    let k = 2;
    while (!free(`${wanted}-n${k}`)) k++;
    return `${wanted}-n${k}`;
  }

  /** The completed blocks, in stream order, as wire blocks. */
  completed() {
    const out = [];
    for (const b of this.blocks) {
      if (!b.closed) continue;
      if (b.type === "text" && b.text.trim()) out.push({ type: "text", text: b.text });
      else if (b.type === "thinking" && b.signature) out.push({ type: "thinking", thinking: b.thinking, signature: b.signature });
      else if (b.type === "redacted_thinking") out.push({ type: "redacted_thinking", data: b.data });
      else if (b.type === "tool_use") out.push({ type: "tool_use", id: b.id, name: b.name, input: b.input });
    }
    return out;
  }
}

const callsOf = (m) => m.content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, input: b.input }));
const toolIds = (m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_use").map((b) => b.id) : []);

function resultBlock(id, outcome) {
  const b = { type: "tool_result", tool_use_id: id, content: outcome.content ?? "" };
  if (outcome.is_error) b.is_error = true;
  return b;
}

class Engine {
  constructor(config) {
    this.config = config;
    this.configured = null; // {system, tools} once a configure input was accepted
    this.history = [];
    this.phase = "idle"; // idle | gen | tools
    this.op = 0;
    this.lastOp = 0;
    this.calls = [];
    this.results = []; // [id, outcome] in arrival order
    this.taken = new Set();
    this.resumes = 0;
    this.draft = []; // completed text blocks of the current stream, as durably written
    this.stream = null;
  }

  get system() {
    return this.configured ? this.configured.system : this.config.system;
  }

  get tools() {
    return this.configured ? this.configured.tools : this.config.tools;
  }

  snapshot() {
    const history = BUG === "jsonb_reorders_input" ? this.history.map(sortedKeys) : this.history;
    return {
      v: 1, configured: this.configured, history, phase: this.phase, op: this.op, lastOp: this.lastOp,
      calls: this.calls, results: this.results, taken: [...this.taken].sort(), resumes: this.resumes, draft: this.draft,
    };
  }

  persist(outputs) {
    const json = JSON.stringify(this.snapshot());
    outputs.push({ output: "persist", bytes: Buffer.from(`#${Buffer.byteLength(json)}:${json}\n`) });
  }

  pending() {
    if (this.phase === "gen") return { pending: "generation", op: this.op };
    if (this.phase === "tools") return { pending: "tools", op: this.op, calls: this.calls };
    return { pending: "none" };
  }

  idle() {
    return this.phase === "idle";
  }

  state() {
    const s = this.stream && [this.stream.op, this.stream.started, this.stream.stop, this.stream.blocks];
    return createHash("sha256").update(JSON.stringify([this.snapshot(), this.history, s])).digest("hex");
  }

  fixedTexts() {
    return [RESUME_TEXT];
  }

  newOp() {
    this.lastOp += 1;
    return this.lastOp;
  }

  append(m) {
    this.history.push(m);
    for (const id of toolIds(m)) this.taken.add(id);
  }

  startGeneration(outputs) {
    this.phase = "gen";
    this.op = this.newOp();
    this.draft = [];
    this.persist(outputs);
    this.stream = new Stream(this.op);
    const n = this.history.length;
    outputs.push({
      output: "send", op: this.op,
      request: {
        system: this.system, tools: this.tools, messages: this.history.slice(),
        cache: { session_key: this.config.session_key, breakpoints: [{ after_message: null }, { after_message: n - 1 }] },
      },
    });
  }

  endTurn(outputs, outcome) {
    this.phase = "idle";
    this.op = 0;
    this.calls = [];
    this.results = [];
    this.draft = [];
    this.stream = null;
    this.persist(outputs);
    outputs.push({ output: "turn_ended", outcome });
  }

  handle(input) {
    switch (input.input) {
      case "stream":
        return this.onStream(input.op, input.event);
      case "tool_result":
        return this.onResult(input.op, input.outcome);
      case "cancel":
        return this.onCancel(input.cause);
      default:
        return this.betweenTurns(input);
    }
  }

  betweenTurns(input) {
    if (this.phase !== "idle") throw new Refused(`${input.input} while a turn is open`);
    const out = [];
    switch (input.input) {
      case "prompt":
        if (!isText(input.text) || input.text === "") throw new Refused("an empty prompt");
        this.append({ role: "user", content: [{ type: "text", text: input.text }] });
        this.resumes = 0;
        this.startGeneration(out);
        return out;
      case "compact":
        if (!isText(input.summary) || !input.summary.trim()) throw new Refused("a blank summary");
        this.history = [compacted(input.summary, directives(this.history))];
        break;
      case "rewind": {
        const i = input.index;
        if (!Number.isInteger(i) || i < 0 || i > this.history.length) throw new Refused(`rewind to ${i} of ${this.history.length} messages`);
        if (i > 0 && toolIds(this.history[i - 1]).length) throw new Refused(`rewind to ${i} leaves the calls of message ${i - 1} unanswered`);
        this.history = this.history.slice(0, i);
        break;
      }
      case "configure":
        this.configured = { system: input.system, tools: input.tools };
        break;
      default:
        throw new Refused(`unknown input ${JSON.stringify(input.input)}`);
    }
    this.persist(out);
    return out;
  }

  onStream(op, event) {
    const current = this.phase === "gen" && this.stream !== null;
    if (!current || (op !== this.op && BUG !== "stale_delta_applied")) return [];
    const out = [];
    let got;
    try {
      got = this.stream.apply(event, this.taken);
    } catch (err) {
      if (!(err instanceof BadStream)) throw err;
      out.push({ output: "abort", op: this.op });
      this.endTurn(out, { outcome: "failed", reason: err.message });
      return out;
    }
    if (got === "text") {
      this.draft = this.stream.completed().filter((b) => b.type === "text");
      this.persist(out);
    }
    if (got !== "done") return out;
    const blocks = this.stream.completed();
    const stop = this.stream.stop;
    if (!blocks.length) {
      this.endTurn(out, { outcome: "failed", reason: "an empty reply" });
      return out;
    }
    const message = { role: "assistant", content: blocks };
    this.append(message);
    this.stream = null;
    this.draft = [];
    const calls = callsOf(message);
    if (calls.length) {
      this.resumes = 0;
      this.phase = "tools";
      this.op = this.newOp();
      this.calls = calls;
      this.results = [];
      this.persist(out);
      out.push({ output: "dispatch", op: this.op, calls });
      return out;
    }
    if (stop === "max_tokens") {
      if (this.resumes < (this.config.max_truncated_resumes ?? 0)) {
        this.resumes += 1;
        this.append({ role: "user", content: RESUME_TEXT });
        this.startGeneration(out);
        return out;
      }
      this.endTurn(out, { outcome: "max_tokens" });
      return out;
    }
    this.endTurn(out, { outcome: "end_turn" });
    return out;
  }

  onResult(op, outcome) {
    const id = outcome && outcome.tool_use_id;
    if (this.phase !== "tools" || op !== this.op) return [];
    if (!this.calls.some((c) => c.id === id) || this.results.some(([r]) => r === id)) return [];
    this.results.push([id, outcome]);
    const out = [];
    if (this.results.length < this.calls.length) {
      this.persist(out);
      return out;
    }
    const got = new Map(this.results);
    this.append({ role: "user", content: this.calls.map((c) => resultBlock(c.id, got.get(c.id))) });
    this.calls = [];
    this.results = [];
    this.startGeneration(out);
    return out;
  }

  onCancel(cause) {
    if (this.phase === "idle") return [];
    const reason = LIVE_CAUSES.includes(cause) ? cause : "unknown";
    const silent = BUG === "cancel_records_nothing";
    const out = [{ output: "abort", op: this.op }];
    if (this.phase === "gen" && this.stream) {
      const blocks = this.stream.completed();
      if (blocks.length) {
        const m = { role: "assistant", content: blocks };
        this.append(m);
        const calls = callsOf(m);
        if (calls.length) {
          const text = silent ? "(no output)" : NOT_STARTED;
          this.append({ role: "user", content: calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: text, is_error: true })) });
        }
      }
    } else if (this.phase === "tools") {
      const got = new Map(this.results);
      const running = this.calls.filter((c) => !got.has(c.id)).length;
      const text = silent ? "(no output)" : CUT_SHORT;
      this.append({
        role: "user",
        content: this.calls.map((c) => (got.has(c.id) ? resultBlock(c.id, got.get(c.id)) : { type: "tool_result", tool_use_id: c.id, content: text, is_error: true })),
      });
      if (running && !silent) this.append({ role: "user", content: runningNote(running) });
    }
    if (!silent) this.append({ role: "user", content: record(reason) });
    this.endTurn(out, { outcome: "cancelled", reason });
    return out;
  }
}

/** Splits the log into records; returns [snapshots, length of the complete ones]. */
function readLog(log) {
  const snapshots = [];
  let at = 0;
  while (at < log.length) {
    const colon = log.indexOf(0x3a, at);
    const head = colon < 0 ? "" : log.subarray(at, colon).toString("latin1");
    if (log[at] !== 0x23 || colon < 0 || !/^#\d{1,9}$/.test(head)) {
      // A header cut short can only be the last bytes of the log.
      if (colon < 0 && /^#\d*$/.test(log.subarray(at).toString("latin1"))) break;
      throw new RestoreFailed(`log byte ${at}: not a snapshot record header`);
    }
    const end = colon + 1 + Number(head.slice(1));
    if (end + 1 > log.length) break; // the record was cut short: a torn tail
    if (log[end] !== 0x0a) throw new RestoreFailed(`log byte ${at}: the snapshot record does not end where its header says`);
    let snap;
    try {
      snap = JSON.parse(log.subarray(colon + 1, end).toString("utf8"));
    } catch (err) {
      throw new RestoreFailed(`log byte ${at}: the snapshot is not JSON: ${err.message}`);
    }
    if (!snap || snap.v !== 1 || !Array.isArray(snap.history)) throw new RestoreFailed(`log byte ${at}: not a snapshot of this engine`);
    snapshots.push(snap);
    at = end + 1;
  }
  return [snapshots, at];
}

function restore(config, log) {
  const [snapshots, complete] = readLog(log);
  const outputs = complete < log.length ? [{ output: "truncate_log", len: complete }] : [];
  const e = new Engine(config);
  const s = snapshots[snapshots.length - 1];
  if (!s) return [e, outputs];
  Object.assign(e, {
    configured: s.configured, phase: s.phase, op: s.op, lastOp: s.lastOp, calls: s.calls,
    results: s.results, taken: new Set(s.taken), resumes: s.resumes, draft: s.draft,
  });
  for (const m of s.history) e.history.push(m);
  if (!["idle", "gen", "tools"].includes(e.phase)) throw new RestoreFailed(`the last snapshot has the phase ${JSON.stringify(e.phase)}`);
  if (e.phase === "gen") {
    if (e.draft.length) e.append({ role: "assistant", content: e.draft });
    e.append({ role: "user", content: record("crash") });
  } else if (e.phase === "tools") {
    const got = new Map(e.results);
    const missing = e.calls.filter((c) => !got.has(c.id));
    if (BUG === "restart_redispatches" && missing.length) {
      // Planted bug: the restart "resumes" the batch by running again every call
      // that has no saved result, though it may have run before the crash.
      e.op = e.newOp();
      e.persist(outputs);
      outputs.push({ output: "dispatch", op: e.op, calls: missing });
      return [e, outputs];
    }
    e.append({ role: "user", content: e.calls.map((c) => (got.has(c.id) ? resultBlock(c.id, got.get(c.id)) : { type: "tool_result", tool_use_id: c.id, content: UNKNOWN_AFTER_CRASH, is_error: true })) });
    if (missing.length) e.append({ role: "user", content: runningNote(missing.length) });
    e.append({ role: "user", content: record("crash") });
  } else {
    return [e, outputs];
  }
  e.endTurn(outputs, { outcome: "crashed" });
  return [e, outputs];
}

const IMPORTED_UNANSWERED = "No result was imported for this call; it may have taken effect.";

// The imported history made one the Messages API accepts (see the head comment).
function repairImport(messages) {
  if (!Array.isArray(messages)) throw new RestoreFailed("the imported history is not an array of messages");
  const out = [];
  const taken = new Set();
  let asked = []; // [id as kept] of the last assistant message, not answered yet
  let renamed = new Map(); // original id -> kept id, for that message's results
  const standIns = (ids) => ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: IMPORTED_UNANSWERED, is_error: true }));
  for (const m of messages) {
    if (!m || (m.role !== "user" && m.role !== "assistant")) throw new RestoreFailed("an imported message is neither user nor assistant");
    const blocks = Array.isArray(m.content) ? m.content : null;
    if (m.role === "assistant") {
      if (asked.length) out.push({ role: "user", content: standIns(asked) });
      asked = [];
      renamed = new Map();
      if (blocks === null) {
        if (isText(m.content) && m.content !== "") out.push({ role: "assistant", content: m.content });
        continue;
      }
      const kept = blocks.map((b) => {
        if (!b || b.type !== "tool_use") return b;
        let id = b.id;
        for (let k = 2; taken.has(id); k++) id = `${b.id}-i${k}`;
        taken.add(id);
        asked.push(id);
        if (id !== b.id) renamed.set(b.id, id);
        return id === b.id ? b : { ...b, id };
      });
      if (kept.length) out.push({ role: "assistant", content: kept });
      continue;
    }
    if (blocks === null) {
      if (asked.length) out.push({ role: "user", content: standIns(asked) });
      asked = [];
      out.push({ role: "user", content: m.content });
      continue;
    }
    const answered = [];
    const results = [];
    const rest = [];
    for (const b of blocks) {
      if (b && b.type === "tool_result") {
        const id = renamed.get(b.tool_use_id) || b.tool_use_id;
        if (asked.includes(id) && !answered.includes(id)) {
          answered.push(id);
          results.push(id === b.tool_use_id ? b : { ...b, tool_use_id: id });
        }
      } else if (b && b.type !== "tool_use") {
        rest.push(b);
      }
    }
    const content = [...results, ...standIns(asked.filter((id) => !answered.includes(id))), ...rest];
    asked = [];
    renamed = new Map();
    if (content.length) out.push({ role: "user", content });
  }
  if (asked.length) out.push({ role: "user", content: standIns(asked) });
  return out;
}

function importHistory(config, messages) {
  const e = new Engine(config);
  for (const m of repairImport(messages)) e.append(m);
  const outputs = [];
  e.persist(outputs);
  return [e, outputs];
}

run("snapshot-node", (config) => new Engine(config), restore, importHistory);
