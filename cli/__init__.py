"""The ``clawmem`` subcommands a person or a script runs (``openclaw memory …``-like): each module
registers its commands and prints what the engine returns, as Rich tables or ``--json``.

The program (:mod:`clawmem.program.main`) builds the parser and calls :func:`register`.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the CLI's commands to ``clawmem``'s subcommands."""
    from clawmem.cli import (
        context_cmds,
        dream_cmds,
        index_cmds,
        intent_cmds,
        search_cmds,
        session_cmds,
        supersede_cmds,
    )

    for module in (index_cmds, search_cmds, context_cmds, dream_cmds, intent_cmds, session_cmds, supersede_cmds):
        module.register(sub)
