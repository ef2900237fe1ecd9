"""Who may become a Dreaming candidate (docs/memory-core.md §8 and OpenClaw's ``dreaming-consolidation-candidates``).

- Origin ``untrusted`` or ``system`` never promotes, on any path (ranking, light, REM, apply). The
  origin that counts is the least trusted of the entry's own and its file's: a daily note whose
  flush record is untrusted quarantines every entry from it (docs/memory-core.md §8, file level).
- Light and REM apply the same exclusions as Deep before they rank anything
  (:func:`phase_excluded`), so quarantined text never appears in DREAMS.md either.
- Consolidation takes only ``owner`` or ``agent`` origins; *session-derived* entries (the session
  corpus, ``sessions/…``) must also come from an ``interactive`` session. Entries from memory
  files (diaries) carry session kind ``unknown`` and stay eligible, as in OpenClaw.
"""

from __future__ import annotations

import re

BLOCKED_ORIGINS = ("untrusted", "system")
TRUSTED_ORIGINS = ("owner", "agent")
_SESSION_CORPUS = re.compile(r"(?:^|/)memory/\.dreams/session-corpus/")


def is_session_derived(path: str) -> bool:
    normalized = path.replace("\\", "/")
    return bool(_SESSION_CORPUS.search(normalized)) or normalized.startswith("sessions/")


def origin_blocked(origin_class: str) -> bool:
    return origin_class in BLOCKED_ORIGINS or origin_class not in (*TRUSTED_ORIGINS, *BLOCKED_ORIGINS)


def session_blocked(path: str, session_kind: str) -> bool:
    return is_session_derived(path) and session_kind != "interactive"


def consolidation_eligible(path: str, origin_class: str, session_kind: str) -> bool:
    return origin_class in TRUSTED_ORIGINS and not session_blocked(path, session_kind)


def phase_excluded(path: str, origin_class: str, session_kind: str, file_origin: str | None) -> bool:
    """Left out of Light and REM (and of Deep's ranking): a blocked origin — the entry's own or its
    file's, whichever is less trusted — or a session-derived entry from a non-interactive session."""
    from clawmem.engine.recall import least_trusted

    origin = least_trusted(origin_class, file_origin) if file_origin else origin_class
    return origin_blocked(origin) or session_blocked(path, session_kind)
