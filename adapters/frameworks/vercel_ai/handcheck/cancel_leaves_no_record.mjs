// Hand check, no turnsim: a streamText run cancelled through its AbortSignal leaves
// nothing that says it was stopped. What the documented abort path gives the
// application (`onAbort`'s finished steps; `responseMessages` rejects with the
// AbortError) holds no trace of the cancelled step, so the next request shows the
// model the old prompt and then the new one, as if the first had simply gone
// unanswered.
//
// Only `ai` and a fake LanguageModelV4 whose stream the script feeds. Exits 0 while
// the behaviour shows (it prints the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, isStepCount } = ai;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: undefined, reasoning: undefined } };
const prompts = [];
let feed = null;
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream({ prompt, abortSignal }) {
    prompts.push(prompt);
    return { stream: new ReadableStream({ start(c) {
      feed = c;
      abortSignal?.addEventListener("abort", () => c.error(abortSignal.reason), { once: true });
    } }) };
  },
};
const tick = () => new Promise((r) => setImmediate(r));

const messages = [{ role: "user", content: "fix the parser" }];
const abort = new AbortController();
let kept = null;
const r1 = streamText({ model, messages, stopWhen: isStepCount(20), abortSignal: abort.signal,
  onAbort: ({ steps }) => { kept = steps.flatMap((s) => s.response.messages); } });
const reading = (async () => { for await (const _ of r1.fullStream); })();
await tick();
feed.enqueue({ type: "stream-start", warnings: [] });
feed.enqueue({ type: "text-start", id: "0" });
feed.enqueue({ type: "text-delta", id: "0", delta: "Looking at the parser" });
await tick();
abort.abort();
await reading;
const saved = await r1.responseMessages.then((m) => m, (e) => (console.log(`responseMessages: ${e.name}`), kept));
messages.push(...saved);
console.log(`kept after the cancel: ${JSON.stringify(saved)}`);
messages.push({ role: "user", content: "now fix the tests" });

const r2 = streamText({ model, messages, stopWhen: isStepCount(20) });
const reading2 = (async () => { for await (const _ of r2.fullStream); })();
await tick();
feed.enqueue({ type: "stream-start", warnings: [] });
feed.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage });
feed.close();
await reading2;
const next = prompts[1].filter((m) => m.role !== "system");
console.log(`next request: ${JSON.stringify(next)}`);
const silent = next.length === 2 && next.every((m) => m.role === "user") && !JSON.stringify(next).toLowerCase().includes("interrupt") && !JSON.stringify(next).toLowerCase().includes("cancel") && !JSON.stringify(next).toLowerCase().includes("abort");
process.exit(silent ? 0 : 1);
