"""``clawmem mcp --http``: the SDK's streamable HTTP transport on 127.0.0.1, the bearer token, and the
refusal to serve a non-loopback host without one."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawmem.program.main import main

from tests.mcp.conftest import error_text, http_client, http_server, keyword_home, raw_post, structured

TOKEN = "s3cret-token-for-the-tests"


async def test_http_without_token_on_loopback(home: Path, workspace: Path) -> None:
    keyword_home(home)
    with http_server(home, workspace) as (url, _):
        async with http_client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_search", "memory_append"} <= names
            hits = structured(await client.call_tool("memory_search", {"query": "PostgreSQL billing"}))["results"]
            assert hits and "PostgreSQL" in hits[0]["snippet"]
            assert "refused" in error_text(await client.call_tool("memory_get", {"path": "../secrets.md"}))


async def test_http_token_refused_and_accepted(home: Path, workspace: Path) -> None:
    keyword_home(home)
    with http_server(home, workspace, "--token", TOKEN) as (url, _):
        assert raw_post(url).status_code == 401
        wrong = raw_post(url, "not-the-token-at-all")
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        with pytest.raises(Exception):  # noqa: B017 — the SDK client without the token cannot connect
            async with http_client(url) as client:
                await client.list_tools()
        async with http_client(url, TOKEN) as client:
            hits = structured(await client.call_tool("memory_search", {"query": "杭州 预算"}))["results"]
            assert hits and hits[0]["citation"].startswith("MEMORY.md#")
            added = structured(await client.call_tool("memory_append", {"text": "- Token-protected note."}))
            assert added["originClass"] == "agent"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.com"])
def test_non_loopback_host_needs_a_token(
    host: str, home: Path, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAWMEM_MCP_TOKEN", raising=False)
    keyword_home(home)
    code = main(["--home", str(home), "--workspace", str(workspace), "mcp", "--http", "--host", host])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert f"refusing to serve MCP on {host}" in err and "--token" in err and "$CLAWMEM_MCP_TOKEN" in err


def test_short_token_and_stdio_token_are_refused(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keyword_home(home)
    flags = ["--home", str(home), "--workspace", str(workspace), "mcp"]
    assert main([*flags, "--http", "--token", "short"]) == 1
    assert "at least 16 characters" in capsys.readouterr().err
    assert main([*flags, "--token", TOKEN]) == 1
    assert "--token only applies to --http" in capsys.readouterr().err
