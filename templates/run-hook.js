// Run the hook — `<argv…> <moment> --harness <harness> --session-id <id>` — and resolve with what it
// printed ("" on any failure: no memverbs or python, no brain, a hung process). Never rejects.
// `argv` is the command the installer wrote: the lean launcher (memverbs.hooks.launcher:
// `<venv python> -I -S -c <bootstrap> hook`), which starts without `site` or the CLI's parser,
// or `[<memverbs>, "hook"]`, the console script. `extra` adds payload fields (capture's
// `transcript_path`).
const HOOK_TIMEOUT_MS = 8000; // the hook keeps its own 2.5 s deadline; this only guards a hung process
const MAX_OUTPUT = 64 * 1024;

function runHook(argv, env, harness, moment, sessionId, eventName, extra) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    let child = null;
    const finish = (text) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(() => {
      try {
        child?.kill("SIGKILL");
      } catch {}
      finish("");
    }, HOOK_TIMEOUT_MS);
    try {
      child = spawn(argv[0], [...argv.slice(1), moment, "--harness", harness, "--session-id", sessionId], {
        env,
        stdio: ["pipe", "pipe", "ignore"],
      });
      child.on("error", () => finish(""));
      child.stdout.on("data", (chunk) => {
        if (out.length < MAX_OUTPUT) out += chunk;
      });
      child.on("close", () => finish(out.trim()));
      child.stdin.on("error", () => {});
      const payload = { ...(extra || {}), session_id: sessionId };
      if (eventName) payload.hook_event_name = eventName;
      child.stdin.end(JSON.stringify(payload));
    } catch {
      finish("");
    }
  });
}
