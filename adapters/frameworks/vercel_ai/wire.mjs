// The Anthropic Messages wire form turnsim judges, rendered from the AI SDK's own
// messages: the application's saved ModelMessages (the history) and the
// LanguageModelV4 prompt handed to doStream (the request) go through the same rules.
//
// Guarantee: the wire form is what @ai-sdk/anthropic would send for those messages
// (read from its convertToAnthropicPrompt, rules restated here, no code taken): system
// messages travel in `system`; consecutive assistant messages are one assistant
// message, consecutive user and tool messages one user message; empty assistant text
// parts are left out; reasoning goes back as a thinking block only with its signature,
// as redacted thinking with its data, and is left out otherwise; a tool call's input is
// a JSON object (an unparsable one becomes {rawInvalidInput}); a tool result's content
// is the text of a text output, JSON of a JSON output and the blocks of a multi-part
// `content` output (as the provider maps its parts), with is_error for an error
// output. The history is one wire message per saved ModelMessage (the unit the SDK and
// the application hold); a request is laid out as the provider lays it out. A
// rendering is a pure function of the messages, and the same message object rendering
// the same keeps the same wire object, so turnsim's identity checks see exactly what
// the application kept or rebuilt. Adapter code.

function toolInput(input) {
  if (typeof input === "string") {
    try {
      const parsed = JSON.parse(input);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    } catch {}
  }
  return input !== null && typeof input === "object" && !Array.isArray(input) ? input : { rawInvalidInput: input };
}

/** A tool outcome's `content` as the tool's `toModelOutput` gives it to the SDK: a
 * string is the SDK's default `text` output; an array of blocks is its multi-part
 * `content` output, a `text` part per text block and a `file` part per image or
 * document (base64 bytes as `{type: "data"}`, a text document as `{type: "text"}`, the
 * tagged forms the SDK's types name), so what reaches the model is the SDK's doing. */
export function modelOutput(content) {
  if (typeof content === "string") return { type: "text", value: content };
  return { type: "content", value: content.map(contentPart) };
}

function contentPart(block) {
  const source = block.source ?? {};
  if (block.type === "text") return { type: "text", text: block.text };
  if ((block.type === "image" || block.type === "document") && source.type === "base64")
    return { type: "file", mediaType: source.media_type, data: { type: "data", data: source.data } };
  if (block.type === "document" && source.type === "text")
    return { type: "file", mediaType: source.media_type ?? "text/plain", data: { type: "text", text: source.data } };
  throw new Error(`vercel_ai adapter: a tool result block ${JSON.stringify(block).slice(0, 120)} has no AI SDK content part (expected text, a base64 image or document, or a text document)`);
}

const base64 = (data) => (typeof data === "string" ? data : Buffer.from(data).toString("base64"));

/** A `content` output's parts as @ai-sdk/anthropic (4.0.105) maps them into a
 * tool_result: text as text; a file of inline bytes as an image block (an image media
 * type) or a base64 document (a PDF); a file by URL as an image or document URL block.
 * Every other part (a text/plain file, inline text, a custom part) the provider leaves
 * out, with only a warning on the step, and so does this rendering:
 * docs/frameworks.md#va-drops-text-document. */
function contentBlocks(parts) {
  const out = [];
  for (const p of parts) {
    if (p.type === "text") {
      out.push({ type: "text", text: p.text });
    } else if (p.type === "file" && p.data?.type === "data") {
      if (p.mediaType.startsWith("image/"))
        out.push({ type: "image", source: { type: "base64", media_type: p.mediaType, data: base64(p.data.data) } });
      else if (p.mediaType === "application/pdf")
        out.push({ type: "document", source: { type: "base64", media_type: "application/pdf", data: base64(p.data.data) } });
    } else if (p.type === "file" && p.data?.type === "url") {
      const url = p.data.url.toString();
      out.push(p.mediaType.startsWith("image") ? { type: "image", source: { type: "url", url } } : { type: "document", source: { type: "url", url } });
    }
  }
  return out;
}

function resultContent(output) {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "content":
      return contentBlocks(output.value);
    case "execution-denied":
      return output.reason ?? "Tool call execution denied.";
    default:
      return JSON.stringify(output.value);
  }
}

function parts(message) {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

function blocksOf(message) {
  const out = [];
  if (message.role === "assistant") {
    for (const p of parts(message)) {
      if (p.type === "text") {
        if (p.text.length > 0) out.push({ type: "text", text: p.text });
      } else if (p.type === "reasoning") {
        const meta = p.providerOptions?.anthropic;
        if (meta?.signature != null) out.push({ type: "thinking", thinking: p.text, signature: meta.signature });
        else if (meta?.redactedData != null) out.push({ type: "redacted_thinking", data: meta.redactedData });
      } else if (p.type === "tool-call" && !p.providerExecuted) {
        out.push({ type: "tool_use", id: p.toolCallId, name: p.toolName, input: toolInput(p.input) });
      }
    }
  } else if (message.role === "user") {
    for (const p of parts(message)) if (p.type === "text") out.push({ type: "text", text: p.text });
  } else if (message.role === "tool") {
    for (const p of message.content) {
      if (p.type !== "tool-result") continue;
      const block = { type: "tool_result", tool_use_id: p.toolCallId, content: resultContent(p.output) };
      if (p.output.type === "error-text" || p.output.type === "error-json") block.is_error = true;
      out.push(block);
    }
  }
  return out;
}

/** One wire message per ModelMessage (system messages left out): the history as the
 * application holds it, a tool message being a user message of tool_result blocks. */
export function render(message) {
  return { role: message.role === "assistant" ? "assistant" : "user", content: blocksOf(message) };
}

/** The request's messages as @ai-sdk/anthropic lays them out: consecutive messages of
 * one wire role joined into one message. */
export function grouped(messages) {
  const out = [];
  for (const m of messages) {
    if (m.role === "system") continue;
    const w = render(m);
    const last = out.at(-1);
    if (last && last.role === w.role) last.content = last.content.concat(w.content);
    else out.push(w);
  }
  return out;
}

/** Renders the history, reusing the wire object of a message object whose rendering
 * is unchanged. */
export class WireCache {
  constructor() {
    this.cache = new WeakMap(); // message -> {rendered, wire}
  }

  wire(messages) {
    const out = [];
    for (const m of messages) {
      if (m.role === "system") continue;
      const w = render(m);
      const rendered = JSON.stringify(w);
      const hit = this.cache.get(m);
      if (hit && hit.rendered === rendered) {
        out.push(hit.wire);
        continue;
      }
      this.cache.set(m, { rendered, wire: w });
      out.push(w);
    }
    return out;
  }
}
