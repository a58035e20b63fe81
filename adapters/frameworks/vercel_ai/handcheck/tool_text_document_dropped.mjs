// Hand check, no turnsim: a tool whose `toModelOutput` returns a multi-part `content`
// output holding a text document (a `file` part of media type text/plain, as inline
// text `{type: "text"}` or as bytes `{type: "data"}`, both forms the SDK's types name)
// keeps it in `responseMessages`, but the SDK's own Anthropic provider
// (@ai-sdk/anthropic) leaves it out of the next request's tool_result, with only a
// warning on the step; an image part of the same output is sent. The Messages API takes
// a `document` block with a plain-text source inside tool_result content (the
// `anthropic` SDK's ToolResultBlockParam lists DocumentBlockParam), so the model is
// shown less than the tool returned.
//
// Only `ai`, `@ai-sdk/anthropic` and a loopback HTTP server written here that stands in
// for /v1/messages (SSE). Exits 0 while both text-document forms are dropped and the
// image is kept (it prints what it saw), 1 otherwise.
import { createServer } from "node:http";
import { ai, load } from "../fw.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
const { createAnthropic } = await load("@ai-sdk/anthropic");
globalThis.AI_SDK_LOG_WARNINGS = false;

const requests = [];
const sse = (events) => events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
const start = { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } };
const reply = (block, delta, stop) => [
  start,
  { type: "content_block_start", index: 0, content_block: block },
  { type: "content_block_delta", index: 0, delta },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: "message_stop" },
];
const callReply = reply({ type: "tool_use", id: "toolu_1", name: "read_report", input: {} }, { type: "input_json_delta", partial_json: "{}" }, "tool_use");
const doneReply = reply({ type: "text", text: "" }, { type: "text_delta", text: "done" }, "end_turn");
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const parsed = JSON.parse(body);
    requests.push(parsed);
    const last = parsed.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content.some((b) => b.type === "tool_result");
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(sse(answered ? doneReply : callReply));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const anthropic = createAnthropic({ apiKey: "not-a-key", baseURL: `http://127.0.0.1:${server.address().port}/v1` });

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAAD0lEQVR4AQEEAPv/AP8AAAMBAQCNHeWCAAAAAElFTkSuQmCC";
const report = "report of read_report\nall checks passed";
const text = { type: "text", text: "output of read_report" };
const shapes = [
  ["text + PNG image", [text, { type: "file", mediaType: "image/png", data: { type: "data", data: png } }]],
  ["text + text document as inline text", [text, { type: "file", mediaType: "text/plain", data: { type: "text", text: report } }]],
  ["text + text document as bytes", [text, { type: "file", mediaType: "text/plain", data: { type: "data", data: Buffer.from(report).toString("base64") } }]],
];
const kinds = (blocks) => (typeof blocks === "string" ? "a string" : blocks.map((b) => b.type).join(", "));
const seen = {};
for (const [name, parts] of shapes) {
  requests.length = 0;
  const tools = {
    read_report: tool({
      inputSchema: jsonSchema({ type: "object" }),
      execute: async () => "unused",
      toModelOutput: () => ({ type: "content", value: parts }),
    }),
  };
  const r = streamText({ model: anthropic("claude-test"), messages: [{ role: "user", content: "read the report" }], tools, stopWhen: isStepCount(5) });
  for await (const _ of r.fullStream);
  const saved = (await r.responseMessages).find((m) => m.role === "tool").content[0].output.value;
  const sent = requests[1].messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result").content;
  const warnings = (await r.steps).flatMap((s) => s.warnings ?? []).map((w) => w.message).filter(Boolean);
  console.log(`${name}:`);
  console.log(`  responseMessages keeps parts: ${parts.length === saved.length ? saved.map((p) => p.type + (p.mediaType ? ` ${p.mediaType}` : "")).join(", ") : "?"}`);
  console.log(`  the next request's tool_result holds: [${kinds(sent)}]`);
  console.log(`  step warnings: ${JSON.stringify(warnings)}`);
  seen[name] = { saved: saved.length, sent: kinds(sent) };
}
server.close();
const shows =
  seen["text + PNG image"].sent === "text, image" &&
  seen["text + text document as inline text"].saved === 2 &&
  seen["text + text document as inline text"].sent === "text" &&
  seen["text + text document as bytes"].saved === 2 &&
  seen["text + text document as bytes"].sent === "text";
process.exit(shows ? 0 : 1);
