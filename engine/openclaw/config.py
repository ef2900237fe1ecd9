"""OpenClaw's state directory and its ``openclaw.json``, read as JSON5 (comments, trailing commas,
unquoted keys) with the ``json5`` library.

The state directory is what a person calls their OpenClaw home (``~/.openclaw``). Given its parent
(a folder holding ``.openclaw/``), that is used. ``~`` in the config is OpenClaw's home
directory: the state directory's parent when it is named ``.openclaw`` (OpenClaw's own layout,
``OPENCLAW_HOME/.openclaw``), else the user's home. So a copied home resolves to the copy, never
to the absolute paths stored inside its databases.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json5
from clawmem.engine.errors import ClawmemError

CONFIG_NAME = "openclaw.json"
STATE_NAME = ".openclaw"


@dataclass(frozen=True)
class AgentEntry:
    agent_id: str
    workspace: str | None  # as written in the config (``~`` not yet expanded)


@dataclass(frozen=True)
class OpenClawConfig:
    """The settings clawmem reads from ``openclaw.json`` (everything else is left alone)."""

    path: Path
    default_workspace: str | None  # agents.defaults.workspace
    agents: tuple[AgentEntry, ...]  # agents.list
    owner_allow_from: tuple[str, ...]  # commands.ownerAllowFrom
    memory_provider: str | None  # memory.search.provider, when set
    fts_tokenizer: str | None  # memory.search.store.fts.tokenizer, when set
    extra_paths: tuple[str, ...]  # memory.search.extraPaths


def default_state_dir() -> Path:
    """``$OPENCLAW_STATE_DIR``, else ``$OPENCLAW_HOME/.openclaw``, else ``~/.openclaw``."""
    if os.environ.get("OPENCLAW_STATE_DIR"):
        return Path(os.environ["OPENCLAW_STATE_DIR"]).expanduser()
    if os.environ.get("OPENCLAW_HOME"):
        return Path(os.environ["OPENCLAW_HOME"]).expanduser() / STATE_NAME
    return Path.home() / STATE_NAME


def _looks_like_state_dir(path: Path) -> bool:
    return (path / CONFIG_NAME).is_file() or (path / "agents").is_dir() or (path / "state").is_dir()


def state_dir(given: Path | str | None) -> Path:
    """The state directory for ``--openclaw [HOME]``; a one-line error when it is not one."""
    path = default_state_dir() if given is None or str(given) == "" else Path(given).expanduser()
    path = path.absolute()
    if not path.exists():
        raise ClawmemError(f"OpenClaw home {path} does not exist (give the folder that holds openclaw.json)")
    if not path.is_dir():
        raise ClawmemError(f"OpenClaw home {path} is not a directory")
    if _looks_like_state_dir(path):
        return path
    if _looks_like_state_dir(path / STATE_NAME):
        return path / STATE_NAME
    raise ClawmemError(f"{path} is not an OpenClaw home: it has no {CONFIG_NAME}, agents/ or state/")


def user_home(state: Path) -> Path:
    """What ``~`` means in this home's config (see the module docstring)."""
    return state.parent if state.name == STATE_NAME else Path.home()


def expand(text: str, state: Path) -> Path:
    """A path from the config: ``~`` is :func:`user_home`; a relative path is under the state dir."""
    if text == "~" or text.startswith("~/"):
        return user_home(state) / text[2:]
    path = Path(text)
    return path if path.is_absolute() else state / path


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _text(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ClawmemError(f"{where} should be a string (got {type(value).__name__})")
    return value


def _texts(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ClawmemError(f"{where} should be a list (got {type(value).__name__})")
    return tuple(str(v) for v in value)


def load_config(path: Path) -> OpenClawConfig:
    """Parse ``openclaw.json``; a one-line error names the file and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClawmemError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ClawmemError(f"{path} is not UTF-8 text") from None
    try:
        data = json5.loads(text)
    except ValueError as exc:
        detail = str(exc).replace("<string>:", "line ", 1)
        raise ClawmemError(f"{path} is not valid JSON5: {detail}") from None
    if not isinstance(data, Mapping):
        raise ClawmemError(f"{path} should hold an object at the top")
    try:
        agents: list[AgentEntry] = []
        listed = _get(data, "agents", "list")
        if listed is not None and not isinstance(listed, list):
            raise ClawmemError("agents.list should be a list")
        for n, entry in enumerate(listed or []):
            if isinstance(entry, Mapping) and isinstance(entry.get("id"), str):
                agents.append(AgentEntry(entry["id"], _text(entry.get("workspace"), f"agents.list[{n}].workspace")))
        return OpenClawConfig(
            path=path,
            default_workspace=_text(_get(data, "agents", "defaults", "workspace"), "agents.defaults.workspace"),
            agents=tuple(agents),
            owner_allow_from=_texts(_get(data, "commands", "ownerAllowFrom"), "commands.ownerAllowFrom"),
            memory_provider=_text(_get(data, "memory", "search", "provider"), "memory.search.provider"),
            fts_tokenizer=_text(
                _get(data, "memory", "search", "store", "fts", "tokenizer"), "memory.search.store.fts.tokenizer"
            ),
            extra_paths=_texts(_get(data, "memory", "search", "extraPaths"), "memory.search.extraPaths"),
        )
    except ClawmemError as exc:
        raise ClawmemError(f"{path}: {exc}") from None


def is_owner(config: OpenClawConfig | None, channel: str | None, sender_id: str | None) -> bool:
    """Does ``commands.ownerAllowFrom`` name this sender (``channel:id``, a bare id, or ``*``)?"""
    if config is None or not sender_id:
        return False
    for entry in config.owner_allow_from:
        entry = entry.strip()
        if entry == "*":
            return True
        prefix, sep, ident = entry.rpartition(":")
        if sep and ident == sender_id and channel is not None and prefix.lower() == channel.lower():
            return True
        if not sep and entry == sender_id:
            return True
    return False
