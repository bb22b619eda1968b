"""Projects from the command line: what is remembered in a repository is its project's, two repositories that
share a name keep two slugs, and `projects`, `recall --project`, `entities --project` read them back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from runcli import run_cli


def repo(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", remote], cwd=path, check=True)
    return path


def ok(env, cwd, *args) -> dict:
    proc = run_cli(*args, "--json", env=env, cwd=cwd)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def test_projects_attribute_list_and_filter(env, tmp_path, brain_backend):
    app = repo(tmp_path / "work" / "app", "git@github.com:org/app.git")
    other = repo(tmp_path / "oss" / "app", "https://gitlab.com/someone/app")  # another project with the same name
    (app / "src").mkdir()

    body = ok(env, app / "src", "remember", "We chose Postgres for the queue", "--provenance", "chat")
    assert body["entity_slug"] == "projects/app"  # no entity named: the project's own
    ok(env, app, "remember", "Bob reviews the importer", "--provenance", "chat", "--entity", "people/bob")
    assert ok(env, other, "remember", "Deploys happen on Fridays", "--provenance", "chat")["entity_slug"] == "projects/app-2"
    assert ok(env, tmp_path, "remember", "I like tea", "--provenance", "chat")["entity_slug"] is None
    # The slug is the key's for good: the first project keeps projects/app on its next fact, from a second clone too.
    clone = repo(tmp_path / "clone" / "app-copy", "https://github.com/org/app")
    assert ok(env, clone, "remember", "The queue has three workers", "--provenance", "chat")["entity_slug"] == "projects/app"

    listed = ok(env, tmp_path, "projects")
    assert [(p["slug"], p["facts"]) for p in listed] == [("projects/app", 3), ("projects/app-2", 1)]
    assert listed[0]["key"] == "github.com/org/app" and listed[1]["key"] == "gitlab.com/someone/app"

    def recalled(project: str) -> list[str]:
        return sorted(f["fact"] for f in ok(env, tmp_path, "recall", "--project", project)["facts"])

    assert recalled("projects/app") == ["Bob reviews the importer", "The queue has three workers",
                                        "We chose Postgres for the queue"]
    assert recalled(str(other)) == recalled("app-2") == ["Deploys happen on Fridays"]
    entities = [e["slug"] for e in ok(env, tmp_path, "entities", "--project", "app")]
    assert sorted(entities) == ["people/bob", "projects/app"]

    refused = run_cli("recall", "--project", "nope", env=env, cwd=tmp_path)
    assert refused.returncode != 0 and "no project 'nope'" in refused.stderr and "fix:" in refused.stderr
    assert "projects/app-2" in refused.stderr and "Traceback" not in refused.stderr
