"""The request body's limit: a body over MAX_BODY_BYTES gets 413 before the app reads any of it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.types import Message, Receive, Scope, Send

from indexer.service.output import (
    ErrorOut,
    dumps,
)
from indexer.service.responses import JSON

# A batch of 1,000 questions of 2,000 characters is under 2 MiB; a pipeline sends a handful. Past this a
# body is refused (413) before it is parsed, so a client cannot make a worker hold gigabytes.
MAX_BODY_BYTES = 1024 * 1024


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 before the app reads any of it."""

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        # A chunked body has no length to check first: read it here, at most `limit` bytes, then hand it on.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away (or its body was too slow): no one to answer, nothing to ask
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = ErrorOut(error=f"the request body is over {self.limit:,} bytes", hint="send fewer questions a request")
        payload = dumps(body.json_obj()).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", JSON.encode()), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})
