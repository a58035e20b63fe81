// Where the pinned Vercel AI SDK comes from: target/fw-node/vercel_ai/node_modules,
// installed there by setup.sh with `npm ci` from this directory's package-lock.json.
//
// Guarantee: the engine and the hand checks load exactly the locked packages and nothing
// from the source tree (which has no node_modules). ESM resolves a bare specifier from
// the importing file's directory, so the specifier is resolved against the install's
// package.json and the resolved file is imported by URL; `ai`'s own imports then
// resolve from its own location inside that node_modules.
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";

const here = fileURLToPath(new URL(".", import.meta.url));
const install = process.env.TURNSIM_VERCEL_AI_MODULES || join(here, "..", "..", "..", "target", "fw-node", "vercel_ai");
const resolve = createRequire(join(install, "package.json")).resolve;

/** Any other package of the install (a hand check's `@ai-sdk/anthropic`), loaded only
 * by whoever asks, so the engine's start pays for `ai` alone. */
export async function load(specifier) {
  let file;
  try {
    file = resolve(specifier);
  } catch (e) {
    throw new Error(`vercel_ai adapter: ${specifier} is not installed under ${install}; run adapters/frameworks/vercel_ai/setup.sh (${e.message})`);
  }
  return import(pathToFileURL(file).href);
}

export const ai = await load("ai");
export const aiTest = await load("ai/test");
export const aiVersion = createRequire(join(install, "package.json"))("ai/package.json").version;
