// The rules of turnsim's reference engine (core/src), ported: history validation,
// markers and notes, request assembly and crash recovery.
//
// Guarantee: every text the engine authors (interruption markers, cancel phrases,
// the tool-in-flight note, the interrupted-result text, the truncation resume
// prompt, the compaction notice, the turn context) is the reference engine's text
// byte for byte, because turnsim's checkers accept exactly those; and every check
// here returns an error string before anything is changed. Messages are Anthropic
// wire JSON objects and are never mutated once built.

export const TRUNCATION_RESUME_TEXT = "[Reply cut off at the output limit. Resume exactly where it stopped.]";
export const INTERRUPTED_RESULT_TEXT =
  "Interrupted before the outcome was saved; effects are unknown. Inspect external state before retrying this action.";
export const RECOVERY_NOTE_PHRASE = "Canceled";
export const COMPACTION_NOTICE = "[Earlier conversation compacted; a summary follows.]";
export const TURN_CONTEXT_OPEN = "<turn_context>";
const UNRECOGNISED_TOOL = "(an unrecognised tool)";

export const MARKERS = {
  user: "[Request interrupted by user]",
  cost_cap: "[Request interrupted: session cost cap reached]",
  restart: "[Request interrupted: runtime restarted]",
  host: "[Request interrupted: session stopped by the host]",
  unknown: "[Request interrupted]",
  crash: "[Request interrupted: runtime stopped unexpectedly]",
  driver: "[Request interrupted: session driver revoked]",
};
const MARKER_TEXTS = new Set(Object.values(MARKERS));

export const PHRASES = {
  user: "Canceled by user",
  cost_cap: "Canceled (session cost cap reached)",
  restart: "Canceled (runtime restarted)",
  host: "Canceled (session stopped by the host)",
  driver: "Canceled (session driver revoked)",
};

// Rust's `str::trim` trims Unicode White_Space; JavaScript's `trim` also trims
// U+FEFF, so the set is spelled out.
const WS = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const TRIM = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");
export const rustTrim = (s) => s.replace(TRIM, "");

export const userText = (text) => ({ role: "user", content: text });
export const userBlocks = (blocks) => ({ role: "user", content: blocks });
export const assistantBlocks = (blocks) => ({ role: "assistant", content: blocks });
export const textBlock = (text) => ({ type: "text", text });

export function resultBlock(toolUseId, content, isError) {
  const b = { type: "tool_result", tool_use_id: toolUseId, content };
  if (isError) b.is_error = true;
  return b;
}

export const blocksOf = (m) => (Array.isArray(m.content) ? m.content : []);

export const toolCalls = (m) =>
  blocksOf(m)
    .filter((b) => b.type === "tool_use")
    .map((b) => ({ id: b.id, name: b.name, input: b.input }));

/** The ids of the tool_use blocks in `messages`. */
export const toolUseIds = (messages) =>
  messages.flatMap((m) => blocksOf(m).filter((b) => b.type === "tool_use").map((b) => b.id));

export const isMarker = (m) => m.role === "user" && typeof m.content === "string" && MARKER_TEXTS.has(m.content);

export function appendMarker(history, reason) {
  if (history.length > 0 && isMarker(history[history.length - 1])) return false;
  history.push(userText(MARKERS[reason]));
  return true;
}

export function plausibleToolName(name) {
  const bytes = Buffer.byteLength(name, "utf8");
  return bytes >= 1 && bytes <= 128 && /^[A-Za-z0-9_.:-]+$/.test(name);
}

export function noteText(phrase, names) {
  const shown = names.map((n) => (plausibleToolName(n) ? `\`${n}\`` : UNRECOGNISED_TOOL));
  const [head, tail] =
    names.length === 1
      ? [" while the tool call ", " was running. It may have already started and partially applied its effects."]
      : [" while the tool calls ", " were running. They may have already started and partially applied their effects."];
  return `[${phrase}${head}${shown.join(", ")}${tail}]`;
}

/** null when the provider accepts `messages`, else what is wrong (spec §2). */
export function validate(messages, allowPending = false) {
  const seen = new Map();
  let asked = null;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "assistant") {
      if (asked !== null) {
        return `message ${asked[0]}: tool call ${asked[1][0]} is followed by assistant message ${asked[0] + 1} instead of a user message answering it`;
      }
      if (m.content.length === 0) return `message ${i}: assistant message has empty content`;
      const ids = [];
      const blocks = blocksOf(m);
      for (let j = 0; j < blocks.length; j++) {
        const b = blocks[j];
        if (b.type === "tool_use") {
          if (seen.has(b.id)) return `message ${i}, block ${j}: tool_use id ${b.id} is already used by message ${seen.get(b.id)}`;
          seen.set(b.id, i);
          ids.push(b.id);
        } else if (b.type === "tool_result") {
          return `message ${i}, block ${j}: tool_result for ${b.tool_use_id} in an assistant message`;
        }
      }
      asked = ids.length > 0 ? [i, ids] : null;
      continue;
    }
    const previous = asked;
    asked = null;
    const blocks = blocksOf(m);
    let askedIds = new Set();
    if (previous !== null) {
      const answered = new Set(blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id));
      for (const id of previous[1]) {
        if (!answered.has(id)) return `message ${previous[0]}: tool call ${id} has no tool_result in message ${previous[0] + 1}`;
      }
      askedIds = new Set(previous[1]);
    }
    const soFar = new Set();
    let other = false;
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (b.type === "tool_result") {
        const id = b.tool_use_id;
        if (!askedIds.has(id)) return `message ${i}, block ${j}: tool_result for ${id} answers no tool call of the message before`;
        if (soFar.has(id)) return `message ${i}, block ${j}: tool_result for ${id} answers it a second time`;
        soFar.add(id);
        if (other) return `message ${i}, block ${j}: tool_result for ${id} comes after a block that is not a tool_result`;
      } else if (b.type === "tool_use") {
        return `message ${i}, block ${j}: tool_use ${b.id} in a user message`;
      } else {
        other = true;
      }
    }
  }
  if (asked !== null && !allowPending) return `message ${asked[0]}: history ends with unanswered tool calls ${asked[1].join(", ")}`;
  return null;
}

/** Drops trailing messages of the turn a provider would refuse to continue from. */
export function repairAfterFailure(history, baseline) {
  const validTrailing = (m) => {
    if (m.role === "user") return true;
    if (typeof m.content === "string") return m.content !== "";
    return m.content.length > 0 && !m.content.some((b) => b.type === "tool_use");
  };
  while (history.length > baseline && !validTrailing(history[history.length - 1])) history.pop();
}

export function turnContextBlock(now, stance, hidden) {
  let s = `${TURN_CONTEXT_OPEN}\n<now>${now}</now>\n<stance>${stance}</stance>\n`;
  if (hidden.length > 0) {
    s += "<conversation_thread>\n";
    for (const d of hidden) s += `<directive>${d}</directive>\n`;
    s += "</conversation_thread>\n";
  }
  return s + "</turn_context>";
}

export function directiveWords(m) {
  if (m.role !== "user") return null;
  const c = m.content;
  if (Array.isArray(c) && c.length === 2 && c[0].type === "text" && c[1].type === "text" && c[0].text.startsWith(TURN_CONTEXT_OPEN)) {
    return c[1].text;
  }
  return null;
}

export function hiddenDirectives(compacted, visible) {
  const present = (d) =>
    visible.some((m) => (typeof m.content === "string" ? m.content === d : m.content.some((b) => b.type === "text" && b.text === d)));
  const out = [];
  for (const d of compacted) if (!present(d) && !out.includes(d)) out.push(d);
  return out;
}

export function cacheBreakpoints(baseline, count) {
  const points = [null];
  for (const i of [...(baseline > 0 ? [baseline - 1] : []), ...(count > 0 ? [count - 1] : [])]) {
    if (!points.includes(i)) points.push(i);
  }
  return points.map((p) => ({ after_message: p }));
}

export function recoverCrashedTurn(history, draftBaseLen, partialText) {
  if (history.length === 0) return;
  const last = history[history.length - 1];
  if (last.role === "assistant" || isMarker(last)) return;
  if (draftBaseLen === history.length && rustTrim(partialText) !== "") {
    history.push(assistantBlocks([textBlock(partialText)]));
  }
  history.push(userText(MARKERS.crash));
}

/** Accounts for the operation outstanding at a crash; returns an error or null.
 * Nothing is reissued: a tool without a saved result is answered as interrupted and
 * named in a note, since it may have had effects. */
export function recoverCheckpoint(history, pending, finished) {
  if (pending.pending === "none") return null;
  if (pending.pending === "generation") {
    const err = validate(history);
    if (err) return `invalid history: ${err}`;
    appendMarker(history, "crash");
    return null;
  }
  const calls = pending.calls;
  const asked = history.length > 0 ? toolCalls(history[history.length - 1]).map((c) => c.id) : [];
  if (asked.join("\u0000") !== calls.map((c) => c.id).join("\u0000") || asked.length !== calls.length) {
    return `pending op#${pending.op} names calls the history does not end with`;
  }
  const err = validate(history, true);
  if (err) return `invalid history: ${err}`;
  const blocks = [];
  const unknown = [];
  for (const call of calls) {
    const done = finished.find((r) => r.tool_use_id === call.id);
    if (done) {
      blocks.push(resultBlock(done.tool_use_id, done.content, done.is_error));
    } else {
      unknown.push(call.name);
      blocks.push(resultBlock(call.id, INTERRUPTED_RESULT_TEXT, true));
    }
  }
  history.push(userBlocks(blocks));
  if (unknown.length > 0) history.push(userText(noteText(RECOVERY_NOTE_PHRASE, unknown)));
  appendMarker(history, "crash");
  return null;
}
