"""A loopback OpenAI-compatible ``/v1/embeddings`` server over clawmem's embedding provider.

It lets the real OpenClaw (provider ``openai-compatible``) embed with exactly the vectors
clawmem computes: the same GGUF, the same windowing and normalisation, and the same e5
prefixes. OpenClaw sends ``input_type`` per request (configured as ``queryInputType: "query"``
and ``documentInputType: "passage"``); ``query`` maps to ``embed_query``, anything else to
``embed_passages``. It binds 127.0.0.1 only and is meant for benchmarks, not for use.

Usage (standalone): python bench/oc_embed_server.py [--port 8765] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clawmem.engine.embed.provider import EmbeddingProvider  # noqa: E402


class EmbedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: EmbeddingProvider, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.provider = provider
        self.counts: Counter[str] = Counter()  # input_type -> texts embedded
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def start(self) -> EmbedServer:
        self.thread = threading.Thread(target=self.serve_forever, name="oc-embed-server", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: EmbedServer

    def log_message(self, format: str, *args: object) -> None:
        return None

    def _send(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = getattr(self.server.provider, "model", "local")
            self._send(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._send(404, {"error": {"message": "not found"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            raw = body.get("input")
            texts = [raw] if isinstance(raw, str) else list(raw or [])
            if not texts or not all(isinstance(t, str) for t in texts):
                raise ValueError("input must be a string or a list of strings")
            kind = str(body.get("input_type") or "passage")
            provider = self.server.provider
            query = kind == "query"
            vectors = [provider.embed_query(t) for t in texts] if query else provider.embed_passages(texts)
            self.server.counts[kind] += len(texts)
        except (ValueError, TypeError, json.JSONDecodeError) as exc:
            self._send(400, {"error": {"message": str(exc)}})
            return
        data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]} for i, v in enumerate(vectors)]
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or getattr(provider, "model", "local"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            },
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from clawmem.engine.embed.default_model import ensure_default_model
    from clawmem.engine.embed.llama_provider import LlamaEmbeddingProvider

    models = Path(os.environ.get("CLAWMEM_MODELS_DIR") or ROOT / ".cache" / "models")
    provider = LlamaEmbeddingProvider(ensure_default_model(models), n_threads=args.threads)
    server = EmbedServer(provider, args.port)
    print(f"serving {provider.model} on http://127.0.0.1:{server.port}/v1/embeddings", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
