// Tests of the Node adapter and example engine: `node --test` in this directory
// (turnsim's `cargo test` runs them too, in sim/tests/stdio_node.rs).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import * as ee from "./example_engine.mjs";
import * as rp from "./reference_port.mjs";
import { Refused, RestoreFailed } from "./turnsim_engine.mjs";

const CONFIG = {
  system: "s",
  tools: [{ name: "read_file", description: "", input_schema: {} }],
  session_key: "k",
  stance: "st",
  max_truncated_resumes: 3,
};

const logOf = (outputs) => Buffer.concat(outputs.filter((o) => o.output === "persist").map((o) => o.bytes));

const toolCallReply = (op, id) =>
  [
    { event: "message_start" },
    { event: "block_start", index: 0, block: { type: "tool_use", id, name: "read_file" } },
    { event: "input_json_delta", index: 0, partial_json: '{"path":"a"}' },
    { event: "block_stop", index: 0 },
    { event: "message_delta", stop_reason: "tool_use", usage: { input_tokens: 1, output_tokens: 1 } },
    { event: "message_stop" },
  ].map((event) => ({ input: "stream", op, event }));

const feed = (s, inputs) => inputs.flatMap((i) => s.handle(i));

test("the note names one tool or several in the reference wording", () => {
  assert.equal(
    rp.noteText("Canceled by user", ["read_file"]),
    "[Canceled by user while the tool call `read_file` was running. It may have already started and partially applied its effects.]",
  );
  assert.equal(
    rp.noteText("Canceled", ["a", "bad name"]),
    "[Canceled while the tool calls `a`, (an unrecognised tool) were running. They may have already started and partially applied their effects.]",
  );
});

test("an unanswered tool call is an invalid history", () => {
  const history = [rp.userText("hi"), rp.assistantBlocks([{ type: "tool_use", id: "t1", name: "x", input: {} }])];
  assert.equal(rp.validate(history), "message 1: history ends with unanswered tool calls t1");
  assert.equal(rp.validate(history, true), null);
});

test("whitespace is trimmed as Rust trims it (U+FEFF is not whitespace)", () => {
  assert.equal(rp.rustTrim(" \u3000x\u2028 "), "x");
  assert.equal(rp.rustTrim("\ufeff"), "\ufeff");
});

test("a prompt persists the turn before sending it", () => {
  const s = ee.create(CONFIG);
  const out = s.handle({ input: "prompt", text: "hi", now: "t0" });
  assert.deepEqual(out.map((o) => o.output), ["persist", "persist", "send"]);
  assert.deepEqual(out[2].request.cache.breakpoints, [{ after_message: null }, { after_message: 0 }]);
  assert.deepEqual(s.pending(), { pending: "generation", op: 1 });
});

test("thinking on in the config is sent before the messages, and absent when off", () => {
  const thinking = { type: "enabled", budget_tokens: 2048 };
  const on = ee.create({ ...CONFIG, thinking }).handle({ input: "prompt", text: "hi", now: "t0" })[2].request;
  assert.deepEqual(Object.keys(on), ["system", "tools", "thinking", "messages", "cache"]);
  assert.deepEqual(on.thinking, thinking);
  const off = ee.create(CONFIG).handle({ input: "prompt", text: "hi", now: "t0" })[2].request;
  assert.deepEqual(Object.keys(off), ["system", "tools", "messages", "cache"]);
});

test("a thinking switch applies from the next turn, and a restore replays it", () => {
  const thinking = { type: "enabled", budget_tokens: 2048 };
  const s = ee.create({ ...CONFIG, thinking });
  const out = feed(s, [{ input: "prompt", text: "hi", now: "t0" }, ...toolCallReply(1, "t1")]);
  const sw = { input: "configure", system: "s", tools: CONFIG.tools, thinking: { type: "disabled" } };
  const before = s.state();
  assert.throws(() => s.handle(sw), Refused); // inside the tool loop: never applied there
  assert.equal(s.state(), before);
  out.push(...s.handle({ input: "tool_result", op: 2, outcome: { tool_use_id: "t1", content: "x", is_error: false } }));
  assert.deepEqual(out.at(-1).request.thinking, thinking);
  out.push(...s.handle({ input: "cancel", cause: "user" }));
  out.push(...s.handle(sw));
  out.push(...s.handle({ input: "prompt", text: "again", now: "t1" }));
  assert.ok(!("thinking" in out.at(-1).request));
  const [restored] = ee.restore({ ...CONFIG, thinking }, logOf(out));
  const later = restored.handle({ input: "prompt", text: "more", now: "t2" });
  assert.ok(!("thinking" in later.find((o) => o.output === "send").request));
});

test("a prompt while busy is refused and changes nothing", () => {
  const s = ee.create(CONFIG);
  s.handle({ input: "prompt", text: "hi", now: "t0" });
  const before = s.state();
  assert.throws(() => s.handle({ input: "prompt", text: "again", now: "t1" }), Refused);
  assert.equal(s.state(), before);
});

test("a cancel while tools run answers every call, then notes, then marks", () => {
  const s = ee.create(CONFIG);
  feed(s, [{ input: "prompt", text: "hi", now: "t0" }, ...toolCallReply(1, "t1")]);
  assert.equal(s.pending().pending, "tools");
  s.handle({ input: "cancel", cause: "user" });
  const tail = s.history.slice(-3);
  assert.equal(tail[0].content[0].content, "Canceled by user");
  assert.ok(tail[1].content.startsWith("[Canceled by user while the tool call `read_file`"));
  assert.deepEqual(tail[2], rp.userText("[Request interrupted by user]"));
  assert.equal(rp.validate(s.history), null);
});

test("restore after a crash mid-tools reissues nothing and truncates a torn tail", () => {
  const s = ee.create(CONFIG);
  const out = feed(s, [{ input: "prompt", text: "hi", now: "t0" }, ...toolCallReply(1, "t1")]);
  const log = Buffer.concat([logOf(out), Buffer.from('{"tool_res')]);
  const [restored, outputs] = ee.restore(CONFIG, log);
  assert.deepEqual(outputs[0], { output: "truncate_log", len: log.length - 10 });
  assert.ok(!outputs.some((o) => o.output === "dispatch"));
  assert.deepEqual(outputs.at(-1), { output: "turn_ended", outcome: { outcome: "crashed" } });
  assert.deepEqual(restored.history.at(-1), rp.userText("[Request interrupted: runtime stopped unexpectedly]"));
  assert.equal(restored.history.at(-3).content[0].content, rp.INTERRUPTED_RESULT_TEXT);
  const [again, more] = ee.restore(CONFIG, Buffer.concat([log.subarray(0, log.length - 10), logOf(outputs)]));
  assert.deepEqual(more, []);
  assert.deepEqual(again.history, restored.history);
});

test("a corrupt record is a refused restore", () => {
  assert.throws(() => ee.restore(CONFIG, Buffer.from("not json\n")), RestoreFailed);
});

test("the engine says hello and answers with deltas over the pipe", () => {
  const script = fileURLToPath(new URL("./example_engine.mjs", import.meta.url));
  const requests = [
    { req: "create", config: CONFIG },
    { req: "input", n: 1, input: { input: "prompt", text: "hi", now: "t0" } },
    { req: "input", n: 2, input: { input: "rewind", index: 9 } },
  ];
  const run = spawnSync(process.execPath, [script], { input: requests.map((r) => JSON.stringify(r) + "\n").join("") });
  assert.equal(run.status, 0, run.stderr.toString());
  const lines = run.stdout.toString().trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines[0], { hello: "turnsim-engine", protocol: 1, engine: "node-example" });
  assert.deepEqual(lines[1].fixed_texts, [rp.TRUNCATION_RESUME_TEXT, rp.COMPACTION_NOTICE]);
  const prompt = lines[2];
  assert.equal(prompt.history.keep, 0);
  assert.equal(prompt.history.append.length, 1);
  assert.equal(prompt.outputs[2].request.messages, 1);
  const refused = lines[3];
  assert.ok(refused.refused.startsWith("busy: op#1 is outstanding"));
  assert.deepEqual(refused.history, { keep: 1, append: [] });
  assert.equal(refused.state, prompt.state);
});

const result = (op, id) => ({ input: "tool_result", op, outcome: { tool_use_id: id, content: "ok", is_error: false } });

test("a provider id reused in a later reply is kept under the first free suffix", () => {
  const s = ee.create(CONFIG);
  let out = feed(s, [{ input: "prompt", text: "hi", now: "t0" }, ...toolCallReply(1, "exec_0")]);
  out = out.concat(feed(s, [result(2, "exec_0"), ...toolCallReply(3, "exec_0")]));
  assert.equal(s.pending().calls[0].id, "exec_0-2");
  out = out.concat(feed(s, [result(4, "exec_0-2"), ...toolCallReply(5, "exec_0")]));
  assert.equal(s.pending().calls[0].id, "exec_0-3");
  assert.equal(rp.validate(s.history, true), null);
  const [restored] = ee.restore(CONFIG, logOf(out));
  assert.deepEqual(restored.history.flatMap((m) => rp.toolCalls(m).map((c) => c.id)), ["exec_0", "exec_0-2", "exec_0-3"]);
});

test("an id rewound out of the history stays taken across a restore", () => {
  const s = ee.create(CONFIG);
  let out = feed(s, [{ input: "prompt", text: "hi", now: "t0" }, ...toolCallReply(1, "t1")]);
  out = out.concat(s.handle({ input: "cancel", cause: "user" }), s.handle({ input: "rewind", index: 0 }));
  const [restored] = ee.restore(CONFIG, logOf(out));
  for (const session of [s, restored]) {
    feed(session, [{ input: "prompt", text: "again", now: "t1" }, ...toolCallReply(3, "t1")]);
    assert.equal(session.pending().calls[0].id, "t1-2");
  }
});

test("a configure that only flips a zero's sign is a prefix change, and a restore keeps the sign", () => {
  const schema = (zero) => ({ type: "object", properties: { n: { type: "number", minimum: zero } } });
  const tools = (zero) => [{ name: "read_file", description: "", input_schema: schema(zero) }];
  const s = ee.create({ ...CONFIG, tools: tools(0) });
  const out = feed(s, [{ input: "prompt", text: "hi", now: "t0" }]);
  out.push(...s.handle({ input: "cancel", cause: "user" }));
  out.push(...s.handle({ input: "configure", system: "s", tools: tools(-0) }));
  out.push(...s.handle({ input: "prompt", text: "again", now: "t1" }));
  const changed = out.filter((o) => o.output === "activity").map((o) => o.activity.kind);
  assert.deepEqual(changed, ["prefix-changed"]);
  // The log holds -0 as written, so the restored engine digests what the live one did:
  // its next request reports no change.
  const [restored] = ee.restore({ ...CONFIG, tools: tools(0) }, logOf(out));
  restored.handle({ input: "cancel", cause: "user" });
  const later = restored.handle({ input: "prompt", text: "more", now: "t2" });
  assert.deepEqual(later.filter((o) => o.output === "activity"), []);
});
