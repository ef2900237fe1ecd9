"""A real read-only file system for the fault harness: a command run in a private mount namespace
(``unshare -m``) where the given folders are bind-mounted onto themselves read-only, so every
write below them fails with EROFS as on a read-only disk — even for root, which the suite runs
as and which ignores permission bits. Nothing outside the namespace sees the mount, and it goes
away with the command. Where the kernel or the container forbids it (no CAP_SYS_ADMIN, no
user namespaces), ``available()`` says why and the read-only tests are skipped."""

from __future__ import annotations

import functools
import shlex
import subprocess
import tempfile
from pathlib import Path


def wrap(*folders: Path) -> tuple[str, ...]:
    """The command line prefix that runs a command with ``folders`` read-only."""
    mounts = " && ".join(
        f"mount --bind {shlex.quote(str(f))} {shlex.quote(str(f))} && "
        f"mount -o remount,bind,ro {shlex.quote(str(f))} {shlex.quote(str(f))}"
        for f in folders
    )
    return ("unshare", "-m", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"', "read-only")


@functools.cache
def available() -> str | None:
    """None when read-only mounts work here, else why not."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp)
        try:
            p = subprocess.run([*wrap(probe), "touch", str(probe / "x")], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"unshare cannot run: {exc}"
        if "Read-only file system" in p.stderr and not (probe / "x").exists():
            return None
        return f"a read-only bind mount in a private mount namespace is not allowed here: {p.stderr.strip()}"
