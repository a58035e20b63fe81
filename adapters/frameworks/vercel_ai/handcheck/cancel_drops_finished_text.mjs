// Hand check, no turnsim: text the model finished streaming (its block closed, the
// user saw it) in a step that is then cancelled is gone from everything the SDK hands
// the application: `onAbort` lists only the steps that finished, and
// `responseMessages` rejects with the AbortError. An application that saves what the
// SDK gives loses what its user read.
//
// Only `ai` and a fake LanguageModelV4 whose stream the script feeds. Exits 0 while
// the behaviour shows (it prints the evidence), 1 when it does not.
import { ai } from "../fw.mjs";

const { streamText, tool, jsonSchema, isStepCount } = ai;
let feed = null;
const model = {
  specificationVersion: "v4", provider: "fake", modelId: "fake", supportedUrls: {},
  async doGenerate() { throw new Error("streaming only"); },
  async doStream({ abortSignal }) {
    return { stream: new ReadableStream({ start(c) {
      feed = c;
      abortSignal?.addEventListener("abort", () => c.error(abortSignal.reason), { once: true });
    } }) };
  },
};
const tick = () => new Promise((r) => setImmediate(r));
const tools = { write_file: tool({ inputSchema: jsonSchema({ type: "object" }), execute: async () => "written" }) };

const abort = new AbortController();
let steps = null;
const shown = [];
const r = streamText({ model, tools, messages: [{ role: "user", content: "fix the parser" }], stopWhen: isStepCount(20), abortSignal: abort.signal,
  onAbort: (e) => { steps = e.steps; } });
const reading = (async () => { for await (const p of r.fullStream) if (p.type === "text-delta") shown.push(p.text); })();
await tick();
feed.enqueue({ type: "stream-start", warnings: [] });
feed.enqueue({ type: "text-start", id: "0" });
feed.enqueue({ type: "text-delta", id: "0", delta: "The bug is in line 42." });
feed.enqueue({ type: "text-end", id: "0" });
feed.enqueue({ type: "tool-input-start", id: "toolu_1", toolName: "write_file" });
await tick();
abort.abort();
await reading;
const kept = steps.flatMap((s) => s.response.messages);
const rm = await r.responseMessages.then((m) => JSON.stringify(m), (e) => `rejects (${e.name})`);
console.log(`shown to the user: ${JSON.stringify(shown.join(""))}`);
console.log(`onAbort steps: ${steps.length}, their messages: ${JSON.stringify(kept)}`);
console.log(`responseMessages: ${rm}`);
process.exit(shown.join("") === "The bug is in line 42." && !JSON.stringify(kept).includes("line 42") && rm.startsWith("rejects") ? 0 : 1);
