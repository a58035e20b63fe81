// turnsim engine protocol v1 (docs/engine-protocol.md) for an engine whose inputs are
// handled asynchronously: adapters/node/turnsim_engine.mjs's `run` calls `handle`
// synchronously, and the AI SDK's turn loop only moves when Node's event loop runs,
// so this serves one request at a time and awaits each `handle` (which settles the
// loop, loop.mjs) before replying.
//
// Guarantee: exactly one reply line per request, in order, nothing else on stdout
// (console.log goes to stderr); persist bytes in base64; a request's messages sent as
// a count when they are the reported history's own prefix (the same objects); the
// history reported as a delta by object identity.
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { Refused, RestoreFailed } from "../../node/turnsim_engine.mjs";

export { Refused, RestoreFailed };

function wireOutput(out, history) {
  if (out.output === "persist") return { output: "persist", bytes: Buffer.from(out.bytes).toString("base64") };
  if (out.output === "send") {
    const m = out.request.messages;
    if (Array.isArray(m) && m.length <= history.length && m.every((x, i) => x === history[i])) {
      return { output: "send", op: out.op, request: { ...out.request, messages: m.length } };
    }
  }
  return out;
}

/** Serves engines over stdin/stdout until stdin ends. create(config) and
 * restore(config, log) may return promises; so may engine.handle(input). */
export async function serve(name, create, restore) {
  console.log = (...args) => console.error(...args);
  const send = (line) => writeSync(1, JSON.stringify(line) + "\n");
  send({ hello: "turnsim-engine", protocol: 1, engine: name });
  let engine = null;
  let reported = [];
  let inputs = 0;
  const reply = (kind, outputs, full, extra) => {
    const history = engine.history;
    let keep = 0;
    if (!full) {
      const limit = Math.min(history.length, reported.length);
      while (keep < limit && history[keep] === reported[keep]) keep++;
    }
    const line = { reply: kind };
    if (outputs !== undefined) line.outputs = outputs.map((o) => wireOutput(o, history));
    Object.assign(line, extra || {});
    line.history = { keep, append: history.slice(keep) };
    line.pending = engine.pending();
    line.idle = engine.idle();
    line.state = engine.state();
    reported = history.slice();
    return line;
  };
  let number = 0;
  for await (const raw of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    number++;
    const req = JSON.parse(raw);
    if (req.req === "create") {
      engine = await create(req.config);
      inputs = 0;
      send(reply("create", undefined, true, { fixed_texts: engine.fixedTexts() }));
    } else if (req.req === "restore") {
      engine = null;
      inputs = 0;
      let outputs;
      try {
        [engine, outputs] = await restore(req.config, Buffer.from(req.log, "base64"));
      } catch (e) {
        if (!(e instanceof RestoreFailed)) throw e;
        send({ reply: "restore", error: e.message });
        continue;
      }
      send(reply("restore", outputs, true, { fixed_texts: engine.fixedTexts() }));
    } else if (engine === null) {
      throw new Error(`${name}: request line ${number}: ${req.req} before create or restore`);
    } else if (req.req === "input") {
      inputs++;
      if (req.n !== inputs) throw new Error(`${name}: request line ${number}: input ${req.n} out of order`);
      let outputs;
      try {
        outputs = await engine.handle(req.input);
      } catch (e) {
        if (!(e instanceof Refused)) throw e;
        send(reply("input", undefined, false, { refused: e.message }));
        continue;
      }
      send(reply("input", outputs, false));
    } else if (req.req === "state") {
      send(reply("state", undefined, true));
    } else {
      throw new Error(`${name}: request line ${number}: unknown request ${JSON.stringify(req.req)}`);
    }
  }
}
