"""Parse ``clawmem``'s command line, start the front end it asks for, and turn every failure into
one line.

Exit codes: 0 success, 1 a user error (one line on stderr, never a traceback) — an unknown or
refused path, a bad flag value, a missing workspace, a locked database — and 2 bad usage (an
unknown command or flag, a missing argument).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import apsw
from clawmem import cli
from clawmem.engine.errors import ClawmemError
from clawmem.mcp_server import command as mcp_command
from clawmem.shell import flags, messages


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = flags.Parser(
        prog="clawmem",
        description="Inspect and curate an AI agent's long-term memory (OpenClaw Memory Core).",
    )
    flags.add_global_options(parser)
    parser.add_argument(
        "--demo",
        nargs="?",
        const="",
        metavar="DIR",
        help="write the demo workspace (to DIR, or a fresh temp dir) and open it",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    cli.register(sub)
    mcp_command.register(sub)
    return parser


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def openclaw_default(argv: Sequence[str], commands: set[str]) -> list[str]:
    """``--openclaw status``: a command right after ``--openclaw`` is the command, not the HOME
    (the default home is meant), so an empty HOME is put in between."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--openclaw" and out[i + 1] in commands:
            out.insert(i + 1, "")
            break
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args: argparse.Namespace | None = None
    try:
        argv = openclaw_default(sys.argv[1:] if argv is None else argv, _commands(parser))
        args = parser.parse_args(argv)  # a bad flag value raises ClawmemError: exit 1, one line
        if args.command is None:
            from clawmem.tui.launch import launch_tui  # Textual loads only for the app

            return launch_tui(args)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.parse_args([*(argv or sys.argv[1:]), "--help"])
            return 2
        return int(handler(args) or 0)
    except ClawmemError as exc:
        messages.fail(str(exc))
        return 1
    except apsw.BusyError:  # a write that waited out the busy timeout
        messages.fail("the database is locked by another clawmem process; try again")
        return 1
    except KeyboardInterrupt:
        print("clawmem: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except UnicodeEncodeError as exc:
        if exc.reason != "surrogates not allowed":
            return _internal_error(args, exc)
        # Bytes of an argument that are not UTF-8 reach Python as lone surrogates (PEP 383).
        messages.fail("an argument is not valid UTF-8 text (undecodable bytes); give it as UTF-8")
        return 1
    except Exception as exc:
        return _internal_error(args, exc)


def _internal_error(args: argparse.Namespace | None, exc: Exception) -> int:
    """``exc``, being handled, is a bug: one line for the user, the traceback in the log."""
    log = messages.log_exception(args)
    where = f"details in {log}" if log else "no log could be written"
    messages.fail(f"internal error: {type(exc).__name__}: {exc} ({where})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
