#!/usr/bin/env node
// Example engine in JavaScript (Node 20, no dependencies): turnsim's reference turn
// engine ported, served over engine protocol v1. Run it with turnsim's StdioFactory
// ("node example_engine.mjs").
//
// Guarantee: the turn behaves as the reference engine's does. Write-ahead: every
// output list puts the log records before the effects they describe. A stale or
// duplicate delivery returns no outputs and changes nothing. Recovery reissues
// nothing, keeps every persisted observation and is idempotent. The log is one JSON
// record per line; a torn final line (no newline) is the only thing ever dropped.
//
// TURNSIM_EXAMPLE_BUG=orphan_on_cancel plants a bug: a cancel while tools run answers
// only the tools that finished, leaving the others' tool_use unanswered.

import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import * as rp from "./reference_port.mjs";
import { Refused, RestoreFailed, run } from "./turnsim_engine.mjs";

const BUG = process.env.TURNSIM_EXAMPLE_BUG || "";

/** A response the state machine refuses (the reference's InvalidResponse). */

// The tools as every request lists them, as the reference does: by name, a stable sort
// (the prompt cache keys on the tools' bytes, so the order the host listed them in must
// not change them). Names compare by code point, the byte order of their UTF-8 that the
// reference sorts by (`<` on strings compares UTF-16 units, which differs above U+FFFF).
function byName(tools) {
  const key = (s) => Array.from(s, (c) => c.codePointAt(0));
  const cmp = (a, b) => {
    const x = key(a.name), y = key(b.name);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  };
  return tools.slice().sort(cmp);
}

class Invalid extends Error {}

// Messages are never mutated, so an identity number stands for each in the state.
const ids = new WeakMap();
let nextId = 1;
function idOf(m) {
  let i = ids.get(m);
  if (i === undefined) {
    i = nextId++;
    ids.set(m, i);
  }
  return i;
}

class Stream {
  constructor(op) {
    this.op = op;
    this.started = false;
    this.blocks = [];
    this.stop = null;
  }

  block(index) {
    if (index < this.blocks.length) {
      const b = this.blocks[index];
      if (b.done) throw new Invalid(`delta for block ${index} after its stop`);
      return b;
    }
    throw new Invalid(`delta for block ${index}, which never started`);
  }

  /** Applies one event; returns streamed text to persist in the draft. */
  apply(e) {
    const kind = e.event;
    if (kind === "message_start") {
      if (this.started) throw new Invalid("message_start twice");
      this.started = true;
    } else if (kind === "block_start") {
      if (e.index !== this.blocks.length) throw new Invalid(`block ${e.index} started, expected block ${this.blocks.length}`);
      this.blocks.push({ kind: e.block, text: "", signature: "", json: "", done: false });
    } else if (kind === "text_delta") {
      const b = this.block(e.index);
      if (b.kind.type !== "text") throw new Invalid(`text delta for block ${e.index}, not a text block`);
      b.text += e.text;
      return e.text;
    } else if (kind === "thinking_delta" || kind === "signature_delta") {
      const b = this.block(e.index);
      if (b.kind.type !== "thinking") throw new Invalid(`${kind} for block ${e.index}, not thinking`);
      if (kind === "thinking_delta") b.text += e.thinking;
      else b.signature += e.signature;
    } else if (kind === "input_json_delta") {
      const b = this.block(e.index);
      if (b.kind.type !== "tool_use") throw new Invalid(`input delta for block ${e.index}, not a tool_use`);
      b.json += e.partial_json;
    } else if (kind === "block_stop") {
      const b = this.block(e.index);
      if (b.kind.type === "tool_use") {
        try {
          JSON.parse(b.json || "{}");
        } catch (err) {
          throw new Invalid(`tool_use ${b.kind.id}: input is not JSON: ${err.message}`);
        }
      }
      b.done = true;
    } else if (kind === "message_delta") {
      this.stop = [e.stop_reason, e.usage];
    }
    return null;
  }

  /** Finished blocks, plus streamed text cut short on a cancel. */
  keptBlocks(partial) {
    const out = [];
    for (const b of this.blocks) {
      const kind = b.kind.type;
      // Blank text is never kept, finished or cut: the API refuses a whitespace-only
      // text block in every later request (spec §7, "Blank text").
      const keepText = rp.rustTrim(b.text) !== "" && (partial || b.done);
      if (kind === "text" && keepText) out.push(rp.textBlock(b.text));
      else if (kind === "thinking" && b.done && b.signature) out.push({ type: "thinking", thinking: b.text, signature: b.signature });
      else if (kind === "redacted_thinking" && b.done) out.push({ type: "redacted_thinking", data: b.kind.data });
      else if (kind === "tool_use" && b.done) {
        let input = null;
        try {
          input = JSON.parse(b.json || "{}");
        } catch {
          input = null;
        }
        out.push({ type: "tool_use", id: b.kind.id, name: b.kind.name, input });
      }
    }
    return out;
  }

  finish() {
    const open = this.blocks.findIndex((b) => !b.done);
    if (open >= 0) throw new Invalid(`message_stop before block ${open} stopped`);
    if (this.stop === null) throw new Invalid("message_stop without a stop reason");
    return [rp.assistantBlocks(this.keptBlocks(false)), this.stop[0], this.stop[1]];
  }

  view() {
    return [this.op, this.started, this.blocks, this.stop];
  }
}

const persist = (out, record) => out.push({ output: "persist", bytes: Buffer.from(JSON.stringify(record) + "\n", "utf8") });

// JSON as JSON.stringify writes it, but -0 as `-0`: JSON.stringify writes it as 0, and a
// host may change a tool schema only by a zero's sign (turnsim's schema_edit), a prefix
// change the reference sees in the bytes it digests. Used for what holds schemas (the
// prefix digest and the configure record, which a restore reads back as -0).
function signedJSON(v) {
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(signedJSON).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const fields = Object.entries(v).filter(([, x]) => x !== undefined);
    return `{${fields.map(([k, x]) => `${JSON.stringify(k)}:${signedJSON(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

class Session {
  constructor(config, history = [], nextOp = 1) {
    this.config = { ...config };
    this.configRev = 0;
    this.history = history;
    this.phase = null; // null | ["generation", op] | ["tools", op, calls]
    this.nextOp = nextOp;
    this.usage = [0, 0];
    this.truncated = 0;
    this.turnBaseline = 0;
    this.inTurn = false;
    this.compacted = [];
    this.lastReceipt = null;
    this.stream = null;
    this.results = [];
    this.digest = null;
    // Tool-use ids that left the history (rewind, compaction, repair) stay taken.
    this.retired = new Set();
  }

  // --- protocol surface -----------------------------------------------------------

  pending() {
    if (this.phase === null) return { pending: "none" };
    if (this.phase[0] === "generation") return { pending: "generation", op: this.phase[1] };
    return { pending: "tools", op: this.phase[1], calls: this.phase[2] };
  }

  idle() {
    return this.phase === null;
  }

  fixedTexts() {
    return [rp.TRUNCATION_RESUME_TEXT, rp.COMPACTION_NOTICE];
  }

  state() {
    const view = [
      this.phase, this.nextOp, this.usage, this.truncated, this.turnBaseline, this.inTurn,
      this.compacted, this.lastReceipt, this.configRev, this.stream ? this.stream.view() : null,
      this.results, this.history.map(idOf), [...this.retired].sort(),
    ];
    return createHash("sha1").update(JSON.stringify(view)).digest("hex");
  }

  handle(i) {
    switch (i.input) {
      case "prompt": return this.prompt(i.text, i.now);
      case "stream": return this.streamEvent(i.op, i.event);
      case "tool_result": return this.toolResult(i.op, i.outcome);
      case "cancel": return this.cancel(i.cause);
      case "compact": return this.compact(i.summary);
      case "rewind": return this.rewind(i.index);
      case "configure": return this.configure(i.system, i.tools, i.thinking);
      default: throw new Refused(`unknown input ${JSON.stringify(i.input)}`);
    }
  }

  // --- the state machine ------------------------------------------------------------

  requireIdle() {
    if (this.phase !== null) throw new Refused(`busy: op#${this.phase[1]} is outstanding; this input is accepted only between turns`);
  }

  freshOp() {
    return this.nextOp++;
  }

  generate() {
    const op = this.freshOp();
    this.phase = ["generation", op];
    return [["generate", op]];
  }

  finish(outcome) {
    this.phase = null;
    return [["finished", outcome]];
  }

  checkResponse(message, stopReason) {
    if (message.content.length === 0) throw new Invalid("the generated message has empty content");
    message.content.forEach((b, j) => {
      if (b.type === "tool_result") throw new Invalid(`block ${j} of the generated message is a tool_result`);
    });
    const calls = rp.toolCalls(message);
    if (stopReason === "tool_use" && calls.length === 0) throw new Invalid("stop reason tool_use with no tool calls");
    const seen = new Set();
    for (const m of this.history) for (const b of rp.blocksOf(m)) if (b.type === "tool_use") seen.add(b.id);
    for (const c of calls) {
      if (seen.has(c.id)) throw new Invalid(`tool_use id ${c.id} is not unique`);
      seen.add(c.id);
    }
    return calls;
  }

  generated(message, stopReason, usage) {
    const calls = this.checkResponse(message, stopReason);
    this.usage = [this.usage[0] + usage.input_tokens, this.usage[1] + usage.output_tokens];
    this.history.push(message);
    if (calls.length > 0) {
      this.truncated = 0;
      const op = this.freshOp();
      this.phase = ["tools", op, calls];
      return [["tools", op, calls]];
    }
    if (stopReason === "max_tokens") {
      if (this.truncated < this.config.max_truncated_resumes) {
        this.truncated++;
        this.history.push(rp.userText(rp.TRUNCATION_RESUME_TEXT));
        return this.generate();
      }
      return this.finish({ outcome: "max_tokens" });
    }
    this.truncated = 0;
    return this.finish({ outcome: "end_turn" });
  }

  // --- inputs -----------------------------------------------------------------------

  prompt(text, now) {
    this.requireIdle();
    if (text === "") throw new Refused("empty input: the prompt is empty");
    const hidden = rp.hiddenDirectives(this.compacted, this.history).filter((d) => d !== text);
    const block = rp.turnContextBlock(now, this.config.stance, hidden);
    const before = this.history.length;
    this.history.push({ role: "user", content: [rp.textBlock(block), rp.textBlock(text)] });
    this.usage = [0, 0];
    this.truncated = 0;
    const effects = this.generate();
    this.turnBaseline = before;
    this.inTurn = true;
    const out = [];
    this.commit(before, effects, out, true);
    return out;
  }

  /** Persists what a transition appended with the intent it left, then carries out
   * its effects. */
  commit(before, effects, out, turnStart = false) {
    const appended = this.history.slice(before);
    const finishing = effects.some((e) => e[0] === "finished");
    if (turnStart) persist(out, { turn_start: { baseline: before, messages: appended, pending: this.pending() } });
    else if (appended.length > 0 || !finishing) persist(out, { append: { messages: appended, pending: this.pending() } });
    for (const e of effects) {
      if (e[0] === "generate") this.send(e[1], out);
      else if (e[0] === "tools") {
        this.results = [];
        out.push({ output: "dispatch", op: e[1], calls: e[2] });
      } else {
        this.stream = null;
        this.results = [];
        this.finishTurn(e[1], out);
      }
    }
  }

  prefixDigest() {
    if (this.digest === null) {
      const prefix = signedJSON({ system: this.config.system, tools: byName(this.config.tools) });
      this.digest = createHash("sha256").update(prefix).digest("hex");
    }
    return this.digest;
  }

  send(op, out) {
    // The session's thinking setting, a fixed field, so before the messages; absent
    // when off (protocol §7: a request without it is judged as thinking off).
    const thinking = this.config.thinking == null ? {} : { thinking: this.config.thinking };
    const request = {
      system: this.config.system,
      tools: byName(this.config.tools),
      ...thinking,
      messages: this.history.slice(),
      cache: { session_key: this.config.session_key, breakpoints: rp.cacheBreakpoints(this.turnBaseline, this.history.length) },
    };
    const digest = this.prefixDigest();
    persist(out, { receipt: { op, digest } });
    if (this.lastReceipt !== null && this.lastReceipt[1] !== digest) {
      const activity = { kind: "prefix-changed", data: { current: digest, previous: this.lastReceipt[1] } };
      persist(out, { activity: { activity } });
      out.push({ output: "activity", activity });
    }
    this.lastReceipt = [op, digest];
    this.stream = new Stream(op);
    out.push({ output: "send", op, request });
  }

  finishTurn(outcome, out) {
    if (outcome.outcome === "failed") {
      const repaired = this.history.slice();
      rp.repairAfterFailure(repaired, this.turnBaseline);
      const n = repaired.length;
      if (n < this.history.length && rp.validate(this.history.slice(0, n)) === null) {
        for (const id of rp.toolUseIds(this.history.slice(n))) this.retired.add(id);
        this.history.length = n;
        persist(out, { rewind: { len: n } });
      }
    }
    this.inTurn = false;
    persist(out, { turn_end: { outcome } });
    out.push({ output: "turn_ended", outcome });
  }

  taken(toolUseId, stream) {
    return (
      this.retired.has(toolUseId) ||
      stream.blocks.some((b) => b.kind.type === "tool_use" && b.kind.id === toolUseId) ||
      this.history.some((m) => rp.blocksOf(m).some((b) => b.type === "tool_use" && b.id === toolUseId))
    );
  }

  /** The block_start event with the id the session keeps: the provider's own when it is
   * free, else the first free `{id}-{k}`, k = 2, 3, ... (docs/spec.md §7). */
  withUniqueId(event, stream) {
    const providerId = event.block.id;
    if (!this.taken(providerId, stream)) return event;
    let k = 2;
    while (this.taken(`${providerId}-${k}`, stream)) k++;
    return { ...event, block: { ...event.block, id: `${providerId}-${k}` } };
  }

  failGeneration(op, why, out) {
    if (this.phase !== null && this.phase[0] === "generation" && this.phase[1] === op) {
      this.phase = null;
      out.push({ output: "abort", op });
      this.stream = null;
      this.finishTurn({ outcome: "failed", reason: why }, out);
    }
  }

  streamEvent(op, event) {
    const out = [];
    const stream = this.stream;
    if (stream === null || stream.op !== op) return out; // stale: an operation that is over
    if (event.event === "error") {
      this.failGeneration(op, `provider error ${event.kind}: ${event.message}`, out);
      return out;
    }
    if (event.event === "block_start" && event.block.type === "tool_use") event = this.withUniqueId(event, stream);
    if (event.event === "message_start" && !stream.started) persist(out, { draft: { op, base_len: this.history.length } });
    let text, finished;
    try {
      text = stream.apply(event);
      finished = event.event === "message_stop" ? stream.finish() : null;
    } catch (e) {
      if (!(e instanceof Invalid)) throw e;
      out.length = 0;
      this.failGeneration(op, `stream protocol: ${e.message}`, out);
      return out;
    }
    if (text !== null) persist(out, { draft_text: { op, text } });
    else if (finished !== null) {
      const before = this.history.length;
      let effects;
      try {
        effects = this.generated(...finished);
      } catch (e) {
        if (!(e instanceof Invalid)) throw e;
        this.failGeneration(op, `invalid response: ${e.message}`, out);
        return out;
      }
      this.stream = null;
      this.commit(before, effects, out);
    }
    return out;
  }

  toolResult(op, outcome) {
    const out = [];
    if (this.phase === null || this.phase[0] !== "tools" || this.phase[1] !== op) return out;
    const calls = this.phase[2];
    const id = outcome.tool_use_id;
    if (!calls.some((c) => c.id === id) || this.results.some((r) => r.tool_use_id === id)) return out;
    persist(out, { tool_result: { op, outcome } });
    this.results.push(outcome);
    if (this.results.length < calls.length) return out;
    const byId = new Map(this.results.map((r) => [r.tool_use_id, r]));
    const blocks = calls.map((c) => rp.resultBlock(c.id, byId.get(c.id).content, byId.get(c.id).is_error));
    const before = this.history.length;
    this.history.push(rp.userBlocks(blocks));
    this.results = [];
    this.commit(before, this.generate(), out);
    return out;
  }

  cancel(cause) {
    const out = [];
    if (this.phase === null) return out;
    const before = this.history.length;
    const phrase = rp.PHRASES[cause];
    const op = this.phase[1];
    out.push({ output: "abort", op });
    if (this.phase[0] === "generation") {
      let blocks = this.stream && this.stream.op === op ? this.stream.keptBlocks(true) : [];
      if (blocks.length > 0) {
        let partial = rp.assistantBlocks(blocks);
        try {
          this.checkResponse(partial, "end_turn");
        } catch (e) {
          if (!(e instanceof Invalid)) throw e;
          // A reused tool id the provider would refuse: keep the rest.
          blocks = blocks.filter((b) => b.type !== "tool_use");
          partial = blocks.length > 0 ? rp.assistantBlocks(blocks) : null;
        }
        if (partial !== null) {
          const calls = rp.toolCalls(partial);
          this.history.push(partial);
          if (calls.length > 0) this.history.push(rp.userBlocks(calls.map((c) => rp.resultBlock(c.id, phrase, true))));
        }
      }
    } else {
      const calls = this.phase[2];
      const finished = new Map(this.results.map((r) => [r.tool_use_id, r]));
      this.results = [];
      const blocks = [];
      const unfinished = [];
      for (const c of calls) {
        const r = finished.get(c.id);
        if (r !== undefined) blocks.push(rp.resultBlock(c.id, r.content, r.is_error));
        else {
          unfinished.push(c.name);
          if (BUG !== "orphan_on_cancel") blocks.push(rp.resultBlock(c.id, phrase, true));
        }
      }
      if (blocks.length > 0) this.history.push(rp.userBlocks(blocks));
      if (unfinished.length > 0) this.history.push(rp.userText(rp.noteText(phrase, unfinished)));
    }
    rp.appendMarker(this.history, cause);
    this.commit(before, this.finish({ outcome: "cancelled", reason: cause }), out);
    return out;
  }

  compact(summary) {
    this.requireIdle();
    if (rp.rustTrim(summary) === "") throw new Refused("empty input: the compaction summary is empty");
    const compacted = this.compacted.slice();
    for (const m of this.history) {
      const words = rp.directiveWords(m);
      if (words !== null && !compacted.includes(words)) compacted.push(words);
    }
    const messages = [rp.userText(rp.COMPACTION_NOTICE), rp.assistantBlocks([rp.textBlock(summary)])];
    for (const id of rp.toolUseIds(this.history)) this.retired.add(id);
    this.history = messages;
    this.compacted = compacted;
    this.turnBaseline = messages.length;
    const out = [];
    persist(out, { reset: { messages, compacted } });
    return out;
  }

  rewind(index) {
    this.requireIdle();
    if (index > this.history.length) throw new Refused(`cannot rewind to message ${index}: the history has ${this.history.length} messages`);
    const err = rp.validate(this.history.slice(0, index));
    if (err) throw new Refused(`invalid history: ${err}`);
    for (const id of rp.toolUseIds(this.history.slice(index))) this.retired.add(id);
    this.history.length = index;
    this.turnBaseline = Math.min(this.turnBaseline, index);
    const out = [];
    persist(out, { rewind: { len: index } });
    return out;
  }

  configure(system, tools, thinking) {
    // Idle only: a thinking switch never lands inside a tool loop (protocol §4).
    this.requireIdle();
    const out = [];
    const record = { configure: thinking == null ? { system, tools } : { system, tools, thinking } };
    out.push({ output: "persist", bytes: Buffer.from(signedJSON(record) + "\n", "utf8") });
    this.config.system = system;
    this.config.tools = tools;
    if (thinking != null) this.config.thinking = switched(thinking);
    this.configRev++;
    this.digest = null;
    return out;
  }
}

/** The session's setting after a host's thinking switch: off is no setting. */
const switched = (thinking) => (thinking.type === "enabled" ? thinking : null);

export const create = (config) => new Session(config);

/** Rebuilds a session from its log after a crash. */
export function restore(config, log) {
  config = { ...config };
  const end = log.lastIndexOf(0x0a) + 1;
  const out = [];
  if (end < log.length) out.push({ output: "truncate_log", len: end });
  let history = [];
  let pending = { pending: "none" };
  let draft = null;
  let results = [];
  let lastOp = 0;
  let lastReceipt = null;
  let baseline = 0;
  let inTurn = false;
  let compacted = [];
  const retired = new Set();
  let offset = 0;
  const lines = end > 0 ? log.subarray(0, end - 1).toString("utf8").split("\n") : [];
  lines.forEach((line, i) => {
    let kind, r;
    try {
      const record = JSON.parse(line);
      const keys = Object.keys(record);
      if (keys.length !== 1) throw new Error(`a record with ${keys.length} keys`);
      kind = keys[0];
      r = record[kind];
    } catch (e) {
      throw new RestoreFailed(`log corrupt at record ${i} (byte ${offset}): ${e.message}`);
    }
    offset += Buffer.byteLength(line, "utf8") + 1;
    if (kind === "configure") {
      config.system = r.system;
      config.tools = r.tools;
      if (r.thinking != null) config.thinking = switched(r.thinking);
    } else if (kind === "turn_start" || kind === "append") {
      if (kind === "turn_start") {
        if (r.baseline !== history.length) {
          throw new RestoreFailed(`log record ${i}: turn baseline ${r.baseline} is not the ${history.length} messages replayed before it`);
        }
        baseline = r.baseline;
        inTurn = true;
      }
      history.push(...r.messages);
      const op = r.pending.op;
      if (op !== undefined) lastOp = Math.max(lastOp, op);
      if (kind === "turn_start" || op !== pending.op) results = [];
      pending = r.pending;
    } else if (kind === "draft") {
      lastOp = Math.max(lastOp, r.op);
      draft = [r.op, r.base_len, ""];
    } else if (kind === "draft_text") {
      if (draft !== null && draft[0] === r.op) draft[2] += r.text;
    } else if (kind === "tool_result") {
      if (pending.op === r.op) results.push(r.outcome);
    } else if (kind === "receipt") {
      lastOp = Math.max(lastOp, r.op);
      lastReceipt = [r.op, r.digest];
    } else if (kind === "reset") {
      for (const id of rp.toolUseIds(history)) retired.add(id);
      history = r.messages.slice();
      compacted = r.compacted.slice();
      baseline = history.length;
    } else if (kind === "rewind") {
      if (r.len > history.length) throw new RestoreFailed(`log record ${i}: rewind to ${r.len} beyond the ${history.length} messages replayed`);
      for (const id of rp.toolUseIds(history.slice(r.len))) retired.add(id);
      history.length = r.len;
      baseline = Math.min(baseline, r.len);
    } else if (kind === "turn_end") {
      inTurn = false;
      pending = { pending: "none" };
      draft = null;
      results = [];
    }
  });
  const before = history.length;
  if (draft !== null && pending.pending === "generation" && pending.op === draft[0]) rp.recoverCrashedTurn(history, draft[1], draft[2]);
  const err = rp.recoverCheckpoint(history, pending, results);
  if (err) throw new RestoreFailed(err);
  const s = new Session(config, history, lastOp + 1);
  s.turnBaseline = baseline;
  s.inTurn = inTurn;
  s.compacted = compacted;
  s.lastReceipt = lastReceipt;
  s.retired = retired;
  if (s.inTurn) {
    const appended = history.slice(before);
    if (appended.length > 0) persist(out, { append: { messages: appended, pending: { pending: "none" } } });
    s.finishTurn({ outcome: "crashed" }, out);
  }
  return [s, out];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  run("node-example" + (BUG ? `+${BUG}` : ""), create, restore);
}
