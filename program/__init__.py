"""The ``clawmem`` program: one command with three front ends, started from here.

No command opens the Textual app (:mod:`clawmem.tui`), ``clawmem mcp`` serves the MCP server
(:mod:`clawmem.mcp_server`), and every other command is the CLI's (:mod:`clawmem.cli`). This is the
only module that knows all three; they share :mod:`clawmem.shell` and never import each other.
"""
