// turnsim engine protocol v1 (docs/engine-protocol.md), engine side, no dependencies.
//
// Guarantee: an engine written against this module answers every request with
// exactly one line, in the order asked, and nothing else reaches stdout (console.log
// is sent to stderr), so the harness never reads a stray line as a reply. Persist
// bytes go out as base64, a request's messages go out as a count when they are the
// engine's own history prefix (the same objects), and the history goes out as a
// delta from what was last reported, judged by object identity.
//
// Use: run(name, create, restore) with
//   create(config)                -> engine
//   restore(config, log: Buffer)  -> [engine, outputs]; throw new RestoreFailed(why)
// and an engine object with
//   handle(input)  -> array of outputs; throw new Refused(why) to refuse the input
//   history        -> array of messages (wire JSON objects), a property
//   pending(), idle(), state() (a string), fixedTexts()
// Outputs are objects in the protocol's Output vocabulary, except that a persist
// output carries a Buffer ({output: "persist", bytes: Buffer}).
//
// run(name, create, restore, importHistory) also offers the optional `import` request
// (docs/engine-protocol.md §17): importHistory(config, messages) -> [engine, outputs],
// throwing RestoreFailed(why) to refuse the history. Without it the hello offers
// nothing more and the harness never sends `import`.

import { writeSync } from "node:fs";
import { createInterface } from "node:readline";

export const PROTOCOL_VERSION = 1;

export class Refused extends Error {}
export class RestoreFailed extends Error {}

function wireOutput(out, history) {
  if (out.output === "persist") {
    return { output: "persist", bytes: Buffer.from(out.bytes).toString("base64") };
  }
  if (out.output === "send") {
    const m = out.request.messages;
    if (Array.isArray(m) && m.length <= history.length && m.every((x, i) => x === history[i])) {
      return { output: "send", op: out.op, request: { ...out.request, messages: m.length } };
    }
  }
  return out;
}

class Served {
  constructor(engine) {
    this.engine = engine;
    this.reported = [];
    this.inputs = 0;
  }

  reply(kind, outputs, full, extra) {
    const history = this.engine.history;
    let keep = 0;
    if (!full) {
      const limit = Math.min(history.length, this.reported.length);
      while (keep < limit && history[keep] === this.reported[keep]) keep++;
    }
    const line = { reply: kind };
    if (outputs !== undefined) line.outputs = outputs.map((o) => wireOutput(o, history));
    Object.assign(line, extra || {});
    line.history = { keep, append: history.slice(keep) };
    line.pending = this.engine.pending();
    line.idle = this.engine.idle();
    line.state = this.engine.state();
    this.reported = history.slice();
    return line;
  }
}

function fail(message) {
  process.stderr.write(message + "\n");
  process.exit(2);
}

/** Serves one engine at a time over stdin/stdout until stdin ends. */
export function run(name, create, restore, importHistory) {
  // Anything the engine logs goes to stderr: stdout carries protocol lines only.
  console.log = (...args) => console.error(...args);
  const send = (line) => writeSync(1, JSON.stringify(line) + "\n");
  const hello = { hello: "turnsim-engine", protocol: PROTOCOL_VERSION, engine: name };
  if (importHistory) hello.accepts = ["import"];
  send(hello);
  let served = null;
  let number = 0;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (raw) => {
    number++;
    let req;
    try {
      req = JSON.parse(raw);
    } catch (e) {
      fail(`${name}: request line ${number} is not JSON (${e.message}): ${raw}`);
    }
    const kind = req && req.req;
    if (kind === "import" && importHistory) {
      served = null;
      let engine, outputs;
      try {
        [engine, outputs] = importHistory(req.config, req.history);
      } catch (e) {
        if (e instanceof RestoreFailed) {
          send({ reply: "import", error: e.message });
          return;
        }
        throw e;
      }
      served = new Served(engine);
      send(served.reply("import", outputs, true, { fixed_texts: engine.fixedTexts() }));
    } else if (kind === "create" || kind === "restore") {
      // A new engine replaces the one served so far, as a new process would.
      served = null;
      if (kind === "create") {
        served = new Served(create(req.config));
        send(served.reply("create", undefined, true, { fixed_texts: served.engine.fixedTexts() }));
        return;
      }
      let engine, outputs;
      try {
        [engine, outputs] = restore(req.config, Buffer.from(req.log, "base64"));
      } catch (e) {
        if (e instanceof RestoreFailed) {
          send({ reply: "restore", error: e.message });
          return;
        }
        throw e;
      }
      served = new Served(engine);
      send(served.reply("restore", outputs, true, { fixed_texts: engine.fixedTexts() }));
    } else if (served === null) {
      fail(`${name}: request line ${number}: ${kind} before create or restore`);
    } else if (kind === "input") {
      served.inputs++;
      if (req.n !== served.inputs) fail(`${name}: request line ${number}: input ${req.n} out of order`);
      let outputs;
      try {
        outputs = served.engine.handle(req.input);
      } catch (e) {
        if (e instanceof Refused) {
          send(served.reply("input", undefined, false, { refused: e.message }));
          return;
        }
        throw e;
      }
      send(served.reply("input", outputs, false));
    } else if (kind === "state") {
      send(served.reply("state", undefined, true));
    } else {
      fail(`${name}: request line ${number}: unknown request ${JSON.stringify(kind)}`);
    }
  });
}
