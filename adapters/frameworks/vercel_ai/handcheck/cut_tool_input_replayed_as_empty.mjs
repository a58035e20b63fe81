// Hand check, no turnsim: when the output limit cuts a reply inside a tool call's
// input JSON (the Messages API then closes the block with the JSON unfinished and stops
// with `max_tokens`), the SDK does not run the call (right), answers it with a tool
// error, and keeps it in `responseMessages` with its input replaced by `{}`: the next
// request shows the model a call it never made (the input it streamed was
// `{"path":"src/ru`), as if that call had been complete.
//
// Only `ai` and a fake LanguageModelV4. Exits 0 while the behaviour shows (it prints
// the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, isStepCount, tool, jsonSchema } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };
const cut = '{"path":"src/ru';
const prompts = [];
const ran = [];
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream({ prompt }) {
    prompts.push(prompt);
    const parts = prompts.length === 1
      ? [{ type: "stream-start", warnings: [] },
         { type: "tool-call", toolCallId: "toolu_1", toolName: "run_shell", input: cut },
         { type: "finish", finishReason: { unified: "length", raw: "max_tokens" }, usage }]
      : [{ type: "stream-start", warnings: [] }, { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage }];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
};
const tools = {
  run_shell: tool({
    inputSchema: jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
    execute: async (input) => { ran.push(input); return "ok"; },
  }),
};
const messages = [{ role: "user", content: "fix the parser" }];
const r1 = streamText({ model, messages, tools, stopWhen: isStepCount(20), onError: () => {} });
for await (const _ of r1.fullStream);
const kept = (await r1.responseMessages).flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []))
  .filter((p) => p.type === "tool-call");
console.log(`the model streamed input ${JSON.stringify(cut)} and stopped at the output limit`);
console.log(`tool runs: ${JSON.stringify(ran)}`);
console.log(`tool calls kept in responseMessages: ${JSON.stringify(kept.map((p) => ({ id: p.toolCallId, name: p.toolName, input: p.input })))}`);
messages.push(...(await r1.responseMessages));
messages.push({ role: "user", content: "go on" });
const r2 = streamText({ model, messages, tools, stopWhen: isStepCount(20) });
for await (const _ of r2.fullStream);
const sent = prompts.at(-1).filter((m) => m.role === "assistant").flatMap((m) => m.content).filter((p) => p.type === "tool-call");
console.log(`tool calls in the next request: ${JSON.stringify(sent.map((p) => ({ id: p.toolCallId, input: p.input })))}`);
const shows = ran.length === 0 && sent.length === 1 && JSON.stringify(sent[0].input) === "{}";
process.exit(shows ? 0 : 1);
