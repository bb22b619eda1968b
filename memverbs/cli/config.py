"""`memverbs config get|set|unset`: dotted keys (`mcp.strict_params`) over config.toml.

A value is validated against the settings model before the file is written, so
a typo cannot leave a config that stops the server.
"""

from __future__ import annotations

import copy
import json
import sys
import tomllib
from typing import TYPE_CHECKING

from pydantic import ValidationError

from memverbs.cli.configfile import read_config, write_config
from memverbs.cli.output import fail, print_json
from memverbs.server.brain.location import redact
from memverbs.server.brain.password import url_password
from memverbs.server.errors import ConfigError
from memverbs.server.home import Home
from memverbs.server.protocol.params import nearest
from memverbs.server.quickconfig import lookup
from memverbs.server.settings import FileSettings, describe, known_keys, load_settings, setting_type

if TYPE_CHECKING:
    import argparse


def run_config(args: argparse.Namespace) -> int:
    home = Home.from_env()
    keys = known_keys()
    if args.config_command == "get":
        try:
            settings = load_settings(home)
        except ConfigError as exc:
            return fail(exc.message, exc.fix)
        values = {key: lookup(settings.model_dump(), key) for key in keys}
        if isinstance(values.get("brain.url"), str):  # a password given in MEMVERBS_BRAIN__URL is never printed
            values["brain.url"] = redact(values["brain.url"])
        if args.key:
            if args.key not in keys:
                return _unknown(args.key, keys)
            values = {args.key: values[args.key]}
        if args.json:
            print_json(values)
        else:
            for key, value in values.items():
                print(f"{key} = {json.dumps(value)}")
        return 0
    if args.key not in keys:
        return _unknown(args.key, keys)
    if args.config_command == "set" and args.key == "brain.url" and url_password(args.value) is not None:
        return fail(
            "brain.url would carry a password, and config.toml is a file: memverbs keeps no password in one",
            "Set brain.url without it (postgresql://user@host/db) and store the password with `memverbs brain-password "
            f"set`, or give it in PGPASSWORD or ~/.pgpass (`memverbs docs postgres`); {home.config_path} was not changed.",
            code=2,
        )
    try:
        data = read_config(home.config_path)
    except tomllib.TOMLDecodeError as exc:
        return fail(f"config file {home.config_path} is not valid TOML ({exc})", f"Fix the syntax in {home.config_path} first.")
    updated = _assign(data, args.key, None if args.config_command == "unset" else _parse_value(args.key, args.value))
    problem = _validate(updated)
    if problem:
        return fail(
            f"{args.key} cannot be {args.value!r}: {problem}" if args.config_command == "set" else problem,
            f"Pick a valid value (see `memverbs docs configuration`); {home.config_path} was not changed.",
        )
    write_config(home.config_path, updated)
    if getattr(args, "json", False):
        print(json.dumps({"key": args.key, "value": lookup(updated, args.key), "file": str(home.config_path)}))
    else:
        print(f"{args.key} = {json.dumps(lookup(updated, args.key))}" if args.config_command == "set" else f"{args.key} unset")
    if args.key.startswith("embeddings.") and str(lookup(updated, "embeddings.model") or "").strip():
        from memverbs.server.providers import extra  # noqa: PLC0415

        if extra.missing():
            provider = str(lookup(updated, "embeddings.provider") or "")
            print(f"note: {extra.problem()}: search stays keyword-only until it is.\n  {extra.fix(provider)}", file=sys.stderr)
    return 0


def _parse_value(key: str, text: str) -> str | int | bool:
    """The TOML value for `text`, typed by the setting it is for (a digits-only source stays a string)."""
    kind = setting_type(key)
    if kind is bool and text.strip().lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return text.strip().lower() in ("true", "1", "yes", "on")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            return text
    return text


def _assign(data: dict, key: str, value: object) -> dict:
    out = copy.deepcopy(data)
    parts = key.split(".")
    node = out
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return out


def _validate(data: dict) -> str | None:
    """What is wrong with the would-be file on its own (the environment is not its problem), or None."""
    try:
        FileSettings(**data)
    except ValidationError as exc:
        return describe(exc)
    return None


def _unknown(key: str, keys: dict) -> int:
    near = nearest(key, keys)
    hint = f'Did you mean "{near}"? ' if near else ""
    return fail(f'unknown setting "{key}"', f"{hint}Known settings: {', '.join(keys)}.")
