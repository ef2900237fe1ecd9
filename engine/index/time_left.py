"""How long an embedding pass has left: the text still to embed over the pace measured so far.

The unit is characters, not chunks: a 400-token chunk and a one-line chunk cost the model very
different times, and the line pass that follows the chunk pass is counted from the start (the
lines of every chunk still waiting, and of the chunks already embedded without line vectors), so
the estimate is for the whole pass, not just its current phase. Each phase keeps its own pace
(lines pack many to a decode and run faster per character, bench/RESULTS.md §3). Until the line
pass has its own, its pace is that of a sample of its lines the pass embeds early in the chunk
pass (engine/index/line_evidence.py ``measure_line_pace``), or the chunk pace when there was none.
The pace is measured over the last WINDOW_S seconds, so a change of thread count
(engine/index/thread_budget.py) shows within a minute. No estimate is given before
MIN_MEASURED_S of work: a guess from the first decode would be wrong by a lot.
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
        self._prior: dict[str, float] = {}  # phase -> characters per second of a sample, measured before it

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

    def prior(self, phase: str, chars: int, seconds: float) -> None:
        """A pace for ``phase`` measured on a sample before the phase starts (its own pace, once
        measured, replaces it)."""
        if chars > 0 and seconds > 0:
            self._prior[phase] = chars / seconds

    def exclude(self, phase: str, seconds: float) -> None:
        """The last ``seconds`` were not ``phase``'s work (a sample of another phase ran): its
        pace is measured as if they had not passed."""
        samples = self._samples[phase]
        if not samples or seconds <= 0:
            return
        moved = [(t + seconds, c) for t, c in samples]  # every sample later by the gap: the next one closes it
        samples.clear()
        samples.extend(moved)
        if phase in self._phase_started:
            self._phase_started[phase] += seconds

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
        line_pace = self.pace("lines") or self._prior.get("lines") or chunk_pace
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
