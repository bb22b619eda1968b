// BrainBench's OpenClaw host: loads the memverbs plugin as the Gateway does (register(api) with the
// plugin's config from openclaw.json) and fires the hooks it is told, one JSON line each on stdin:
// {"hook": "<name>", "event": {...}, "ctx": {...}} → {"hook", "result", "error", "ms"} on stdout.
// The events' shapes are built by benchmarks/brainbench_harnesses.py (OpenClaw 2026.9's plugin SDK types).
import { createInterface } from "node:readline";

const [pluginUrl, configJson] = process.argv.slice(2);
const entry = (await import(pluginUrl)).default;
const handlers = {};
const quiet = () => {};
entry.register({
  id: "memverbs",
  pluginConfig: JSON.parse(configJson || "{}"),
  logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
  on: (name, handler) => {
    handlers[name] = handler;
  },
});

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { hook, event, ctx } = JSON.parse(line);
  const started = performance.now();
  let result = null;
  let error = null;
  try {
    const handler = handlers[hook];
    result = handler ? ((await handler(event, ctx)) ?? null) : null;
  } catch (exc) {
    error = String(exc?.stack || exc);
  }
  process.stdout.write(JSON.stringify({ hook, result, error, ms: performance.now() - started }) + "\n");
}
