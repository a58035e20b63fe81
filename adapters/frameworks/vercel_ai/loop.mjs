// Node's event loop, run so that an input's reply is a function of the inputs alone.
//
// Guarantee: `settle()` returns only when every piece of work the input set off is
// done or waits on a harness input. Promise chains (microtasks, process.nextTick) run
// to the end before any setImmediate callback, so one setImmediate round drains them;
// rounds repeat while a callback someone queued with setImmediate is still to run. A
// timer (setTimeout / setInterval) would make the reply depend on the wall clock, so
// settling with one pending stops the engine with an error instead of guessing (the
// SDK sets none on the paths the adapter uses: no retry delay fires because the model
// never throws from doStream, and no `timeout` option is given). The globals are
// wrapped before the SDK is imported (engine.mjs imports this module first), so every
// callback the SDK schedules is counted.
const real = {
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
};
const immediates = new Set();
const timers = new Map(); // handle -> where it was set, for the error message

globalThis.setImmediate = function setImmediate(fn, ...args) {
  const h = real.setImmediate(() => {
    immediates.delete(h);
    fn(...args);
  });
  immediates.add(h);
  return h;
};
globalThis.clearImmediate = function clearImmediate(h) {
  immediates.delete(h);
  real.clearImmediate(h);
};
globalThis.setTimeout = function setTimeout(fn, ms, ...args) {
  const h = real.setTimeout(() => {
    timers.delete(h);
    fn(...args);
  }, ms);
  timers.set(h, new Error(`setTimeout(${ms})`).stack);
  return h;
};
globalThis.clearTimeout = function clearTimeout(h) {
  timers.delete(h);
  real.clearTimeout(h);
};
globalThis.setInterval = function setInterval(fn, ms, ...args) {
  const h = real.setInterval(fn, ms, ...args);
  timers.set(h, new Error(`setInterval(${ms})`).stack);
  return h;
};
globalThis.clearInterval = function clearInterval(h) {
  timers.delete(h);
  real.clearInterval(h);
};

const round = () => new Promise((r) => real.setImmediate(r));

export async function settle() {
  do {
    await round();
  } while (immediates.size > 0);
  if (timers.size > 0) {
    const [where] = timers.values();
    process.stderr.write(`vercel_ai adapter: the run waits on a timer; a deterministic run cannot\n${where}\n`);
    process.exit(3);
  }
}

/** Forgets the timers of an engine that was dropped (a create or restore replaces it). */
export function dropTimers() {
  for (const h of timers.keys()) real.clearTimeout(h);
  timers.clear();
}
