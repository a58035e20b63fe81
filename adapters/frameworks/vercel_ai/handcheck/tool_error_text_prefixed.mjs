// Hand check, no turnsim: a tool that fails by throwing an Error (the documented way)
// reaches the model, and the saved messages, as the error's toString(): its text
// prefixed with "Error: ", not the text the tool reported.
//
// Only `ai` and a fake LanguageModelV4. Exits 0 while the behaviour shows (it prints
// the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };
let requests = 0;
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream() {
    const parts = ++requests === 1
      ? [{ type: "stream-start", warnings: [] }, { type: "tool-call", toolCallId: "toolu_1", toolName: "read_file", input: '{"path":"a"}' },
         { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage }]
      : [{ type: "stream-start", warnings: [] }, { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage }];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
};
const reported = "read_file failed: permission denied";
const tools = { read_file: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async () => { throw new Error(reported); } }) };
const r = streamText({ model, tools, messages: [{ role: "user", content: "read a" }], stopWhen: isStepCount(20) });
for await (const _ of r.fullStream);
const result = (await r.responseMessages).flatMap((m) => m.role === "tool" ? m.content : [])[0];
console.log(`the tool reported: ${JSON.stringify(reported)}`);
console.log(`saved tool result: ${JSON.stringify(result.output)}`);
process.exit(result.output.type === "error-text" && result.output.value === `Error: ${reported}` ? 0 : 1);
