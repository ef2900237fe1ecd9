"""The embedding pass's estimate of its time left (engine/index/time_left.py). The clock is
injected so the test decides how fast the work goes."""

from __future__ import annotations

import pytest
from clawmem.engine.index.time_left import TimeLeft, time_left_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_estimate_before_a_pace_is_measured_then_both_passes_counted() -> None:
    clock = Clock()
    left = TimeLeft(chunk_chars=10_000, line_chars=6_000, clock=clock)
    left.start("embed")
    clock.now += 1
    left.done("embed", 1_000)
    assert left.seconds() is None  # one second of work says little
    clock.now += 3
    left.done("embed", 3_000)  # 1,000 chars/s
    # 6,000 chunk chars and 6,000 line chars left, lines at the chunk pace until measured
    assert left.seconds() == pytest.approx(12.0)
    clock.now += 6
    left.done("embed", 6_000)
    left.start("lines")
    clock.now += 4
    left.done("lines", 4_000)  # lines go at 1,000 chars/s too … now measured on their own
    assert left.seconds() == pytest.approx(2.0)


def test_the_line_pace_of_a_sample_counts_until_the_line_pass_has_its_own() -> None:
    clock = Clock()
    left = TimeLeft(chunk_chars=10_000, line_chars=6_000, clock=clock)
    left.prior("lines", 1_500, 0.5)  # the sample: 3,000 chars/s, three times the chunk pace below
    left.start("embed")
    clock.now += 4
    left.done("embed", 4_000)  # 1,000 chars/s
    assert left.seconds() == pytest.approx(6.0 + 2.0)  # 6,000 chunk chars at 1,000/s, 6,000 line chars at 3,000/s
    clock.now += 6
    left.done("embed", 6_000)
    left.start("lines")
    clock.now += 1
    left.done("lines", 2_000)
    assert left.seconds() == pytest.approx(4_000 / 3_000)  # one second of lines: still the sample's pace
    clock.now += 3
    left.done("lines", 2_000)  # 1,000 chars/s over the phase's own four seconds: that now
    assert left.seconds() == pytest.approx(2.0)
    left.prior("lines", 0, 0.0)  # a sample cut short gives no pace and changes nothing
    assert left.seconds() == pytest.approx(2.0)


def test_a_sample_of_another_phase_does_not_count_as_this_ones_time() -> None:
    clock = Clock()
    left = TimeLeft(chunk_chars=10_000, line_chars=0, clock=clock)
    left.start("embed")
    clock.now += 4
    left.done("embed", 4_000)  # 1,000 chars/s
    clock.now += 2  # two seconds of a line sample
    left.exclude("embed", 2.0)
    clock.now += 1
    left.done("embed", 1_000)
    assert left.pace("embed") == pytest.approx(1_000)  # not 5,000 chars in 7 s


def test_the_pace_follows_the_last_minute() -> None:
    clock = Clock()
    left = TimeLeft(chunk_chars=1_000_000, line_chars=0, clock=clock)
    left.start("embed")
    for _ in range(120):  # two minutes at 100 chars/s
        clock.now += 1
        left.done("embed", 100)
    for _ in range(90):  # then a core comes free: 200 chars/s for a minute and a half
        clock.now += 1
        left.done("embed", 200)
    assert left.pace("embed") == pytest.approx(200, rel=0.05)


def test_the_words() -> None:
    assert time_left_text(None) == ""
    assert time_left_text(12) == "less than a minute left"
    assert time_left_text(150) == "about 2 min left"
    assert time_left_text(60 * 100) == "about 1.7 h left"
    assert time_left_text(3600 * 30) == "about 30 h left"
