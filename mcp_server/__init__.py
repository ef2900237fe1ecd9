"""``clawmem mcp``: the Model Context Protocol server, a door into the engine like the CLI.

``server.py`` builds the :class:`mcp.server.mcpserver.MCPServer` over one long-lived
:class:`~clawmem.engine.facade.MemoryEngine` (:class:`~clawmem.mcp_server.door.MemoryDoor` keeps its
index in sync); ``tools.py`` holds the tools — their schemas, annotations, the CLI's argument rules
and the shape of what they return; ``auth.py`` the bearer token of the HTTP transport.
"""
