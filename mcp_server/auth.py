"""The HTTP transport's bearer token: loopback by default, a token required anywhere else.

``clawmem mcp --http`` binds 127.0.0.1 unless ``--host`` says otherwise. A host that is not a
loopback address is refused unless a token is configured (``--token`` or ``$CLAWMEM_MCP_TOKEN``):
anyone on the network could otherwise read and write the agent's memory. With a token every
request must carry ``Authorization: Bearer <token>``; one without it (or with another) gets 401
before it reaches the MCP session. On loopback the token is optional and checked when given.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from typing import Any

from clawmem.engine.errors import ClawmemError

TOKEN_ENV = "CLAWMEM_MCP_TOKEN"
MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name (or 0.0.0.0-style wildcard spelled otherwise): not provably local


def resolve_token(flag: str | None) -> tuple[str | None, str]:
    """The configured token and where it came from ("--token", "$CLAWMEM_MCP_TOKEN" or "none")."""
    if flag is not None:
        if not flag.strip():
            raise ClawmemError("--token is empty")
        return flag.strip(), "--token"
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        return env, f"${TOKEN_ENV}"
    return None, "none"


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve a non-loopback host without a token, and a token too short to be one."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ClawmemError(f"the MCP token must be at least {MIN_TOKEN_CHARS} characters (got {len(token)})")
    if not is_loopback(host) and token is None:
        raise ClawmemError(
            f"refusing to serve MCP on {host}, which is not a loopback address, without a token: "
            f"pass --token TOKEN or set ${TOKEN_ENV} (every request then needs 'Authorization: Bearer TOKEN')"
        )


class BearerTokenMiddleware:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":  # lifespan events pass through
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = value
                break
        scheme, _, credential = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), self._token):
            body = json.dumps({"error": "unauthorized", "error_description": "missing or wrong bearer token"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="clawmem"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
