// Run `memverbs hook <moment> --harness <harness> --session-id <id>` and resolve with what it
// printed ("" on any failure: no memverbs, no brain, a hung process). Never rejects.
const HOOK_TIMEOUT_MS = 8000; // the hook keeps its own 2.5 s deadline; this only guards a hung process
const MAX_OUTPUT = 64 * 1024;

function runHook(command, env, harness, moment, sessionId, eventName) {
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
      child = spawn(command, ["hook", moment, "--harness", harness, "--session-id", sessionId], {
        env,
        stdio: ["pipe", "pipe", "ignore"],
      });
      child.on("error", () => finish(""));
      child.stdout.on("data", (chunk) => {
        if (out.length < MAX_OUTPUT) out += chunk;
      });
      child.on("close", () => finish(out.trim()));
      child.stdin.on("error", () => {});
      const payload = eventName ? { session_id: sessionId, hook_event_name: eventName } : { session_id: sessionId };
      child.stdin.end(JSON.stringify(payload));
    } catch {
      finish("");
    }
  });
}
