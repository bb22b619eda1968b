"""Record the capture benchmark's transcripts from the real harness binaries.

    PATH=/path/to/harness/bin:$PATH python -m benchmarks.capture_record

Each scenario is one headless session of Claude Code or Codex against the fake model on loopback
(tests/support/fake_model.py): the user's prompts are real prompts, the scripted model turns are
real tool calls that the harness really runs in a throwaway git project (a failing test, an edit,
the test passing, a commit), and the transcript is whatever the binary wrote. The files land in
benchmarks/data/capture/ beside `annotations.json`, where a person wrote down, for each session,
the facts a careful reader would keep (`keep`) — capture.py scores against that — and the secrets
and `<private>` text planted in it (`never`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "capture"
sys.path[:0] = [str(ROOT / "tests" / "support")]

from fake_model import FakeModel, Text, ToolCall  # noqa: E402
from harnesses import throwaway_home  # noqa: E402

CALC = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _claude_fix(project: Path) -> list:
    calc = str(project / "calc.py")
    return [
        ToolCall("Bash", {"command": "python -m pytest -q test_calc.py", "description": "run the tests"}),
        ToolCall("Read", {"file_path": calc}),
        ToolCall("Edit", {"file_path": calc, "old_string": "return a - b", "new_string": "return a + b"}),
        ToolCall("Bash", {"command": "python -m pytest -q test_calc.py", "description": "run the tests"}),
        ToolCall("Bash", {"command": "git add -A && git commit -q -m 'Fix add() to add' && git log --oneline -1 && "
                                     "git commit --allow-empty -m 'Record the fix'", "description": "commit"}),
        Text("Fixed add(); the tests pass. I think subtract() might have the same bug, maybe worth a look."),
    ]


def _grok_fix(project: Path) -> list:
    calc = str(project / "calc.py")
    return [
        Text("Fix calc"),  # Grok's first request titles the session
        ToolCall("run_terminal_command", {"command": "python -m pytest -q test_calc.py", "description": "run the tests"}),
        ToolCall("search_replace", {"file_path": calc, "old_string": "return a - b", "new_string": "return a + b"}),
        ToolCall("run_terminal_command", {"command": "python -m pytest -q test_calc.py", "description": "run the tests"}),
        ToolCall("run_terminal_command", {"command": "git add -A && git commit -m 'Fix add() to add'",
                                          "description": "commit"}),
        Text("Fixed add() and committed; the tests pass. Probably subtract() needs the same fix."),
    ]


# (name, harness, prompts, model turns given the project dir)
SCENARIOS = [
    ("claude-fix-and-commit", "claude",
     ["The tests in test_calc.py fail. Please fix them and commit. From now on, run pytest with -q in this repo. "
      "Also, I prefer small commits with imperative subjects. <private>My bank PIN is 5531.</private>"],
     _claude_fix),
    ("claude-decisions", "claude",
     ["We decided to deploy from the main branch only. Remember that the staging database lives on db-staging.internal. "
      "Should we move the cron jobs to Kubernetes? Maybe later. If we decided to use Redis, what would change?",
      ],
     lambda p: [Text("Noted: deploys from main only; staging DB on db-staging.internal. Moving cron to Kubernetes could work.")]),
    ("claude-secrets", "claude",
     ["Set up the .env for local dev: OPENAI_API_KEY=sk-proj-Q9vXw2LmT4pRz8KdYc3NbHf6 and "
      "DATABASE_URL=postgres://app:Tr0ub4dor-3x@localhost:5432/app. The AWS key AKIAQ3EGUWXZ5MPLE7KD goes in the CI secrets. "
      "Remember that the billing service token is ghp_R2d2C3poBb8Yoda4LukeLeia5HanSolo9Chewie. "
      "We decided to keep secrets in the OS keyring from now on. <private>the VPN password is hunter2-correct-horse</private>"],
     lambda p: [ToolCall("Bash", {"command": "echo 'OPENAI_API_KEY=sk-proj-Q9vXw2LmT4pRz8KdYc3NbHf6' > .env.example && ls -a",
                                  "description": "write env"}),
                Text("Wrote .env.example with OPENAI_API_KEY=sk-proj-Q9vXw2LmT4pRz8KdYc3NbHf6.")]),
    ("claude-chitchat", "claude",
     ["What does the calc module do? Just explain, no changes. I think it adds numbers, but I'm not sure."],
     lambda p: [ToolCall("Bash", {"command": "cat calc.py", "description": "read"}),
                Text("It defines add(a, b), which currently subtracts — probably a bug. We could fix it later.")]),
    ("claude-failed-attempt", "claude",
     ["Try to make the tests pass by changing the test, not the code. Going forward, never edit tests to make them pass."],
     lambda p: [ToolCall("Bash", {"command": "python -m pytest -q test_calc.py", "description": "run"}),
                Text("The test still fails: add(2, 3) returns -1. Changing the test would hide the bug; I did not.")]),
    ("codex-fix", "codex",
     ["Fix the failing test in test_calc.py. From now on, always run the linter before committing. "
      "Note: the API base URL is https://admin:Sup3rS3cretPw@api.internal/v2 for now."],
     lambda p: [ToolCall("exec_command", {"cmd": "python -m pytest -q test_calc.py"}),
                ToolCall("exec_command", {"cmd": f"printf '{CALC_FIXED!s}' > calc.py".replace("\n", "\\n")}),
                ToolCall("exec_command", {"cmd": "python -m pytest -q test_calc.py"}),
                Text("Fixed calc.py; tests pass.")]),
    ("codex-decision", "codex",
     ["We've decided to ship releases on Tuesdays. I'd rather keep the changelog in CHANGELOG.md than in the wiki. "
      "Here is the token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1ib3QiLCJyb2xlIjoiYWRtaW4ifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"],
     lambda p: [ToolCall("exec_command", {"cmd": "git log --oneline | head -3"}), Text("Noted.")]),
    ("grok-fix", "grok",
     ["The tests in test_calc.py fail. Fix them and commit. We decided to tag releases from main only. "
      "The deploy key is AKIAQ3EGUWXZ5MPLE7KD, keep it out of the repo. <private>my locker code is 8812</private>"],
     _grok_fix),
]

ANNOTATIONS = {
    "claude-fix-and-commit": {
        "keep": ["From now on, run pytest with -q in this repo.", "The user prefers small commits with imperative subjects.",
                 "`python -m pytest -q test_calc.py` passes after a fix (changed calc.py).", "Commit * on *: Fix add() to add",
                 "Commit * on *: Record the fix"],
        "never": ["5531", "My bank PIN"],
    },
    "claude-decisions": {
        "keep": ["We decided to deploy from the main branch only.", "The staging database lives on db-staging.internal."],
        "never": [],
    },
    "claude-secrets": {
        "keep": ["We decided to keep secrets in the OS keyring from now on."],
        "never": ["sk-proj-Q9vXw2LmT4pRz8KdYc3NbHf6", "Tr0ub4dor-3x", "AKIAQ3EGUWXZ5MPLE7KD",
                  "ghp_R2d2C3poBb8Yoda4LukeLeia5HanSolo9Chewie", "hunter2-correct-horse"],
    },
    "claude-chitchat": {"keep": [], "never": []},
    "claude-failed-attempt": {"keep": ["Going forward, never edit tests to make them pass."], "never": []},
    # Codex's login shell has no `python`: both test runs fail (exit 127), and the assistant's closing
    # "tests pass" is wrong. A careful reader keeps the rule and not the claimed outcome.
    "codex-fix": {
        "keep": ["From now on, always run the linter before committing."],
        "never": ["Sup3rS3cretPw"],
    },
    "codex-decision": {
        "keep": ["We've decided to ship releases on Tuesdays.",
                 "The user would rather keep the changelog in CHANGELOG.md than in the wiki."],
        "never": ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1ib3QiLCJyb2xlIjoiYWRtaW4ifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"],
    },
    # Not recorded by this script: the `transcript_events` rows of one `openclaw agent --local` session
    # (OpenClaw 2026.9.6 keeps its sessions in SQLite), exported one event a line as its sessionFile holds them.
    "openclaw-decision": {"keep": ["We decided to use tabs."], "never": ["pin 4411"]},
    # Not recorded by this script either: the `session`, `message` and `part` rows of one `opencode run`
    # session from opencode.db (opencode 1.18.33), exported as JSON; capture.py loads them into a store.
    "opencode-store": {"keep": ["We decided to use tabs."], "never": ["pin 4411"]},
    "grok-fix": {
        "keep": ["We decided to tag releases from main only.",
                 "`python -m pytest -q test_calc.py` passes after a fix (changed calc.py).", "Commit * on *: Fix add() to add"],
        "never": ["AKIAQ3EGUWXZ5MPLE7KD", "locker code is 8812"],  # a bare 4-digit needle matches hex digests
    },
}


def _project(root: Path) -> Path:
    project = root / "project"
    project.mkdir(exist_ok=True)
    (project / "calc.py").write_text(CALC)
    (project / "test_calc.py").write_text(TEST)
    git = ["git", "-C", str(project), "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    subprocess.run([*git, "remote", "add", "origin", "git@github.com:acme/calc.git"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "Start"], check=True)
    return project


def record(name: str, harness: str, prompts: list[str], turns) -> Path:
    with tempfile.TemporaryDirectory() as tmp, FakeModel() as api:
        root = Path(tmp)
        env = throwaway_home(root)
        env.update(GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="Bench",
                   GIT_COMMITTER_EMAIL="bench@example.com")
        project = _project(root)
        api.script(*turns(project))
        if harness == "claude":
            env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-ant-bench-fake")
            argv = ["claude", "-p", prompts[0], "--allowedTools", "Bash,Read,Edit,Write", "--output-format", "json"]
        elif harness == "grok":
            # A model entry of Grok's own config pointing at the fake model's chat completions.
            (Path(env["HOME"]) / ".grok").mkdir(exist_ok=True)
            (Path(env["HOME"]) / ".grok" / "config.toml").write_text(
                f'[model.fake]\nmodel = "fake-model"\nbase_url = "{api.url}/v1"\napi_key = "x"\n'
                'api_backend = "chat_completions"\ncontext_window = 128000\n')
            argv = ["grok", "-p", prompts[0], "-m", "fake", "--always-approve"]
        else:
            codex_home = Path(env["CODEX_HOME"])
            (codex_home / "config.toml").write_text(
                f'model = "gpt-bench"\nmodel_provider = "bench"\n[model_providers.bench]\nname = "bench"\n'
                f'base_url = "{api.url}/v1"\nenv_key = "BENCH_KEY"\nwire_api = "responses"\n')
            env["BENCH_KEY"] = "sk-bench-fake"
            argv = ["codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json",
                    "--disable", "plugins", "-c", "analytics.enabled=false", prompts[0]]
        subprocess.run(argv, env=env, cwd=project, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
        store = Path(env["HOME"]) / {"claude": ".claude/projects", "codex": ".codex/sessions", "grok": ".grok/sessions"}[harness]
        found = sorted(store.rglob("updates.jsonl" if harness == "grok" else "*.jsonl"))
        if not found:
            raise SystemExit(f"{name}: {harness} wrote no transcript")
        out = DATA / f"{name}.jsonl"
        # Paths under the throwaway root are rewritten to a stable placeholder, so the files do not
        # name this machine's temp folder (and the engine's project lookup is the benchmark's to set).
        text = found[-1].read_text().replace(str(root), "/bench")
        out.write_text(text.replace(quote(str(root), safe=""), quote("/bench", safe="")))
        return out


def main(only: list[str] | None = None) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, harness, prompts, turns in SCENARIOS:
        if only and name not in only:
            continue
        if shutil.which(harness) is None:
            raise SystemExit(f"{harness} is not on PATH")
        print(name, record(name, harness, prompts, turns))
    (DATA / "annotations.json").write_text(json.dumps(ANNOTATIONS, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])  # names of scenarios to record again; none: all
