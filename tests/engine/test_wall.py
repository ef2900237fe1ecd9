"""The walls between the rooms (docs/architecture.md): the engine pulls in no UI library and no
front end; the three front ends (CLI, MCP server, app) never import each other; what they share
(``shell``) imports none of them; only ``program`` knows all three."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

from clawmem import engine


def engine_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(engine.__path__, engine.__name__ + "."))


def test_engine_imports_no_ui_library() -> None:
    modules = engine_modules()
    assert len(modules) > 15, modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich') or m.split('.')[:2] in (['clawmem', f] for f in ('tui', 'cli', 'mcp_server', 'shell', 'program')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"engine imported UI modules: {out.stdout}"


def test_no_sql_outside_store() -> None:
    """docs/design.md §2: SQL lives in engine/store/ only."""
    import re
    from pathlib import Path

    root = Path(engine.__file__).parent
    pattern = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\s+(\*|[A-Za-z_]+)\s+(FROM|INTO|SET|\w)", re.I)
    offenders = []
    for path in root.rglob("*.py"):
        if "store" in path.relative_to(root).parts or path.name.endswith("_schema.py"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and ('"' in line or "'" in line) and "execute" in line:
                offenders.append(f"{path.relative_to(root)}:{n}")
    assert offenders == []


def test_only_the_facade_knows_the_facade() -> None:
    """Services receive a runtime and narrow protocols (engine/runtime.py), never the engine:
    no module under engine/ but the facade itself imports it, even for type checking."""
    import ast
    from pathlib import Path

    root = Path(engine.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "facade.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n.endswith("engine.facade") or n == "facade" for n in names):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


# What each package may import of its siblings (anywhere in it: lazy imports inside functions count).
ALLOWED = {
    "engine": {"engine"},
    "shell": {"engine", "shell"},
    "cli": {"engine", "shell", "cli"},
    "mcp_server": {"engine", "shell", "mcp_server"},
    "tui": {"engine", "shell", "tui"},
    "program": {"engine", "shell", "cli", "mcp_server", "tui", "program"},
}


def test_front_ends_never_import_each_other() -> None:
    import ast
    from pathlib import Path

    repo = Path(engine.__file__).resolve().parent.parent
    offenders = []
    for package, allowed in ALLOWED.items():
        files = sorted((repo / package).rglob("*.py"))
        assert files, package
        for path in files:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                modules: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                for name in modules:
                    parts = name.split(".")
                    if parts[0] == "clawmem" and len(parts) > 1 and parts[1] in ALLOWED and parts[1] not in allowed:
                        offenders.append(f"{path.relative_to(repo)}:{node.lineno} imports {name}")
    assert offenders == []
