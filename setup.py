"""Install the repository's top-level `engine/` and `tui/` folders as `clawmem.engine` and
`clawmem.tui`, so the distribution claims no generic top-level import names.

Everything else about the package is in pyproject.toml; only the package list is computed here,
because setuptools' declarative `packages.find` cannot prefix the names it finds.
"""

from setuptools import find_packages, setup

FOLDERS = ("engine", "tui")
found = find_packages(include=[f"{f}{tail}" for f in FOLDERS for tail in ("", ".*")])
setup(
    packages=[f"clawmem.{name}" for name in found],
    package_dir={f"clawmem.{f}": f for f in FOLDERS},
)
