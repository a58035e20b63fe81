// A custom AI SDK language model (provider specification v4, the one `ai` 7 expects)
// whose provider is the harness: doStream records and sends the request through the
// engine (`onRequest`), then turns the harness's Anthropic-style `stream` inputs into
// LanguageModelV4 stream parts, as @ai-sdk/anthropic turns the API's server-sent
// events into them (text, reasoning with its signature or redacted data in
// providerMetadata.anthropic, a tool call emitted when its block stops, the stop
// reason mapped to a finish reason).
//
// Guarantee: the model decides nothing. It relays what the harness streams, one
// `send` per doStream call, and ends a stream that breaks the Messages API's event
// rules or carries a provider error with an `error` part (what a provider does with an
// error event), never by throwing, so the framework handles it as it would a real
// provider's. Adapter code, as small as a user's own provider integration.

const FINISH = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  refusal: "content-filter",
  tool_use: "tool-calls",
  max_tokens: "length",
};

/** One doStream call in flight: the harness's events for it, as stream parts. */
export class Generation {
  constructor(op, abortSignal) {
    this.op = op;
    this.controller = null;
    this.done = false; // the stream is closed: later events for this op are stale
    this.started = false;
    this.open = new Map(); // index -> {type, id, name, input}
    this.stopped = new Set();
    this.stopReason = undefined;
    this.usage = { input: undefined, output: undefined };
    this.stream = new ReadableStream({
      start: (c) => {
        this.controller = c;
        c.enqueue({ type: "stream-start", warnings: [] });
      },
    });
    // An aborted request's body stream errors, as fetch's does when its signal aborts.
    if (abortSignal) {
      const onAbort = () => {
        if (!this.done) {
          this.done = true;
          this.controller.error(abortSignal.reason);
        }
      };
      if (abortSignal.aborted) onAbort();
      else abortSignal.addEventListener("abort", onAbort, { once: true });
    }
  }

  fail(error) {
    this.controller.enqueue({ type: "error", error });
    this.close();
  }

  close() {
    this.done = true;
    this.controller.close();
  }

  breach(message) {
    const e = new Error(`stream: ${message}`);
    e.name = "AI_InvalidResponseDataError";
    this.fail(e);
  }

  /** Feeds one harness stream event. */
  feed(e) {
    if (this.done) return;
    const c = this.controller;
    const kind = e.event;
    if (kind === "error") return this.fail({ type: e.kind, message: e.message });
    if (kind === "message_start") {
      if (this.started) return this.breach("message_start twice");
      this.started = true;
      return;
    }
    if (!this.started) return this.breach(`${kind} before message_start`);
    if (kind === "message_delta") {
      this.stopReason = e.stop_reason ?? this.stopReason;
      if (e.usage) this.usage = { input: e.usage.input_tokens, output: e.usage.output_tokens };
      return;
    }
    if (kind === "message_stop") {
      if (this.open.size > 0) return this.breach(`message_stop before block ${[...this.open.keys()][0]} stopped`);
      if (this.stopReason === undefined) return this.breach("message_stop without a stop reason");
      c.enqueue({
        type: "finish",
        finishReason: { unified: FINISH[this.stopReason] ?? "other", raw: this.stopReason },
        usage: {
          inputTokens: { total: this.usage.input, noCache: this.usage.input, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: this.usage.output, text: undefined, reasoning: undefined },
        },
      });
      return this.close();
    }
    const i = e.index;
    if (kind === "block_start") {
      if (this.open.has(i) || this.stopped.has(i)) return this.breach(`block ${i} started twice`);
      const b = e.block;
      const id = String(i);
      if (b.type === "text") c.enqueue({ type: "text-start", id });
      else if (b.type === "thinking") c.enqueue({ type: "reasoning-start", id });
      else if (b.type === "redacted_thinking") c.enqueue({ type: "reasoning-start", id, providerMetadata: { anthropic: { redactedData: b.data } } });
      else if (b.type === "tool_use") c.enqueue({ type: "tool-input-start", id: b.id, toolName: b.name });
      else return this.breach(`block ${i} of unknown type ${b.type}`);
      this.open.set(i, { type: b.type, id: b.type === "tool_use" ? b.id : id, name: b.name, input: "" });
      return;
    }
    const block = this.open.get(i);
    if (!block) return this.breach(`${kind} for block ${i}, which is not open`);
    if (kind === "block_stop") {
      this.open.delete(i);
      this.stopped.add(i);
      if (block.type === "text") c.enqueue({ type: "text-end", id: block.id });
      else if (block.type === "tool_use") {
        c.enqueue({ type: "tool-input-end", id: block.id });
        c.enqueue({ type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.input === "" ? "{}" : block.input });
      } else c.enqueue({ type: "reasoning-end", id: block.id });
    } else if (kind === "text_delta" && block.type === "text") {
      c.enqueue({ type: "text-delta", id: block.id, delta: e.text });
    } else if (kind === "thinking_delta" && block.type === "thinking") {
      c.enqueue({ type: "reasoning-delta", id: block.id, delta: e.thinking });
    } else if (kind === "signature_delta" && block.type === "thinking") {
      c.enqueue({ type: "reasoning-delta", id: block.id, delta: "", providerMetadata: { anthropic: { signature: e.signature } } });
    } else if (kind === "input_json_delta" && block.type === "tool_use") {
      block.input += e.partial_json;
      if (e.partial_json.length > 0) c.enqueue({ type: "tool-input-delta", id: block.id, delta: e.partial_json });
    } else {
      return this.breach(`${kind} for a ${block.type} block`);
    }
  }
}

/** The LanguageModelV4 the application hands to streamText. `onRequest(options)` sends
 * the request and returns the Generation its events will arrive on. */
export class HarnessModel {
  constructor(onRequest) {
    this.specificationVersion = "v4";
    this.provider = "turnsim";
    this.modelId = "turnsim";
    this.supportedUrls = {};
    this.onRequest = onRequest;
  }

  async doGenerate() {
    throw new Error("this adapter streams every request (streamText)");
  }

  async doStream(options) {
    const gen = this.onRequest(options);
    return { stream: gen.stream };
  }
}
