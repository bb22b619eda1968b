"""Recorded stdin payloads, shaped as each harness sends them (HARNESSES.md)."""

CLAUDE_SESSION_START = {
    "session_id": "0f1c2d3e-claude",
    "transcript_path": "/root/.claude/projects/-work-app/0f1c2d3e-claude.jsonl",
    "cwd": "/work/app",
    "hook_event_name": "SessionStart",
    "source": "startup",
}
CLAUDE_AFTER_COMPACT = {**CLAUDE_SESSION_START, "source": "compact", "model": "claude-sonnet"}
CLAUDE_PROMPT = {
    "session_id": "0f1c2d3e-claude",
    "transcript_path": "/root/.claude/projects/-work-app/0f1c2d3e-claude.jsonl",
    "cwd": "/work/app",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "what did we decide about payments?",
    "prompt_id": "p-1",
    "permission_mode": "default",
}
CODEX_SESSION_START = {
    "session_id": "019a-codex",
    "transcript_path": "/root/.codex/sessions/2026/11/29/rollout-019a.jsonl",
    "cwd": "/work/app",
    "hook_event_name": "SessionStart",
    "source": "startup",
    "model": "gpt-5",
    "turn_id": "t-0",
    "permission_mode": "on-request",
}
GROK_SESSION_START = {
    "hookEventName": "SessionStart",
    "hook_event_name": "SessionStart",
    "sessionId": "grok-77",
    "session_id": "grok-77",
    "workspaceRoot": "/work/app",
    "source": "new",
}
OPENCODE_PLUGIN = {"session_id": "ses_opencode_1", "event": "session.created"}
OPENCLAW_PLUGIN = {"session_id": "openclaw-main-1", "event": "before_prompt_build"}
