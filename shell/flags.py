"""The options every front end takes (``--home``, ``--workspace``, ``--agent``, ``--model``,
``--store-url``, ``--openclaw``), the settings they resolve to, and the engine opened on them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, NoReturn

from clawmem.engine.config import Settings, load_settings
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.shell.values import project_key


class Parser(argparse.ArgumentParser):
    """argparse with a two-line usage error (exit 2) instead of the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", metavar="DIR", help="clawmem home (default ~/.clawmem or $CLAWMEM_HOME)")
    parser.add_argument("--workspace", metavar="DIR", help="the memory workspace (default <home>/workspace)")
    parser.add_argument("--agent", metavar="ID", help="agent id (default main)")
    parser.add_argument("--model", metavar="PATH", help="a GGUF embedding model to use instead of the default")
    parser.add_argument(
        "--store-url",
        metavar="URL",
        help="share the index through PostgreSQL (postgresql://user@host/db; default $CLAWMEM_STORE_URL "
        "or store.url): published there after every sync, searched there",
    )
    parser.add_argument(
        "--openclaw",
        nargs="?",
        const="",
        metavar="HOME",
        help="read an OpenClaw home in place (default ~/.openclaw): its workspace, sessions and index; "
        "nothing of OpenClaw's is written",
    )


def global_parent() -> argparse.ArgumentParser:
    """The global options again, so they also work after the subcommand (``clawmem index --home X``)."""
    parent = argparse.ArgumentParser(add_help=False)
    for flag, meta in (
        ("--home", "DIR"),
        ("--workspace", "DIR"),
        ("--agent", "ID"),
        ("--model", "PATH"),
        ("--store-url", "URL"),
    ):
        parent.add_argument(flag, metavar=meta, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parent.add_argument(
        "--openclaw", nargs="?", const="", metavar="HOME", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    return parent


def add_project_option(parser: argparse.ArgumentParser) -> None:
    """``--project KEY`` (repeatable): the active project keys, validated by :func:`project_key`."""
    parser.add_argument(
        "--project",
        action="append",
        default=[],
        type=project_key("--project"),
        metavar="KEY",
        help="an active project key (repeatable)",
    )


def settings_from(args: argparse.Namespace, **overrides: Any) -> Settings:
    home = Path(args.home).expanduser() if getattr(args, "home", None) else None
    workspace = Path(args.workspace).expanduser() if getattr(args, "workspace", None) else None
    openclaw = openclaw_home(args)
    if workspace is None and openclaw is not None:
        workspace = openclaw.workspace  # clawmem's own state stays in its home
    store_url = getattr(args, "store_url", None)
    if store_url:
        overrides = {**overrides, "store": {**overrides.get("store", {}), "url": store_url}}
    return load_settings(
        home=home,
        workspace=workspace,
        agent_id=getattr(args, "agent", None),
        model=getattr(args, "model", None),
        overrides=overrides or None,
    )


def check_home(home: Path) -> None:
    """Refuse a home that is a file or cannot be created, in one line (before anything is opened)."""
    if home.exists() and not home.is_dir():
        raise ClawmemError(f"clawmem home {home} is not a directory (check --home or CLAWMEM_HOME)")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClawmemError(
            f"cannot create the clawmem home {home}: {exc.strerror or exc} (check --home or CLAWMEM_HOME)"
        ) from None


def openclaw_home(args: argparse.Namespace) -> OpenClawHome | None:
    """The OpenClaw home ``--openclaw [HOME]`` names (discovered once per command), or None."""
    given = getattr(args, "openclaw", None)
    if given is None:
        return None
    found: OpenClawHome | None = getattr(args, "_openclaw_home", None)
    if found is None:
        found = OpenClawHome.open(given or None, getattr(args, "agent", None) or "main")
        args._openclaw_home = found
    return found


def engine_from(args: argparse.Namespace, **overrides: Any) -> MemoryEngine:
    settings = settings_from(args, **overrides)
    check_home(settings.home)
    return MemoryEngine(settings, openclaw=openclaw_home(args))
