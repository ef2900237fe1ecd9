"""engine/kinds.py: the closed vocabularies, and reading them back from the store."""

from __future__ import annotations

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.kinds import INTENT_STATUSES, ORIGIN_CLASSES, narrow
from clawmem.engine.recall import TRUST_ORDER


def test_a_known_value_comes_back_as_itself() -> None:
    assert narrow("armed", INTENT_STATUSES, "intent status") == "armed"


def test_an_unknown_value_in_the_database_is_one_clear_line() -> None:
    with pytest.raises(ClawmemError) as err:
        narrow("exploded", INTENT_STATUSES, "intent status")
    message = str(err.value)
    assert "\n" not in message
    assert "'exploded'" in message and "armed" in message


def test_trust_order_is_the_origin_classes_most_trusted_first() -> None:
    assert TRUST_ORDER == ORIGIN_CLASSES == ("owner", "agent", "system", "untrusted")
