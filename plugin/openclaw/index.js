// memverbs for OpenClaw: long-term memory in every session.
//
// `memverbs install openclaw` links this directory (plugins.load.paths) and writes
// plugins.entries.memverbs: enabled, hooks.allowConversationAccess (OpenClaw blocks
// before_prompt_build for non-bundled plugins without it) and config.{command, env}, the
// absolute memverbs command and its environment. Each hook runs
// `memverbs hook <moment> --harness openclaw --session-id <id>`:
//
// * session_start → session-start; the pack is cached per session (as a promise, so the
//   first prompt waits for it rather than racing it). Idempotent per session id: the Gateway
//   fires session_start more than once for one session (seen ~11 s apart), and a session
//   that already has its pack keeps it. Not fired by `openclaw agent --local`:
//   before_prompt_build then fetches the pack itself on first use.
// * before_prompt_build → prependContext with the cached pack on every turn: OpenClaw does
//   not keep prependContext in the history, so a pack given once is gone the next turn.
//   The turn's heartbeat comes along as appendContext, with the user's request
//   (`currentUserMessage`, else `prompt`) as its `prompt`: what changed since the last turn
//   (from the second turn on), and the reflex's pointers to what memory holds on the entities
//   the request names (docs/hooks.md). Usually there is neither: the hook answers after a few
//   indexed reads. It runs after the pack is built: both write the session's state, and what
//   the pack shows is not pointed to again.
//   Heartbeat turns (ctx.trigger "heartbeat") are skipped: they get what changed through
//   heartbeat_prompt_contribution instead of the whole pack again.
// * after_compaction → post-compact refreshes the cached pack for the next turn.
// * heartbeat_prompt_contribution → heartbeat: only what changed, as appendContext.
// * session_end and before_compaction → capture, with the event's sessionFile (the session's
//   JSONL) as transcript_path: the hook hands it to a detached worker and returns at once.
//
// Never throws: a failure (no memverbs, no brain, a slow disk) means no memory this turn.
// Handlers stay well inside OpenClaw's 15 s prompt-hook budget.
import { spawn } from "node:child_process";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

const MAX_SESSIONS = 128;
const MAX_PROMPT = 20000;
// The user's request this turn: OpenClaw's explicit `currentUserMessage` where the harness supplies
// it (an empty string means none), else the prepared `prompt`. Handed to the hook, never kept.
const promptOf = (event) => {
  const text = typeof event?.currentUserMessage === "string" ? event.currentUserMessage : event?.prompt;
  return typeof text === "string" ? text.slice(0, MAX_PROMPT) : "";
};

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

export default definePluginEntry({
  id: "memverbs",
  name: "memverbs",
  description: "Long-term memory from memverbs: the context pack on every turn, refreshed after compaction, and what changed on heartbeats.",
  register(api) {
    const cfg = api?.pluginConfig && typeof api.pluginConfig === "object" ? api.pluginConfig : {};
    // The lean launcher the installer wrote (`hook`: the argv prefix every harness's hooks run); a
    // config from an older install names only the console script (`command`).
    const command = typeof cfg.command === "string" && cfg.command ? cfg.command : "memverbs";
    const hook =
      Array.isArray(cfg.hook) && cfg.hook.length > 0 && cfg.hook.every((part) => typeof part === "string")
        ? cfg.hook
        : [command, "hook"];
    const env = { ...process.env, ...(cfg.env && typeof cfg.env === "object" ? cfg.env : {}) };
    const packs = new Map(); // sessionId → Promise<string>
    const fresh = new Set(); // sessions whose pack was just built: their next turn needs no heartbeat
    const ids = new Map(); // sessionKey → sessionId: heartbeat events may carry only the key

    const sessionOf = (event, ctx) => {
      const id = ctx?.sessionId || event?.sessionId;
      const key = ctx?.sessionKey || event?.sessionKey;
      if (id && key) ids.set(key, id);
      const found = id || (key && ids.get(key)) || key;
      return typeof found === "string" && found ? found : null;
    };
    const bounded = (map) => {
      while (map.size > MAX_SESSIONS) map.delete(map.keys().next().value);
    };
    const refresh = (id, moment) => {
      const pack = runHook(hook, env, "openclaw", moment, id);
      packs.set(id, pack);
      fresh.add(id);
      bounded(packs);
      bounded(ids);
      while (fresh.size > MAX_SESSIONS) fresh.delete(fresh.keys().next().value);
      return pack;
    };
    const pack = (id) => packs.get(id) ?? refresh(id, "session-start");

    api.on("session_start", (event, ctx) => {
      try {
        const id = sessionOf(event, ctx);
        if (id && !packs.has(id)) refresh(id, "session-start");
      } catch {}
    });

    api.on("before_prompt_build", async (event, ctx) => {
      try {
        if (ctx?.trigger === "heartbeat") return undefined;
        const id = sessionOf(event, ctx);
        if (!id) return undefined;
        const first = !packs.has(id) || fresh.has(id);
        const packed = pack(id);
        fresh.delete(id);
        const prompt = promptOf(event);
        const text = await packed;
        // Right after a fresh pack nothing has changed: the heartbeat is only asked for the prompt's names.
        const delta = first && !prompt ? "" : await runHook(hook, env, "openclaw", "heartbeat", id, undefined, prompt ? { prompt } : undefined);
        const result = {};
        if (text) result.prependContext = text;
        if (delta) result.appendContext = delta;
        return text || delta ? result : undefined;
      } catch {
        return undefined;
      }
    });

    api.on("after_compaction", (event, ctx) => {
      try {
        const id = sessionOf(event, ctx);
        if (event?.previousSessionId && event.previousSessionId !== id) packs.delete(event.previousSessionId);
        if (id) refresh(id, "post-compact");
      } catch {}
    });

    api.on("heartbeat_prompt_contribution", async (event, ctx) => {
      try {
        const id = sessionOf(event, ctx);
        if (!id) return undefined;
        const text = await runHook(hook, env, "openclaw", "heartbeat", id);
        return text ? { appendContext: text } : undefined;
      } catch {
        return undefined;
      }
    });

    // Capture: the session's JSONL (`sessionFile`) goes to `hook capture`, which forks a detached
    // worker and exits at once; the handler resolves when the hook has exited (well inside
    // session_end's 2 s shutdown drain and before_compaction's 30 s).
    const capture = (event, ctx, eventName) => {
      const id = sessionOf(event, ctx);
      if (!id) return undefined;
      const file = typeof event?.sessionFile === "string" && event.sessionFile ? { transcript_path: event.sessionFile } : {};
      return runHook(hook, env, "openclaw", "capture", id, eventName, file).then(() => undefined);
    };

    api.on("before_compaction", (event, ctx) => {
      try {
        return capture(event, ctx, "PreCompact");
      } catch {
        return undefined;
      }
    });

    api.on("session_end", (event, ctx) => {
      try {
        const id = sessionOf(event, ctx);
        if (id) {
          packs.delete(id);
          fresh.delete(id);
        }
        return capture(event, ctx, "SessionEnd");
      } catch {
        return undefined;
      }
    });
  },
});
