"""Start the TUI: resolve settings, write the demo workspace when asked, run the app."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from engine.errors import ClawmemError
from tui.cli import common


def launch_tui(args: argparse.Namespace) -> int:
    from tui.app import ClawmemApp
    from tui.demo import write_demo

    if args.demo is not None:
        # DIR/workspace holds the demo's memory files, DIR/home its index (unless --home).
        root = Path(args.demo).expanduser() if args.demo else Path(tempfile.mkdtemp(prefix="clawmem-demo-"))
        workspace = write_demo(root / "workspace")
        home = Path(args.home).expanduser() if args.home else root / "home"
        args.home, args.workspace = str(home), str(workspace)
        print(f"demo workspace: {workspace}", file=sys.stderr)
    if not sys.stdout.isatty():
        raise ClawmemError("the TUI needs a terminal; use a subcommand (e.g. `clawmem status`) when piping")
    engine = common.engine_from(args)
    engine.require_workspace()
    app = ClawmemApp(engine)
    app.run()
    engine.close()
    return app.return_code or 0
