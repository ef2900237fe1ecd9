"""The fuzzers' shared settings (issue "Nothing lost under faults"): hypothesis profiles and the
one check every target makes.

CI runs the ``ci`` profile: derandomized (the same examples on every run, so a red CI is
reproducible) and a modest number of examples per target. ``make soak`` (CLAWMEM_SOAK=1) runs
the ``soak`` profile: ten times the examples, drawn at random, so each soak explores new input.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("ci", max_examples=60, derandomize=True, **_COMMON)
settings.register_profile("soak", max_examples=600, derandomize=False, **_COMMON)
settings.load_profile("soak" if os.environ.get("CLAWMEM_SOAK") == "1" else "ci")
