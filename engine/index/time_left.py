"""How long an embedding pass has left: the text still to embed over the pace measured so far.

The unit is characters, not chunks: a 400-token chunk and a one-line chunk cost the model very
different times, and the line pass that follows the chunk pass is counted from the start (the
lines of every chunk still waiting, and of the chunks already embedded without line vectors), so
the estimate is for the whole pass, not just its current phase. Each phase keeps its own pace
(lines pack many to a decode and run faster per character); the line pass is estimated at the
chunk pace until it has its own. The pace is measured over the last WINDOW_S seconds, so a
change of thread count (engine/index/thread_budget.py) shows within a minute. No estimate is
given before MIN_MEASURED_S of work: a guess from the first decode would be wrong by a lot.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 60.0
MIN_MEASURED_S = 3.0
PHASES = ("embed", "lines")


class TimeLeft:
    """Characters left per phase and the pace of each; ``seconds()`` is the estimate or None."""

    def __init__(self, chunk_chars: int, line_chars: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.left = {"embed": max(0, chunk_chars), "lines": max(0, line_chars)}
        self._samples: dict[str, deque[tuple[float, int]]] = {p: deque() for p in PHASES}
        self._measured = dict.fromkeys(PHASES, 0.0)
        self._phase_started: dict[str, float] = {}

    def start(self, phase: str) -> None:
        """The phase begins now (its pace is measured from here)."""
        now = self._clock()
        self._phase_started[phase] = now
        self._samples[phase].append((now, 0))

    def done(self, phase: str, chars: int) -> None:
        """``chars`` more characters of ``phase`` are embedded (or found in a cache)."""
        now = self._clock()
        samples = self._samples[phase]
        if not samples:
            self.start(phase)
        total = samples[-1][1] + chars
        samples.append((now, total))
        while len(samples) > 2 and now - samples[1][0] >= WINDOW_S:
            samples.popleft()
        self.left[phase] = max(0, self.left[phase] - chars)
        self._measured[phase] = now - self._phase_started.get(phase, now)

    def pace(self, phase: str) -> float | None:
        """Characters per second over the window, once MIN_MEASURED_S of the phase ran."""
        samples = self._samples[phase]
        if self._measured[phase] < MIN_MEASURED_S or len(samples) < 2:
            return None
        (t0, c0), (t1, c1) = samples[0], samples[-1]
        return (c1 - c0) / (t1 - t0) if t1 > t0 and c1 > c0 else None

    def seconds(self) -> float | None:
        """Seconds until both phases are done, or None while there is no honest pace yet."""
        chunk_pace = self.pace("embed")
        line_pace = self.pace("lines") or chunk_pace
        if self.left["embed"] and chunk_pace is None:
            return None
        if self.left["lines"] and line_pace is None:
            return None
        seconds = 0.0
        if self.left["embed"] and chunk_pace:
            seconds += self.left["embed"] / chunk_pace
        if self.left["lines"] and line_pace:
            seconds += self.left["lines"] / line_pace
        return seconds


def time_left_text(seconds: float | None) -> str:
    """ "about 4 min left" (rounded the way a person says it), or "" without an estimate."""
    if seconds is None:
        return ""
    if seconds < 45:
        return "less than a minute left"
    minutes = seconds / 60
    if minutes < 90:
        return f"about {max(1, round(minutes))} min left"
    hours = minutes / 60
    return f"about {hours:.1f} h left" if hours < 10 else f"about {round(hours)} h left"
