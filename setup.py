"""Install the repository's top-level folders as `clawmem.<folder>` (`engine/` as `clawmem.engine`
and so on), so the distribution claims no generic top-level import names: the engine, what the
front ends share (`shell`), the three front ends (`cli`, `mcp_server`, `tui`) and the program that
starts them (`program`). The MCP server's folder is not `mcp`, which would shadow the MCP SDK.

Everything else about the package is in pyproject.toml; only the package list is computed here,
because setuptools' declarative `packages.find` cannot prefix the names it finds.
"""

from setuptools import find_packages, setup

FOLDERS = ("engine", "shell", "cli", "mcp_server", "tui", "program")
found = find_packages(include=[f"{f}{tail}" for f in FOLDERS for tail in ("", ".*")])
setup(
    packages=[f"clawmem.{name}" for name in found],
    package_dir={f"clawmem.{f}": f for f in FOLDERS},
)
