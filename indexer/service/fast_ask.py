"""The fast ask path: `GET /v1/states/{state}/ask` with plain parameters answered without FastAPI's machinery,
byte-equal to the documented route beside it (tests/integration/test_serve.py asks both)."""

from __future__ import annotations

import asyncio
import logging
import re

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from indexer.errors import LawindexError, http_status
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.retrieval.request import FUSION, RETRIEVED_LAWS, Request
from indexer.service.metrics import CURRENT, Record
from indexer.service.output import (
    ErrorOut,
    answer_json,
    dumps,
)
from indexer.service.responses import JSON_BYTES, RETRY_AFTER, internal_error

_ASK_PATH = re.compile(r"/v1/states/([^/]+)/ask")
_LIMIT = re.compile(r"[0-9]{1,3}")
_FASTAPI_PARAMS = frozenset(("by", *FUSION, "vector"))  # asked by meaning or hybrid (a vector: refused by words)


class FastAsk:
    """ASGI: `GET /v1/states/{state}/ask` with plain parameters answered without FastAPI's machinery.

    The hot path of a pipeline that asks several times a question. Profiled (py-spy, one client), FastAPI's
    routing, parameter parsing and middleware took twice the CPU of the engine's own Python work per
    question, on the event loop that every request shares. This answers the same request the same way (the
    same engine call, in a thread pool, the same bytes, the same errors through `http_status`);
    anything unusual (a parameter given twice, a limit or explain FastAPI would have to parse) goes on to
    the FastAPI route, which stays the documented one and answers it as before.
    """

    def __init__(self, app: FastAPI) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.app = app
        self.engine: OpenSearchEngine = app.state.engine
        # Its own pool, handed work by the event loop directly: anyio's `to_thread.run_sync` (what FastAPI
        # uses) spent more of the loop's time per question, in its capacity limiter and cancel scopes, than
        # parsing the request did (py-spy). As many threads as anyio's default, so as many questions at once.
        self.pool = ThreadPoolExecutor(max_workers=40, thread_name_prefix="lawindex-ask")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = self._plain(scope) if scope["type"] == "http" and scope["method"] == "GET" else None
        if asked is None:
            await self.app(scope, receive, send)
            return
        # The pool's thread answers the loop's future itself: one wake-up of the loop, without
        # run_in_executor's second future and the copying of its state (8% of the GIL's time at 8 clients).
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        self.pool.submit(self._answer, loop, answered, CURRENT.get(), *asked)
        status, body = await answered
        headers = [(b"content-type", JSON_BYTES), (b"content-length", str(len(body)).encode())]
        if status == 503:
            headers.append((b"retry-after", str(RETRY_AFTER).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _plain(self, scope: Scope) -> tuple[str, str, int, bool] | None:
        """(state, question, limit, explain) of a plain ask, or None for FastAPI to take it."""
        from urllib.parse import parse_qsl

        path = _ASK_PATH.fullmatch(scope["path"])
        if path is None:
            return None
        # As Starlette reads a query string, so the question is the same string either way.
        pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        given = dict(pairs)
        if len(given) != len(pairs) or "q" not in given or not _FASTAPI_PARAMS.isdisjoint(given):
            return None  # (by meaning or hybrid: FastAPI's path, which checks them)
        limit = given.get("limit", str(RETRIEVED_LAWS))
        explain = given.get("explain", "false")
        if not _LIMIT.fullmatch(limit) or explain not in ("true", "false"):
            return None
        return path.group(1), given["q"], int(limit), explain == "true"

    def _answer(
        self,
        loop: asyncio.AbstractEventLoop,
        answered: asyncio.Future[tuple[int, bytes]],
        record: Record | None,
        state: str,
        question: str,
        limit: int,
        explain: bool,
    ) -> None:
        """In a pool thread: the status and body of one question, handed to `answered` on the loop."""
        token = CURRENT.set(record)  # the request's OpenSearch time is added to it (indexer.service.metrics)
        try:
            answer = self.engine.ask(Request(state, question, limit=limit))
            parts = self.engine.explain(answer) if explain else None
            status, text = 200, answer_json(answer, parts)
            if record is not None:
                record.answered(answer)
        except LawindexError as error:
            status, text = http_status(error), dumps(ErrorOut.of(error).json_obj())
        except Exception as error:  # a bug: as the app's own catch-all says it, the traceback to the log only
            logging.getLogger("uvicorn.error").exception("lawindex serve: %s %r", state, question)
            status, text = 500, dumps(internal_error(error).json_obj())
        finally:
            CURRENT.reset(token)
        loop.call_soon_threadsafe(_settle, answered, (status, text.encode("utf-8")))


def _settle(future: asyncio.Future[tuple[int, bytes]], result: tuple[int, bytes]) -> None:
    if not future.done():  # a client that went away cancelled it
        future.set_result(result)
