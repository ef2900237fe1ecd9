"""Fixtures of the CLI tests beyond tests/conftest.py."""

from tests.openclaw_fixture import openclaw_home, openclaw_writer

__all__ = ["openclaw_home", "openclaw_writer"]
