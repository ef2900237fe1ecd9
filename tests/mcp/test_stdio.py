"""``clawmem mcp`` over stdio, driven by the SDK's own client: tools, search, get, append, intents,
context, forget preview, one-line errors that write nothing, and read-only mode."""

from __future__ import annotations

import json
from pathlib import Path

from tests.mcp.conftest import TODAY, error_text, keyword_home, stdio_client, structured

WRITERS = {"memory_append", "intent_create", "intent_cancel", "supersede_propose"}
ALL = {
    "memory_search",
    "memory_get",
    "memory_append",
    "intent_create",
    "intent_list",
    "intent_match",
    "intent_cancel",
    "context_startup",
    "forget_preview",
    "supersede_propose",
}


def snapshot(workspace: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


async def test_one_server_searches_reads_and_writes(home: Path, workspace: Path) -> None:
    keyword_home(home)
    diary = workspace / "memory" / f"{TODAY}.md"
    async with stdio_client(home, workspace) as client:
        # --- the tools, their schemas and annotations
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == ALL
        for name, tool in listed.items():
            assert tool.description and tool.annotations is not None, name
            assert tool.annotations.read_only_hint is (name not in WRITERS | {"intent_match"}), name
            assert tool.annotations.open_world_hint is False
        assert listed["intent_cancel"].annotations.destructive_hint is True
        assert listed["memory_append"].annotations.destructive_hint is False
        assert "stays with the person" in (listed["forget_preview"].description or "")
        props = listed["memory_search"].input_schema["properties"]
        assert {"query", "maxResults", "minScore", "corpus", "project", "explain", "maxChars"} <= set(props)
        out_props = listed["memory_search"].output_schema["properties"]
        assert {"results", "omitted", "note"} <= set(out_props)
        assert listed["memory_get"].output_schema["required"] == ["path", "text", "nextFrom", "missing"]
        assert props["maxResults"].get("description")
        assert set(listed["memory_get"].input_schema["properties"]) == {"path", "from", "lines"}

        # --- search, Chinese and English
        zh_result = await client.call_tool("memory_search", {"query": "为什么没订湖景房"})
        zh = structured(zh_result)
        top = zh["results"][0]
        # lean by default: only what an agent acts on, and the text is the structured content's mirror
        assert set(top) == {"citation", "score", "snippet", "originClass", "why"}
        assert top["citation"].startswith("MEMORY.md#L") and "湖景房" in top["snippet"]
        assert top["originClass"] == "agent" and "keyword 1.00" in top["why"]
        assert [c.text for c in zh_result.content] == [json.dumps(zh, ensure_ascii=False, indent=2)]
        en = await client.call_tool("memory_search", {"query": "why did the staging deploy fail", "explain": True})
        data = structured(en)
        assert any(r["path"] == "memory/2026-08-20.md" for r in data["results"] + data["nearMisses"])
        first = (data["results"] or data["nearMisses"])[0]
        assert {"vectorRaw", "keyword", "decay", "importanceFactor", "legs", "why"} <= set(first["breakdown"])
        assert first["breakdown"]["why"].startswith("#1 ") and first["provenance"]["originClass"] == "agent"
        assert first["citation"] == f"{first['path']}#L{first['startLine']}-L{first['endLine']}"

        # --- get: slices, and escapes refused
        got = structured(await client.call_tool("memory_get", {"path": "MEMORY.md", "from": 3, "lines": 2}))
        assert got["text"].startswith("## 旅行") and got["nextFrom"] == 5
        for bad in ("../../etc/passwd", "/etc/passwd", "memory/../../x.md", "notes.txt"):
            assert "refused" in error_text(await client.call_tool("memory_get", {"path": bad})) or "only Markdown" in (
                error_text(await client.call_tool("memory_get", {"path": bad}))
            )
        assert "session transcript" in error_text(await client.call_tool("memory_get", {"path": "sessions/s1.jsonl"}))
        missing = structured(await client.call_tool("memory_get", {"path": "memory/2020-01-01.md"}))
        assert missing["missing"] is True and missing["text"] == ""

        # --- bad arguments: one line, nothing written
        before = snapshot(workspace)
        for tool, args, needle in (
            ("memory_search", {"query": "x", "maxResults": 500}, "maxResults must be between 1 and 200"),
            ("memory_search", {"query": "x", "max_results": 5}, "unknown argument max_results"),
            ("memory_search", {"query": "  "}, "query is empty"),
            ("memory_search", {"query": "x", "project": ["bad<key>"]}, "project"),
            ("memory_search", {"query": "x", "corpus": "wiki"}, "corpus"),
            ("memory_get", {"path": "MEMORY.md", "from": 0}, "from must be 1 or more"),
            ("memory_append", {"text": ""}, "text is empty"),
            ("memory_append", {"text": "- x", "origin": "owner"}, "origin"),
            ("memory_append", {"text": "- x", "session": "ghost"}, "ghost"),
            (
                "intent_create",
                {"description": "d", "keywords": "k", "channel": "c", "sender": "s", "maxFires": 0},
                "maxFires",
            ),
            ("intent_cancel", {"id": "nosuch"}, "nosuch"),
            ("forget_preview", {"session": "ghost"}, "no session matches ghost"),
            ("context_startup", {"kind": "party"}, "kind"),
        ):
            message = error_text(await client.call_tool(tool, args))
            assert message.startswith(f"{tool}: ") and needle in message, (tool, message)
            assert "--" not in message.split(":", 1)[1] or "session" in tool, message
        assert snapshot(workspace) == before

        # --- append, then search finds it with its provenance
        added = structured(await client.call_tool("memory_append", {"text": "- 用户最喜欢的茶是龙井 (Longjing tea)."}))
        assert added["path"] == f"memory/{TODAY}.md" and added["originClass"] == "agent"
        assert diary.read_text(encoding="utf-8").endswith("- 用户最喜欢的茶是龙井 (Longjing tea).\n")
        found = structured(await client.call_tool("memory_search", {"query": "Longjing tea"}))
        hit = found["results"][0]
        assert hit["citation"].startswith(f"memory/{TODAY}.md#L") and "龙井" in hit["snippet"]
        assert hit["originClass"] == "agent"
        zh_found = structured(await client.call_tool("memory_search", {"query": "龙井"}))
        assert zh_found["results"][0]["citation"].startswith(f"memory/{TODAY}.md#")

        # web-sourced text is untrusted: recorded so, and left out of results (a labelled near-miss)
        web = structured(
            await client.call_tool(
                "memory_append", {"text": "- Zephyrine hotel: 20% off this week.", "webSourced": True}
            )
        )
        assert web["originClass"] == "untrusted" and "web-sourced" in web["originReason"]
        lowered = structured(
            await client.call_tool("memory_append", {"text": "- Quillon rumour.", "origin": "untrusted"})
        )
        assert lowered["originClass"] == "untrusted"
        res = structured(await client.call_tool("memory_search", {"query": "Zephyrine hotel", "explain": True}))
        assert all("Zephyrine" not in r["snippet"] for r in res["results"])
        assert any(
            "Zephyrine" in r["snippet"] and r["provenance"]["originClass"] == "untrusted" for r in res["nearMisses"]
        )
        assert (workspace / "MEMORY.md").read_bytes() == before["MEMORY.md"]
        assert (workspace / "USER.md").read_bytes() == before["USER.md"]

        # --- intents, with the CLI's validation
        made = structured(
            await client.call_tool(
                "intent_create",
                {
                    "description": "提醒确认返程车票",
                    "keywords": ["杭州", "hangzhou"],
                    "channel": "telegram",
                    "sender": "u1",
                },
            )
        )["intent"]
        assert made["status"] == "armed" and made["keywords"] == ["杭州", "hangzhou"]
        listed_intents = structured(await client.call_tool("intent_list", {}))["intents"]
        assert [i["id"] for i in listed_intents] == [made["id"]]
        match = structured(
            await client.call_tool(
                "intent_match", {"message": "我们下周去杭州玩", "channel": "telegram", "sender": "u1"}
            )
        )
        assert match["fired"] == [made["id"]] and match["applied"] is False and "提醒确认返程车票" in match["injected"]
        cancelled = structured(await client.call_tool("intent_cancel", {"id": made["id"][:8]}))["intent"]
        assert cancelled["status"] == "cancelled"

        # --- what a new session loads, and the forget preview
        ctx = structured(await client.call_tool("context_startup", {}))
        paths = [f["path"] for f in ctx["files"] if f["loaded"]]
        assert "MEMORY.md" in paths and f"memory/{TODAY}.md" in paths
        assert all("cutLines" in f for f in ctx["files"])
        group = structured(await client.call_tool("context_startup", {"kind": "group"}))
        assert "MEMORY.md" not in [f["path"] for f in group["files"] if f["loaded"]]


async def test_read_only_lists_only_tools_that_write_nothing(home: Path, workspace: Path) -> None:
    keyword_home(home)
    before = snapshot(workspace)
    async with stdio_client(home, workspace, "--read-only") as client:
        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        assert names == ALL - WRITERS
        assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools)
        assert "apply" not in next(t for t in tools if t.name == "intent_match").input_schema["properties"]
        refused = await client.call_tool("memory_append", {"text": "- should not land"})
        assert refused.is_error and "memory_append" in refused.content[0].text
        assert structured(await client.call_tool("memory_search", {"query": "杭州"}))["results"]
    assert snapshot(workspace) == before
