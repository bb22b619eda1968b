// memverbs-opencode-plugin: long-term memory for opencode sessions.
//
// `memverbs install opencode` copies this module into opencode's plugin directory with
// the hook command and environment filled in below; `memverbs uninstall opencode`
// removes it. opencode runs no shell hooks, so this module is the hook: it runs
// `memverbs hook <moment> --harness opencode` (through the lean launcher the installer
// writes for every harness's hooks) and hands the text to opencode.
//
// * session.created → session-start: the context pack, cached per session (as a promise,
//   so the first request waits for it instead of racing it).
// * chat.message (a user message arrives: the start of a turn) → heartbeat with the message's text
//   as `prompt`: a change made between two turns reaches the very next one, and the reflex points
//   to what memory holds on the entities the message names (docs/hooks.md). Usually nothing
//   changed and nothing new is named: the hook answers after a few indexed reads. It runs after
//   the session's pack is built, so what the pack shows is not pointed to again.
// * experimental.chat.system.transform → the cached pack (and this turn's heartbeat delta)
//   as system messages. opencode rebuilds the system prompt for every model request, so
//   the pack is pushed every time; it is never stored in the history. Two side requests
//   with their own system prompts are skipped: the title request (the pack would only skew
//   the title) and the compaction request (it gets the pack once, through the hook below).
//   Recognised by their prompts' first words; should those change, they get the pack too.
// * experimental.session.compacting → the pack joins the compaction prompt's context, so
//   the summary keeps it; session.compacted → post-compact refreshes the cached pack.
//   The turn's delta stays on its requests (tool round-trips included) until the next
//   turn's heartbeat replaces it.
// * session.idle (a turn ended; opencode has no session-end event) and
//   experimental.session.compacting → capture: the hook hands the session id to a detached
//   worker and exits at once; the worker reads the session from opencode's own store
//   (opencode.db, read-only). The hook captures a live session at most every 5 minutes.
//
// Never throws and never blocks a session for long: every failure (no memverbs, no brain,
// a slow disk) ends as "no memory this time".
import { spawn } from "node:child_process";

const HOOK = /* memverbs:command */ ["memverbs", "hook"] /* end */;
const MEMVERBS_ENV = /* memverbs:env */ {} /* end */;
const MAX_SESSIONS = 64;
const SIDE_PROMPTS = ["You are a title generator", "You are a context summarization agent"];

// >>> shared: templates/run-hook.js (python -m memverbs.installers.jsplugins rewrites this copy) >>>
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
// <<< shared <<<

const MAX_PROMPT = 20000;
const hook = (moment, sessionID, eventName, extra) =>
  runHook(HOOK, { ...process.env, ...MEMVERBS_ENV }, "opencode", moment, sessionID, eventName, extra);
// The user's words in a chat.message's parts (its text parts; not the files or tool output opencode
// attaches, which it marks synthetic). Handed to the hook on stdin, never kept.
const promptOf = (parts) =>
  (Array.isArray(parts) ? parts : [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n")
    .slice(0, MAX_PROMPT);

export const MemverbsPlugin = async () => {
  const sessions = new Map(); // sessionID → { pack: Promise<string> | null, delta: Promise<string> | null }

  const session = (id) => {
    let s = sessions.get(id);
    if (!s) {
      s = { pack: null, delta: null };
      sessions.set(id, s);
      while (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value);
    }
    return s;
  };
  const refresh = (id, moment, eventName) => {
    const s = session(id);
    s.pack = hook(moment, id, eventName);
    return s.pack;
  };
  // A session this process did not see start (opencode run --continue) gets its pack on first use.
  const pack = (id) => session(id).pack ?? refresh(id, "session-start", "lazy");
  const isSideRequest = (system) =>
    system.some((t) => typeof t === "string" && SIDE_PROMPTS.some((prompt) => t.startsWith(prompt)));

  return {
    event: async ({ event }) => {
      try {
        const props = event?.properties ?? {};
        const id = props.sessionID ?? props.info?.id;
        if (typeof id !== "string" || !id) return;
        if (event.type === "session.created") refresh(id, "session-start", event.type);
        else if (event.type === "session.compacted") refresh(id, "post-compact", event.type);
        else if (event.type === "session.idle") await hook("capture", id, event.type);
        else if (event.type === "session.deleted") sessions.delete(id);
      } catch {}
    },

    "chat.message": async (input, output) => {
      try {
        const id = input?.sessionID;
        if (typeof id !== "string" || !id) return;
        const prompt = promptOf(output?.parts);
        // Not awaited: the heartbeat runs while opencode stores the message; the first
        // system transform of the turn waits for it. It follows the session's pack, which
        // both write the session's state and whose cards the reflex need not repeat.
        const packed = pack(id);
        session(id).delta = packed.then(() => hook("heartbeat", id, "chat.message", prompt ? { prompt } : undefined));
      } catch {}
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const id = input?.sessionID;
        if (typeof id !== "string" || !id || !Array.isArray(output?.system)) return;
        if (isSideRequest(output.system)) return;
        const text = await pack(id);
        const delta = (await session(id).delta) ?? "";
        if (text) output.system.push(text);
        if (delta) output.system.push(delta);
      } catch {}
    },

    "experimental.session.compacting": async (input, output) => {
      try {
        const id = input?.sessionID;
        if (typeof id !== "string" || !id || !Array.isArray(output?.context)) return;
        const [text] = await Promise.all([pack(id), hook("capture", id, "experimental.session.compacting")]);
        if (text) output.context.push(text);
      } catch {}
    },
  };
};
