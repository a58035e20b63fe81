// Hand check, no turnsim: a step that ends with a tool call but not with finish
// reason `tool-calls` (the reply stopped at max_tokens, or the provider's stream broke
// after the call's block closed) leaves the call in `responseMessages` with no result;
// the SDK never runs the tool, and every later streamText over the saved messages
// fails in the client with AI_MissingToolResultsError before any request is sent.
//
// Only `ai` and a fake LanguageModelV4. Exits 0 while the behaviour shows (it prints
// the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };

function model(first) {
  const m = {
    specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {}, requests: 0,
    async doGenerate() { throw new Error("streaming only"); },
    async doStream() {
      m.requests++;
      const parts = m.requests === 1 ? first : [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "0" }, { type: "text-delta", id: "0", delta: "ok" }, { type: "text-end", id: "0" },
        { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage },
      ];
      return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
    },
  };
  return m;
}

const call = { type: "tool-call", toolCallId: "toolu_1", toolName: "read_file", input: '{"path":"a"}' };
const cases = {
  "max_tokens": [{ type: "stream-start", warnings: [] }, call, { type: "finish", finishReason: { unified: "length", raw: "max_tokens" }, usage }],
  "stream error": [{ type: "stream-start", warnings: [] }, call, { type: "error", error: { type: "overloaded_error", message: "connection reset" } }],
};

let shown = 0;
for (const [name, first] of Object.entries(cases)) {
  const m = model(first);
  const ran = [];
  const tools = { read_file: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async ({ path }) => (ran.push(path), `contents of ${path}`) }) };
  const messages = [{ role: "user", content: "read a" }];
  const r1 = streamText({ model: m, tools, messages, stopWhen: isStepCount(20), onError: () => {} });
  for await (const _ of r1.fullStream);
  messages.push(...(await r1.responseMessages));
  messages.push({ role: "user", content: "go on" });
  let error = null;
  const r2 = streamText({ model: m, tools, messages, stopWhen: isStepCount(20), onError: ({ error: e }) => { error ??= e; } });
  for await (const _ of r2.fullStream);
  console.log(`${name}: saved ${JSON.stringify(messages.slice(1, -1))}`);
  console.log(`${name}: tool ran ${ran.length} time(s); requests sent ${m.requests}; next turn: ${error ? `${error.name}: ${error.message}` : "no error"}`);
  if (ran.length === 0 && m.requests === 1 && error?.name === "AI_MissingToolResultsError") shown++;
}
process.exit(shown === 2 ? 0 : 1);
