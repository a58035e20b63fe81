// The Vercel AI SDK's own turn loop as a turnsim engine (engine protocol v1).
//
// The application under test is the one the AI SDK's docs describe for a Node agent
// with tools: `streamText({ model, instructions, messages, tools, stopWhen:
// isStepCount(n), abortSignal })`, tools made with `tool({ inputSchema: jsonSchema(…),
// execute })`, the full stream consumed, and `await result.responseMessages` appended
// to the conversation the application saves (ai 7's name for what ai 6 called
// `response.messages`, which ai 7 limits to the last step; its migration guide says
// so); progress is saved after every step (`onStepEnd`, each step's
// `response.messages`) and on a cancel (`onAbort`, with the steps that completed); a
// cancel is the AbortController whose signal streamText was given. The model (harness_model.mjs) relays the harness's
// stream; each tool's execute awaits the harness's result (an error result is thrown,
// as a failing tool does). Plain ESM JavaScript, no TypeScript build step.
//
// Guarantee: every reply is computed by running Node's event loop until every promise
// waits on a harness input (loop.mjs: no timers, no wall clock), and the SDK's ids and
// clock are pinned through streamText's `_internal` options (`generateId`,
// `generateCallId`, `now`), so the outputs are a function of the inputs. What is
// adapter, not framework: the settling, the op bookkeeping the protocol needs (`send`
// and `dispatch` records in the log, so ops are never reused across restarts, and the
// tool calls the SDK starts while the model still streams held until the stream ends,
// since the protocol has one pending operation at a time), the `turn_start` /
// `turn_end` records that tell a restart a turn was cut short, and the wire rendering
// (wire.mjs).
import { settle, dropTimers } from "./loop.mjs"; // first: wraps the timers before the SDK loads
import { ai, aiVersion } from "./fw.mjs";
import { createHash } from "node:crypto";
import { HarnessModel, Generation } from "./harness_model.mjs";
import { Refused, RestoreFailed, serve } from "./protocol.mjs";
import { WireCache, grouped, modelOutput } from "./wire.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
globalThis.AI_SDK_LOG_WARNINGS = false; // the SDK's warnings would go to the console

const MAX_STEPS = 20; // the SDK's own default for its ToolLoopAgent
const COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]";

// The user's prompts that stand in `messages`, oldest first: a compaction keeps them
// verbatim after its notice (the application's user messages with text content are
// prompts, the notice aside), since the summary paraphrases exactly what the user asked.
const directives = (messages) =>
  messages
    .filter((m) => m.role === "user" && typeof m.content === "string" && m.content !== COMPACTION_NOTICE)
    .map((m) => m.content);

// Object identities for the state digest, numbered afresh for every engine so a reused
// process gives the digests a new one would.
let identities = new WeakMap();
let nextIdentity = 1;
function freshIdentities() {
  identities = new WeakMap();
  nextIdentity = 1;
}
function identity(o) {
  if (!identities.has(o)) identities.set(o, nextIdentity++);
  return identities.get(o);
}

class Engine {
  constructor(config, messages = [], nextOp = 1, idBase = 0) {
    this.config = { ...config };
    this.messages = messages; // the application's saved conversation (ModelMessages)
    this.saved = messages.map((m) => JSON.stringify(m)); // what the log holds of it
    this.nextOp = nextOp;
    this.nextId = idBase;
    this.version = 0; // bumped by every input that changes the state (the digest)
    this.out = [];
    this.running = false;
    this.abort = null;
    this.cause = null;
    this.gen = null; // the Generation of the request in flight
    this.batch = null; // {op, calls, waiters: Map id -> {resolve, reject}, results: Set}
    this.starting = []; // tool executions the SDK started since the last dispatch
    this.wire = new WireCache();
    this.model = new HarnessModel((options) => this.onRequest(options));
    this.tools = this.makeTools();
  }

  // --- the application -----------------------------------------------------------

  makeTools() {
    const tools = {};
    for (const t of this.config.tools) {
      tools[t.name] = tool({
        description: t.description,
        inputSchema: jsonSchema(t.input_schema ?? { type: "object" }),
        execute: (input, { toolCallId, abortSignal }) => this.runTool(t.name, input, toolCallId, abortSignal),
        toModelOutput: ({ output }) => modelOutput(output),
      });
    }
    return tools;
  }

  async runTool(name, input, id, abortSignal) {
    const outcome = await new Promise((resolve, reject) => {
      this.starting.push({ call: { id, name, input }, resolve, reject });
      abortSignal?.addEventListener("abort", () => reject(abortSignal.reason), { once: true });
    });
    if (outcome.is_error) throw new Error(outcome.content);
    return outcome.content;
  }

  async turn(text) {
    this.persist({ turn_start: text });
    const messages = [...this.messages, { role: "user", content: text }];
    this.save(messages);
    const abort = new AbortController();
    this.abort = abort;
    let failure = null;
    let done = []; // the messages of the steps that ended, in order
    const result = streamText({
      model: this.model,
      instructions: this.config.system,
      messages,
      tools: this.tools,
      stopWhen: isStepCount(MAX_STEPS),
      abortSignal: abort.signal,
      onError: ({ error }) => {
        failure ??= error;
      },
      onStepEnd: (step) => this.save([...messages, ...(done = done.concat(step.response.messages))]),
      onAbort: ({ steps }) => this.save([...messages, ...steps.flatMap((s) => s.response.messages)]),
      _internal: { generateId: () => this.id(), generateCallId: () => this.id(), now: () => 0 },
    });
    let outcome;
    try {
      for await (const part of result.fullStream) void part; // a UI would render these
      this.save([...messages, ...(await result.responseMessages)]);
      if (failure) outcome = { outcome: "failed", reason: describe(failure) };
      else if ((await result.finishReason) === "length") outcome = { outcome: "max_tokens" };
      else outcome = { outcome: "end_turn" };
    } catch (e) {
      outcome = abort.signal.aborted ? { outcome: "cancelled", reason: this.cause } : { outcome: "failed", reason: describe(failure ?? e) };
    }
    this.running = false;
    this.abort = null;
    this.gen = null;
    this.batch = null;
    this.persist({ turn_end: outcome });
    this.out.push({ output: "turn_ended", outcome });
  }

  /** Writes the saved conversation through the log: appends when what the log holds
   * is a prefix of it, rewrites it otherwise. Messages equal to saved ones keep the
   * saved objects (the SDK hands back fresh copies at every step). */
  save(messages) {
    const data = messages.map((m) => JSON.stringify(m));
    let n = 0;
    while (n < this.saved.length && n < data.length && data[n] === this.saved[n]) n++;
    const kept = this.messages.slice(0, n).concat(messages.slice(n));
    if (n === this.saved.length) {
      if (data.length > n) this.persist({ messages: messages.slice(n) });
    } else {
      this.persist({ reset: messages });
    }
    this.saved = data;
    this.messages = kept;
  }

  // --- the harness side ------------------------------------------------------------

  id() {
    return `id-${++this.nextId}`;
  }

  persist(record) {
    this.out.push({ output: "persist", bytes: Buffer.from(JSON.stringify(record) + "\n") });
  }

  freshOp() {
    return this.nextOp++;
  }

  onRequest(options) {
    const op = this.freshOp();
    const request = {
      system: this.config.system,
      tools: (options.tools ?? []).filter((t) => t.type === "function").map((t) => ({ name: t.name, description: t.description ?? "", input_schema: t.inputSchema })),
      messages: this.requestMessages(options.prompt),
      cache: { session_key: this.config.session_key, breakpoints: [] },
    };
    const system = options.prompt.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
    request.system = system;
    this.persist({ send: op });
    this.out.push({ output: "send", op, request });
    this.gen = new Generation(op, options.abortSignal);
    return this.gen;
  }

  /** The request's wire messages; where they equal the history's, the history's own
   * objects (so the protocol sends a count and turnsim sees the same messages). */
  requestMessages(prompt) {
    const wire = grouped(prompt);
    const history = this.history;
    if (wire.length <= history.length && wire.every((w, i) => JSON.stringify(w) === JSON.stringify(history[i]))) {
      return history.slice(0, wire.length);
    }
    return wire;
  }

  async settle() {
    await settle();
    if (!this.running) this.starting = []; // the run is over: nothing it started may run now
    if (this.starting.length > 0 && (this.gen === null || this.gen.done)) {
      if (this.toolsOpen()) throw new Error("vercel_ai adapter: tools started while another batch is outstanding");
      const op = this.freshOp();
      const calls = this.starting.map((s) => s.call);
      this.batch = { op, calls, waiters: new Map(this.starting.map((s) => [s.call.id, s])), results: new Set() };
      this.starting = [];
      this.persist({ dispatch: { op, calls } });
      this.out.push({ output: "dispatch", op, calls });
    }
  }

  toolsOpen() {
    return this.batch !== null && this.batch.results.size < this.batch.calls.length;
  }

  take() {
    const out = this.out;
    this.out = [];
    return out;
  }

  // --- protocol surface ------------------------------------------------------------

  get history() {
    return this.wire.wire(this.messages);
  }

  pending() {
    if (!this.running) return { pending: "none" };
    if (this.gen !== null && !this.gen.done) return { pending: "generation", op: this.gen.op };
    if (this.toolsOpen()) return { pending: "tools", op: this.batch.op, calls: this.batch.calls };
    return { pending: "none" };
  }

  idle() {
    return !this.running;
  }

  fixedTexts() {
    return [COMPACTION_NOTICE];
  }

  state() {
    const view = [this.version, this.nextOp, this.history.map(identity)];
    return createHash("sha256").update(JSON.stringify(view)).digest("hex").slice(0, 32);
  }

  async handle(i) {
    switch (i.input) {
      case "prompt":
        if (this.running) throw new Refused("busy: a turn is running");
        if (i.text === "") throw new Refused("empty input: the prompt is empty");
        this.version++;
        this.running = true;
        this.turn(i.text);
        break;
      case "stream":
        if (!this.running || this.gen === null || this.gen.op !== i.op || this.gen.done) return [];
        this.version++;
        this.gen.feed(i.event);
        break;
      case "tool_result": {
        const b = this.batch;
        const o = i.outcome;
        if (!this.running || b === null || b.op !== i.op || !b.waiters.has(o.tool_use_id) || b.results.has(o.tool_use_id)) return [];
        b.results.add(o.tool_use_id);
        this.version++;
        b.waiters.get(o.tool_use_id).resolve(o);
        break;
      }
      case "cancel": {
        if (!this.running) return [];
        this.version++;
        const p = this.pending();
        if (p.pending !== "none") this.out.push({ output: "abort", op: p.op });
        this.cause = i.cause;
        this.abort.abort();
        break;
      }
      case "compact":
        this.requireIdle();
        if (i.summary.trim() === "") throw new Refused("empty input: the compaction summary is empty");
        this.version++;
        this.save([
          { role: "user", content: COMPACTION_NOTICE },
          ...directives(this.messages).map((content) => ({ role: "user", content })),
          { role: "assistant", content: i.summary },
        ]);
        break;
      case "rewind":
        this.requireIdle();
        this.rewind(i.index);
        break;
      case "configure":
        this.requireIdle();
        this.version++;
        this.config.system = i.system;
        this.config.tools = i.tools;
        this.persist({ configure: { system: i.system, tools: i.tools } });
        this.tools = this.makeTools();
        break;
      default:
        throw new Refused(`unknown input ${JSON.stringify(i.input)}`);
    }
    await this.settle();
    return this.take();
  }

  requireIdle() {
    if (this.running) throw new Refused("busy: a turn is running");
  }

  rewind(index) {
    // The harness counts wire messages: one per saved message.
    const wire = this.history;
    if (index > wire.length || wire.length !== this.messages.length) throw new Refused(`cannot rewind to message ${index} of ${wire.length}`);
    const last = wire[index - 1];
    if (last && last.role === "assistant" && last.content.some((b) => b.type === "tool_use")) {
      throw new Refused("invalid history: the cut leaves a tool call unanswered");
    }
    this.version++;
    this.save(this.messages.slice(0, index));
  }
}

function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return JSON.stringify(e);
}

function create(config) {
  dropTimers();
  freshIdentities();
  return new Engine(config);
}

/** Reloads the saved conversation, as an application does after a restart; a turn
 * that was running ends `crashed`. */
function restore(config, log) {
  dropTimers();
  freshIdentities();
  config = { ...config };
  const end = log.lastIndexOf(0x0a) + 1;
  const out = [];
  if (end < log.length) out.push({ output: "truncate_log", len: end });
  let saved = [];
  let inTurn = false;
  let lastOp = 0;
  const lines = log.subarray(0, end).toString("utf8").split("\n").slice(0, -1);
  lines.forEach((line, n) => {
    let kind, r;
    try {
      const rec = JSON.parse(line);
      const keys = Object.keys(rec);
      if (keys.length !== 1) throw new Error(`${keys.length} keys`);
      kind = keys[0];
      r = rec[kind];
    } catch (e) {
      throw new RestoreFailed(`log corrupt at record ${n}: ${e.message}`);
    }
    if (kind === "messages") saved = saved.concat(r);
    else if (kind === "reset") saved = r;
    else if (kind === "turn_start") inTurn = true;
    else if (kind === "turn_end") inTurn = false;
    else if (kind === "send") lastOp = Math.max(lastOp, r);
    else if (kind === "dispatch") lastOp = Math.max(lastOp, r.op);
    else if (kind === "configure") {
      config.system = r.system;
      config.tools = r.tools;
    } else throw new RestoreFailed(`log record ${n}: unknown kind ${JSON.stringify(kind)}`);
  });
  // Ids after a restart must not repeat the ones given before it.
  const engine = new Engine(config, saved, lastOp + 1, end * 65536);
  if (inTurn) {
    engine.persist({ turn_end: { outcome: "crashed" } });
    engine.out.push({ output: "turn_ended", outcome: { outcome: "crashed" } });
  }
  return [engine, out.concat(engine.take())];
}

serve(`vercel-ai-sdk-${aiVersion}`, create, restore).catch((e) => {
  process.stderr.write(`vercel_ai adapter: ${e.stack ?? e}\n`);
  process.exit(2);
});
