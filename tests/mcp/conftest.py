"""Helpers for the MCP tests: a keyword-only home on a copy of the fixture workspace, the server as a
real subprocess (``clawmem … mcp``), and the SDK's own client over stdio or streamable HTTP."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from clawmem.engine.facade import MemoryEngine
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.server import build_server
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import NOW, make_settings

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
ENV = {"CLAWMEM_NOW": NOW, "CLAWMEM_TZ": "UTC", "CLAWMEM_THREADS": "1"}
TODAY = NOW[:10]


def keyword_home(home: Path) -> Path:
    """No model: search is keyword-only, as in the CLI tests (fast, and what the tests check is the door)."""
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    return home


def server_args(home: Path, workspace: Path, *extra: str) -> list[str]:
    return ["--home", str(home), "--workspace", str(workspace), *extra]


@asynccontextmanager
async def stdio_client(home: Path, workspace: Path, *extra: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=CLAWMEM, args=[*server_args(home, workspace), "mcp", *extra], env=ENV)
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


@asynccontextmanager
async def in_process_client(home: Path, workspace: Path, *, read_only: bool = False) -> AsyncIterator[Client]:
    """The server over an indexed keyword-only engine, and the SDK's client connected to it in
    process (it sends what JSON can carry, lone surrogates included, which stdio's parser drops)."""
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}))
    engine.sync()
    door = MemoryDoor(engine, watch=False)
    server = build_server(door, read_only=read_only)
    door.start()
    door.ready.wait(30)  # the start-up sync is done: every answer sees the same index
    try:
        async with Client(server) as client:
            yield client
    finally:
        door.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def http_server(home: Path, workspace: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    cmd = [CLAWMEM, *server_args(home, workspace), "mcp", "--http", "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, env={**os.environ, **ENV}, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"server exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("the HTTP server did not start within 60 s")
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@asynccontextmanager
async def http_client(url: str, token: str | None = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as client,
    ):
        yield client


def raw_post(url: str, token: str | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return httpx2.post(url, json=body, headers=headers, timeout=10)


def structured(result: Any) -> dict[str, Any]:
    """A tool's structured result, checked for the one naming convention (engine/json_form.py):
    no key the code named is snake_case (keys that are data, paths and the like, may be anything)."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    data = dict(result.structured_content)
    assert snake_keys(data) == []
    return data


SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")


def snake_keys(value: Any, where: str = "") -> list[str]:
    if isinstance(value, dict):
        own = [f"{where}.{k}" for k in value if SNAKE.match(str(k)) and "/" not in str(k)]
        return own + [w for k, v in value.items() for w in snake_keys(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [w for i, v in enumerate(value) for w in snake_keys(v, f"{where}[{i}]")]
    return []


def error_text(result: Any) -> str:
    assert result.is_error, result
    text = str(result.content[0].text)
    assert "\n" not in text and "Traceback" not in text, text
    return text
