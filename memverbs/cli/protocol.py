"""`memverbs protocol`: the spec (`--json`), `conformance` against any endpoint, and usage `stats`."""

from __future__ import annotations

from memverbs.cli.output import fail, print_json


def run_protocol(args) -> int:
    if args.protocol_command == "conformance":
        return _conformance(args)
    if args.protocol_command == "stats":
        return _stats(args)
    from memverbs.server.protocol.spec import spec_document, spec_summary  # noqa: PLC0415

    if args.json:
        print_json(spec_document())
    else:
        print(spec_summary())
    return 0


def _conformance(args) -> int:
    import anyio  # noqa: PLC0415 - only this subcommand needs the MCP client stack

    from memverbs.server.conformance.connect import connect, describe  # noqa: PLC0415
    from memverbs.server.conformance.runner import render_text, run  # noqa: PLC0415

    async def main() -> dict:
        async with connect(args.target, args.token) as endpoint:
            return await run(endpoint.list_tools, endpoint.call_tool, synthesize=args.synthesize)

    try:
        report = anyio.run(main)
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported, never a traceback
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return fail(
            f"could not talk MCP to {describe(args.target)} ({detail})",
            "Check the target: a URL must be the server's MCP endpoint (…/mcp) and a command must start an MCP "
            "stdio server; pass --token for a server that needs one.",
        )
    if args.json:
        print_json(report)
    else:
        print(render_text(report, describe(args.target)))
    return 0 if report["ok"] else 1


def _stats(args) -> int:
    from memverbs.server.errors import ConfigError  # noqa: PLC0415
    from memverbs.server.home import Home  # noqa: PLC0415
    from memverbs.server.settings import load_settings  # noqa: PLC0415
    from memverbs.server.usage import stats, stats_text  # noqa: PLC0415

    home = Home.from_env()
    try:
        installed_at = load_settings(home).protocol_installed_at
    except ConfigError:
        installed_at = None
    days = int(args.days) if args.days and args.days.isdigit() and int(args.days) > 0 else 30
    report = stats(home.usage_log, days=days, installed_at=installed_at)
    if args.json:
        print_json(report)
    else:
        print(stats_text(report))
    return 0
