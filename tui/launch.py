"""Start the TUI: resolve settings, write the demo workspace when asked, run the app.

Everything that can refuse is checked **before** the demo is written: the ``--demo`` directory
(a file, or a non-empty folder that is not an earlier demo), the terminal, the home and the
configuration — so a refused launch leaves no demo files behind.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from clawmem.engine.errors import ClawmemError
from clawmem.shell import flags


def _check_demo_root(root: Path) -> None:
    """Refuse a ``--demo DIR`` that cannot hold the demo, without writing anything."""
    from clawmem.tui.demo import MARKER

    if root.exists() and not root.is_dir():
        raise ClawmemError(f"--demo {root}: not a directory; give an empty or new directory for the demo")
    probe = root
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise ClawmemError(f"--demo {root}: {probe} is not a directory")
    workspace = root / "workspace"
    if workspace.exists() and not workspace.is_dir():
        raise ClawmemError(f"--demo {root}: {workspace} is a file; give an empty or new directory for the demo")
    if workspace.is_dir() and any(workspace.iterdir()) and not (workspace / MARKER).exists():
        raise ClawmemError(f"{workspace} is not empty; give an empty or new directory for the demo")


def launch_tui(args: argparse.Namespace) -> int:
    from clawmem.tui.app import ClawmemApp
    from clawmem.tui.demo import write_demo

    root: Path | None = None
    if args.demo is not None and args.demo:
        root = Path(args.demo).expanduser().resolve()
        _check_demo_root(root)
    if not sys.stdout.isatty():
        raise ClawmemError("the TUI needs a terminal; use a subcommand (e.g. `clawmem status`) when piping")
    if args.demo is not None:
        # DIR/workspace holds the demo's memory files, DIR/home its index (unless --home).
        if root is None:
            root = Path(tempfile.mkdtemp(prefix="clawmem-demo-"))
        home = Path(args.home).expanduser() if args.home else root / "home"
        if args.home:
            flags.check_home(home)
        args.home, args.workspace = str(home), str(root / "workspace")
        flags.settings_from(args)  # a bad config.toml refuses here, before the demo is written
        workspace = write_demo(root / "workspace")
        print(f"demo workspace: {workspace}", file=sys.stderr)
    engine = flags.engine_from(args)
    engine.require_workspace()
    app = ClawmemApp(engine)
    app.run()
    engine.close()
    return app.return_code or 0
