// Hand check, no turnsim: the SDK keeps a tool-call id the model repeats in a later
// step verbatim, so one conversation holds two different calls with one id, both run,
// and the next request carries both (the Anthropic API refuses a request with
// duplicate tool_use ids). Some OpenAI-compatible servers number calls per response.
//
// Only `ai` and a fake LanguageModelV4. Exits 0 while the behaviour shows (it prints
// the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };
const prompts = [];
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream({ prompt }) {
    prompts.push(prompt);
    const n = prompts.length;
    const parts = n <= 2
      ? [{ type: "stream-start", warnings: [] },
         { type: "tool-call", toolCallId: "exec_0", toolName: n === 1 ? "read_file" : "search", input: JSON.stringify({ path: n === 1 ? "a" : "b" }) },
         { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage }]
      : [{ type: "stream-start", warnings: [] }, { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage }];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
};
const ran = [];
const tools = {
  read_file: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async ({ path }) => (ran.push(["read_file", path]), `contents of ${path}`) }),
  search: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async ({ path }) => (ran.push(["search", path]), `hits in ${path}`) }),
};
const r = streamText({ model, tools, messages: [{ role: "user", content: "go" }], stopWhen: isStepCount(20) });
for await (const _ of r.fullStream);
const calls = prompts.at(-1).flatMap((m) => (m.role === "assistant" ? m.content : [])).filter((p) => p.type === "tool-call").map((p) => [p.toolName, p.toolCallId]);
console.log(`tools run: ${JSON.stringify(ran)}`);
console.log(`tool calls in the last request: ${JSON.stringify(calls)}`);
process.exit(ran.length === 2 && calls.length === 2 && calls[0][1] === calls[1][1] ? 0 : 1);
