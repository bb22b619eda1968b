"""The conformance run (PROTOCOL.md §7): certify any MEMORY_VERBS v1 endpoint.

It speaks only MCP (tools/list and tools/call), so it certifies memverbs and
any other server alike. The cases are data (cases.json, shipped with the
package); this module only interprets them:

    marker → seed (put_page, if offered) → 8 tool-list checks → 20 cases → report
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from memverbs.server.protocol.registry import CORE_VERBS, VERB_NAMES
from memverbs.server.protocol.schemas import ERROR_SCHEMA, RESPONSE_SCHEMAS, validate

CallTool = Callable[[str, dict], Awaitable[tuple[str, bool]]]  # (joined text, isError)
ListTools = Callable[[], Awaitable[list[dict]]]  # [{name, description, ...}]

_ID = re.compile(r"\{\{id:([^}]+)\}\}")


@dataclass
class Result:
    name: str
    verb: str
    status: str  # pass | fail | skip
    detail: str = ""


def load_cases() -> dict:
    return json.loads(resources.files("memverbs.server.conformance").joinpath("cases.json").read_text(encoding="utf-8"))


def new_marker() -> str:
    return "run-" + _base36(int(time.time() * 1000))


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


_WRITES = ("remember", "forget", "put_page")


def writes_summary() -> str:
    """What a run writes into the target brain, from the cases themselves (said before a real brain is certified)."""
    cases = load_cases()
    entity = cases["entity"].replace("{{marker}}", "run-<time>")
    calls = [c for c in cases["cases"] if c["verb"] in _WRITES and "expectErrorCode" not in c]
    facts = sum(1 for c in calls if c["verb"] == "remember")
    forgets = sum(1 for c in calls if c["verb"] == "forget")
    return (
        f"it writes one page ({entity}, when put_page is offered), up to {facts} facts about it "
        f"(one private) and expires one of them with forget ({forgets} calls); they stay in the brain afterwards."
    )


def seed_content(marker: str) -> str:
    return (
        f"---\ntitle: Conformance {marker}\ntype: person\n---\n\n# Conformance {marker}\n\n"
        "Synthetic entity for a MEMORY_VERBS conformance run.\n"
    )


async def run(list_tools: ListTools, call_tool: CallTool, *, synthesize: bool = False, marker: str | None = None) -> dict:
    marker = marker or new_marker()
    data = load_cases()
    entity = data["entity"].replace("{{marker}}", marker)
    saved: dict[str, str] = {}
    results: list[Result] = []

    seeded = False
    try:
        _, is_error = await call_tool("put_page", {"slug": entity, "content": seed_content(marker)})
        seeded = not is_error
    except Exception:  # noqa: BLE001 - any failure to seed means "cannot seed": the cases skip honestly
        seeded = False

    listed: dict[str, dict] = {}
    try:
        listed = {t["name"]: t for t in await list_tools()}
        for verb in VERB_NAMES:
            name = f"tools/list advertises {verb}"
            if verb in listed:
                results.append(Result(name, verb, "pass"))
            elif verb in CORE_VERBS:
                results.append(Result(name, verb, "fail", "not advertised"))
            else:
                results.append(Result(name, verb, "skip", "optional additive verb (v0.45.7) not advertised by this endpoint"))
        desc = (listed.get("synthesize") or {}).get("description") or ""
        name = "synthesize is marked expensive ([EXPENSIVE prefix)"
        if desc.startswith("[EXPENSIVE"):
            results.append(Result(name, "synthesize", "pass"))
        else:
            results.append(Result(name, "synthesize", "fail", f'description starts: "{desc[:40]}..."'))
    except Exception as exc:  # noqa: BLE001 - a transport failure is a failed check, not a crash
        results.append(Result("tools/list", "-", "fail", f"transport: {exc}"))

    for case in data["cases"]:
        results.append(await _run_case(case, call_tool, listed, seeded, synthesize, marker, entity, saved))

    passed = sum(r.status == "pass" for r in results)
    failed = sum(r.status == "fail" for r in results)
    skipped = sum(r.status == "skip" for r in results)
    return {
        "protocol_version": 1,
        "marker": marker,
        "results": [r.__dict__ for r in results],
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "ok": failed == 0,
    }


async def _run_case(
    case: dict[str, Any],
    call_tool: CallTool,
    listed: dict[str, dict[str, Any]],
    seeded: bool,
    synthesize: bool,
    marker: str,
    entity: str,
    saved: dict[str, str],
) -> Result:
    name, verb = case["name"], case["verb"]
    if case.get("requiresSynthesize") and not synthesize:
        return Result(name, verb, "skip", "costs money — pass --synthesize")
    if verb not in CORE_VERBS and listed and verb not in listed:
        return Result(name, verb, "skip", "optional additive verb not advertised by this endpoint")
    if case.get("requiresSeededEntity") and not seeded:
        return Result(name, verb, "skip", "target has no put_page to seed the entity page (verbs-only surface)")
    params = _substitute(case["params"], marker, entity, saved)
    try:
        text, is_error = await call_tool(verb, params)
    except Exception as exc:  # noqa: BLE001 - the per-case guard: a transport failure fails this case, not the run
        return Result(name, verb, "fail", f"transport: {exc}")
    try:
        body = json.loads(text)
    except ValueError:
        return Result(name, verb, "fail", f"response not JSON: {text[:120]}")

    if verb == "synthesize":
        if is_error:
            problems = validate(body, ERROR_SCHEMA)
            if body.get("error") != "unavailable":
                return Result(name, verb, "fail", f"expected success or unavailable, got error {body.get('error')}")
            if not str(body.get("suggestion") or "").strip():
                return Result(name, verb, "fail", "error.suggestion empty (F-D mandate)")
            return Result(name, verb, "fail", "; ".join(problems)) if problems else Result(name, verb, "pass")
        problems = validate(body, RESPONSE_SCHEMAS["synthesize"])
        return Result(name, verb, "fail", "; ".join(problems)) if problems else Result(name, verb, "pass")

    if "expectErrorCode" in case:
        code = case["expectErrorCode"]
        if not is_error:
            return Result(name, verb, "fail", f"expected error {code}, got success")
        if not isinstance(body, dict) or body.get("error") != code:
            got = body.get("error") if isinstance(body, dict) else body
            return Result(name, verb, "fail", f"expected error {code}, got {got}")
        if case.get("expectSuggestion") and not str(body.get("suggestion") or "").strip():
            return Result(name, verb, "fail", "error.suggestion empty (F-D mandate)")
        return Result(name, verb, "pass")

    if is_error:
        return Result(name, verb, "fail", f"unexpected error: {text[:160]}")
    if case.get("validateSchema"):
        problems = validate(body, RESPONSE_SCHEMAS[verb])
        if problems:
            return Result(name, verb, "fail", "; ".join(problems[:3]))
    for check in case.get("expect", []):
        problem = _check(body, check)
        if problem:
            return Result(name, verb, "fail", problem)
    save = case.get("saveAs")
    if save:
        value = _get(body, save["path"])
        if not isinstance(value, str):
            return Result(name, verb, "fail", f"{save['path']} is not a string (cannot save {save['key']})")
        saved[save["key"]] = value
    return Result(name, verb, "pass")


def _substitute(value: object, marker: str, entity: str, saved: dict[str, str]) -> Any:
    if isinstance(value, str):
        out = value.replace("{{entity}}", entity).replace("{{marker}}", marker)
        return _ID.sub(lambda m: saved.get(m.group(1), f"missing-{m.group(1)}"), out)
    if isinstance(value, dict):
        return {k: _substitute(v, marker, entity, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, marker, entity, saved) for v in value]
    return value


_MISSING = object()


def _get(body: object, path: str) -> Any:
    node = body
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return _MISSING
    return node


_TYPES = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _check(body: object, check: dict) -> str | None:
    path = check["path"]
    value = _get(body, path)
    shown = "absent" if value is _MISSING else json.dumps(value)[:80]
    if "equals" in check and (value is _MISSING or value != check["equals"] or type(value) is not type(check["equals"])):
        return f"{path}: expected {json.dumps(check['equals'])}, got {shown}"
    if "oneOf" in check and (value is _MISSING or value not in check["oneOf"]):
        return f"{path}: expected one of {check['oneOf']}, got {shown}"
    if "type" in check and (value is _MISSING or not _TYPES[check["type"]](value)):
        return f"{path}: expected {check['type']}, got {shown}"
    if "gte" in check and (not _TYPES["number"](value) or value < check["gte"]):
        return f"{path}: expected a number >= {check['gte']}, got {shown}"
    if "lte" in check and (not _TYPES["number"](value) or value > check["lte"]):
        return f"{path}: expected a number <= {check['lte']}, got {shown}"
    if check.get("nonEmptyString") and not (isinstance(value, str) and value.strip()):
        return f"{path}: expected a non-empty string, got {shown}"
    if "absentOrNotContains" in check and value is not _MISSING and check["absentOrNotContains"] in json.dumps(value):
        return f"{path}: contains {check['absentOrNotContains']!r}"
    return None


def render_text(report: dict, target: str) -> str:
    marks = {"pass": "✓", "skip": "−", "fail": "✗"}
    lines = [f"MEMORY_VERBS v1 conformance — target: {target}"]
    for r in report["results"]:
        detail = f" — {r['detail']}" if r["status"] != "pass" and r["detail"] else ""
        lines.append(f"  {marks[r['status']]} {r['name']}{detail}")
    lines.append(f"{report['passed']} passed, {report['failed']} failed, {report['skipped']} skipped")
    lines.append("CONFORMANT" if report["ok"] else "NOT CONFORMANT")
    return "\n".join(lines)
