"""The workspace's own file names, defined once (docs/memory-core.md §1): the curated root files, the Dreaming
report and the diary folder. OpenClaw accepts the lower-case spellings too; the upper-case one
is what clawmem writes.
"""

from __future__ import annotations

USER_FILE = "USER.md"
MEMORY_FILE = "MEMORY.md"
DREAMS_FILE = "DREAMS.md"
DIARY_DIR = "memory"

MEMORY_FILES = (MEMORY_FILE, "memory.md")
"""The long-term memory file, either spelling: the one Dreaming and forget rewrite."""

CURATED_ROOT_FILES = (MEMORY_FILE, "memory.md", USER_FILE)
"""The curated files at the workspace's root: indexed one chunk per entry, loaded at /new."""

DREAMS_FILES = (DREAMS_FILE, "dreams.md")
