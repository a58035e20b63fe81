// Hand check, no turnsim: when the provider's stream breaks while a thinking block is
// still open (no signature yet), the failed step's assistant message is kept in
// `responseMessages` holding only that unsigned reasoning part, and the next request
// carries it. @ai-sdk/anthropic sends reasoning back only with its signature (or
// redacted data) and leaves it out otherwise (convertToAnthropicPrompt: "unsupported
// reasoning metadata"), so that assistant message goes to the API with empty content,
// which the Messages API refuses, and it stays in the history for every later request.
//
// Only `ai` and a fake LanguageModelV4. Exits 0 while the behaviour shows (it prints
// the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, isStepCount } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };
const prompts = [];
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream({ prompt }) {
    prompts.push(prompt);
    const parts = prompts.length === 1
      ? [{ type: "stream-start", warnings: [] }, { type: "reasoning-start", id: "0" }, { type: "reasoning-delta", id: "0", delta: "Let me think" },
         { type: "error", error: { type: "api_error", message: "connection reset by peer" } }]
      : [{ type: "stream-start", warnings: [] }, { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage }];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
};
const messages = [{ role: "user", content: "fix the parser" }];
const r1 = streamText({ model, messages, stopWhen: isStepCount(20), onError: () => {} });
for await (const _ of r1.fullStream);
console.log(`finish reason: ${await r1.finishReason}`);
messages.push(...(await r1.responseMessages));
messages.push({ role: "user", content: "try again" });
const r2 = streamText({ model, messages, stopWhen: isStepCount(20) });
for await (const _ of r2.fullStream);
const assistant = prompts[1].filter((m) => m.role === "assistant");
console.log(`assistant messages in the next request: ${JSON.stringify(assistant)}`);
const unsignedOnly = assistant.length === 1 && assistant[0].content.length > 0 &&
  assistant[0].content.every((p) => p.type === "reasoning" && p.providerOptions?.anthropic?.signature == null && p.providerOptions?.anthropic?.redactedData == null);
process.exit(unsignedOnly ? 0 : 1);
