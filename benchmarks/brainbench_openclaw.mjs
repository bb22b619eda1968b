// BrainBench's OpenClaw host: loads the memverbs plugin as the Gateway does (register(api) with the
// plugin's config from openclaw.json) and fires the hooks it is told, one JSON line each on stdin:
// {"hook": "<name>", "event": {...}, "ctx": {...}} → {"hook", "result", "error", "ms", "runs"} on stdout.
// `runs`: the hook processes the plugin spawned that ended since the last answer (moment, the stdin it
// wrote, what it printed, exit code), seen by wrapping child_process.spawn before the plugin is loaded.
// The events' shapes are built by benchmarks/brainbench_harnesses.py (OpenClaw 2026.9's plugin SDK types).
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { createInterface } from "node:readline";

const runs = [];
const spawn = childProcess.spawn;
childProcess.spawn = function traced(command, args, options) {
  const child = spawn.call(this, command, args, options);
  const argv = Array.isArray(args) ? args : [];
  const at = argv.indexOf("--harness");
  const run = { moment: at > 0 ? argv[at - 1] : null, stdin: "", stdout: "", code: null };
  const started = performance.now();
  if (child.stdin) {
    const end = child.stdin.end.bind(child.stdin);
    child.stdin.end = (data, ...rest) => {
      if (typeof data === "string") run.stdin += data;
      return end(data, ...rest);
    };
  }
  child.stdout?.on("data", (chunk) => {
    run.stdout += chunk;
  });
  child.on("close", (code) => {
    run.code = code;
    run.ms = performance.now() - started;
    runs.push(run);
  });
  return child;
};
syncBuiltinESMExports(); // the plugin's `import { spawn } from "node:child_process"` now gets the traced one

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
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ hook, result, error, ms, runs: runs.splice(0) }) + "\n");
}
