"""`lawindex load` refuses a cluster outside the supported range before anything is written: the server here
answers `GET /` as OpenSearch 2.10.0 would (a node of 2.10 is outside the range, so lawindex cannot start one)
and records every request; after the refusal, none of them wrote."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_load_refuses_an_unsupported_cluster_before_writing(serving: Callable[[Any], Any]) -> None:
    seen: list[str] = []

    class Old(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            seen.append(f"{self.command} {self.path}")
            if self.command == "GET" and self.path.split("?")[0] == "/":
                body = {"name": "n", "cluster_name": "c", "tagline": "The OpenSearch Project: https://opensearch.org/",
                        "version": {"distribution": "opensearch", "number": "2.10.0"}}  # fmt: skip
                data, code = json.dumps(body).encode(), 200
            else:
                data, code = b'{"error": "not expected here"}', 500
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer

    server = serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Old))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    done = subprocess.run(
        [sys.executable, "-c", "from indexer.cli import main; main()", "load", str(ROOT / "corpora"), "--url", url],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 4, done
    assert "OpenSearch 2.10.0 is outside the versions lawindex supports (2.11.0 to 3.9.x)" in done.stderr
    assert "nothing was written" in done.stderr
    assert not [r for r in seen if not r.startswith(("GET ", "HEAD "))], seen
