"""`lawindex serve`: the retrieval service the TypeScript pipeline calls instead of its in-process bm25.

An ASGI app (FastAPI on uvicorn) over the CLI's own engine, `indexer.service.engines.ClusterEngine`: one
engine per worker process, shared by every request, so each concrete index's statistics are fetched once
and a reload is seen by the next request (the engine follows the alias; never a mix). The engine is the
synchronous one, run in the worker's thread pool, not an async rewrite of it: it is the exact engine the
CLI and its tests use, and with its window search on the light path (`opensearch.cluster.fast_search`) the
sync engine in a pool is the fastest transport measured (benchmarks/serve.py; its figures in
benchmarks/RESULTS.md). An async engine would also be a second copy of the exact ranking to keep equal to the first.

Every answer is the CLI's `--json` object, serialised by the same calls (`indexer.service.output.answer_json`
for an answer, `indexer.service.output.dumps` for the rest), so the bytes are the same; every refusal is
`{"error": ..., "hint": ...}` with the CLI's own message, and no traceback ever reaches a response.

Long: the HTTP app and its fast ask path, which must stay byte-equal to the app's own path beside it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from types import FrameType
from typing import Annotated, Any

from fastapi import Body, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from indexer.errors import (
    BadInput,
    ClusterRefused,
    LawindexError,
    NoIndex,
    NoMeaning,
    NotFound,
    TimedOut,
    Unreachable,
)
from indexer.opensearch.cluster.connection import Connection, errors_translated
from indexer.retrieval.answers import (
    MEANING_WEIGHT,
    RETRIEVED_LAWS,
    RRF_K,
    RRF_K_MAX,
    WORDS_WEIGHT,
    Answer,
    check_fusion,
)
from indexer.retrieval.corpus import STATES, state_code
from indexer.service.access_log import Observing, observed
from indexer.service.engines import MAX_LIMIT, MAX_QUESTION_CHARS, ClusterEngine, check_question
from indexer.service.limits import PROTOCOL, InFlight, Limits, configure, open_files_for
from indexer.service.metrics import CURRENT, MULTIPROCESS, Record
from indexer.service.output import (
    WAY_DESCRIPTION,
    AnswerOut,
    BatchIn,
    BatchOut,
    ErrorOut,
    FamilyOut,
    HealthOut,
    Law,
    QuestionErrorOut,
    ReadyOut,
    StateOut,
    StatesOut,
    Way,
    answer_json,
    dumps,
    law_obj,
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8077
# A batch of 1,000 questions of 2,000 characters is under 2 MiB; a pipeline sends a handful. Past this a
# body is refused (413) before it is parsed, so a client cannot make a worker hold gigabytes.
MAX_BODY_BYTES = 1024 * 1024
# Seconds a client is told to wait when OpenSearch does not answer (503): a node restart takes longer.
RETRY_AFTER = 5
# The settings a worker process reads when uvicorn starts several (`--workers N` imports the app anew).
SETTINGS_VARIABLE = "LAWINDEX_SERVE_SETTINGS"

JSON = "application/json"
JSON_BYTES = JSON.encode()


@dataclass(frozen=True)
class Refusal(Exception):
    """An error as the service answers it: the status and the CLI's message."""

    status: int
    body: ErrorOut


def status_of(error: LawindexError) -> int:
    """The HTTP status of a library error: 400 bad input, 404 nothing there, 503 no answer, 504 too slow,
    502 a refusal (credentials, a rejected request, TLS)."""
    from opensearchpy import exceptions as os_errors

    # What the library caught, for the errors it raised from it (`raise ... from None` keeps the context):
    # a missing alias behind "no index", a timeout behind "did not answer", a certificate behind TLS.
    cause = error.__context__
    if isinstance(error, NotFound | NoIndex):
        return 404
    if isinstance(error, BadInput):
        return 400
    if isinstance(error, Unreachable):
        if isinstance(error, TimedOut) or isinstance(cause, os_errors.ConnectionTimeout):
            return 504
        if isinstance(cause, os_errors.SSLError):
            return 502
        return 503
    if isinstance(error, NoMeaning):
        return 501  # --by meaning or hybrid where the cluster or the index has no vectors
    if isinstance(error, ClusterRefused):
        return 404 if isinstance(cause, os_errors.NotFoundError) else 502
    return 500


def _internal(error: Exception) -> ErrorOut:
    return ErrorOut(error=f"internal error: {type(error).__name__}", hint="see the server's log")


def _json(obj: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(obj).encode("utf-8"), status_code=status, media_type=JSON, headers=headers)


def _error(status: int, body: ErrorOut) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER)} if status == 503 else None
    return _json(body.json_obj(), status, headers)


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "bad input: not a state code, a question too long, a bad limit"},
    404: {"model": ErrorOut, "description": "no index for the state, or no such law or family"},
    413: {"model": ErrorOut, "description": "a request body over 1 MiB"},
    502: {"model": ErrorOut, "description": "OpenSearch refused the request (credentials, TLS, a rejection)"},
    503: {"model": ErrorOut, "description": "OpenSearch did not answer; retry after Retry-After seconds"},
    504: {"model": ErrorOut, "description": "OpenSearch did not answer within the timeout"},
    501: {
        "model": ErrorOut,
        "description": "by=meaning or hybrid where the cluster has no k-NN or the index no vectors",
    },
}
_READY_ERRORS: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorOut, "description": "OpenSearch does not answer, or no state is loaded"},
    502: _ERRORS[502],
    504: _ERRORS[504],
}

# The schema lists the codes (a client and a fuzzer learn them from it); the check, and its message, is the
# CLI's own (indexer.retrieval.corpus.state_code), which also takes a code in lower case.
State = Annotated[
    str,
    Path(
        description="the state's USPS code, like TX",
        examples=["TX"],
        json_schema_extra={"enum": sorted(STATES)},
    ),
]


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413 before the app reads any of it."""

    def __init__(self, app: Callable[..., Awaitable[None]], limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
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

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Callable[[MutableMapping[str, Any]], Awaitable[None]]) -> None:
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


_ASK_PATH = re.compile(r"/v1/states/([^/]+)/ask")
_LIMIT = re.compile(r"[0-9]{1,3}")
_FASTAPI_PARAMS = frozenset(("by", "rrf_k", "words_weight", "meaning_weight"))  # asked by meaning or hybrid


class FastAsk:
    """ASGI: `GET /v1/states/{state}/ask` with plain parameters answered without FastAPI's machinery.

    The hot path of a pipeline that asks several times a question. Profiled (py-spy, one client), FastAPI's
    routing, parameter parsing and middleware took twice the CPU of the engine's own Python work per
    question, on the event loop that every request shares. This answers the same request the same way (the
    same engine call, in a thread pool, the same bytes, the same errors through `status_of`);
    anything unusual (a parameter given twice, a limit or explain FastAPI would have to parse) goes on to
    the FastAPI route, which stays the documented one and answers it as before.
    """

    def __init__(self, app: FastAPI) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.app = app
        self.engine: ClusterEngine = app.state.engine
        # Its own pool, handed work by the event loop directly: anyio's `to_thread.run_sync` (what FastAPI
        # uses) spent more of the loop's time per question, in its capacity limiter and cancel scopes, than
        # parsing the request did (py-spy). As many threads as anyio's default, so as many questions at once.
        self.pool = ThreadPoolExecutor(max_workers=40, thread_name_prefix="lawindex-ask")

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
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

    def _plain(self, scope: MutableMapping[str, Any]) -> tuple[str, str, int, bool] | None:
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
            answer = self.engine.ask(state, question, limit)
            parts = self.engine.explain(answer) if explain else None
            status, text = 200, answer_json(answer, parts)
            if record is not None:
                record.answered(answer)
        except LawindexError as error:
            status, text = status_of(error), dumps(ErrorOut.of(error).json_obj())
        except Exception as error:  # a bug: as the app's own catch-all says it, the traceback to the log only
            logging.getLogger("uvicorn.error").exception("lawindex serve: %s %r", state, question)
            status, text = 500, dumps(_internal(error).json_obj())
        finally:
            CURRENT.reset(token)
        loop.call_soon_threadsafe(_settle, answered, (status, text.encode("utf-8")))


def _settle(future: asyncio.Future[tuple[int, bytes]], result: tuple[int, bytes]) -> None:
    if not future.done():  # a client that went away cancelled it
        future.set_result(result)


def create_app(connection: Connection) -> FastAPI:
    """The service over `connection`: one engine, shared by every request of this process."""
    engine = ClusterEngine(connection)
    app = FastAPI(
        title="lawindex",
        summary="A state's road laws that best answer a question, ranked exactly as the spec's bm25 ranks them.",
        version=_version(),
    )
    app.state.engine = engine

    schema_of = app.openapi

    def openapi() -> dict[str, Any]:
        # FastAPI documents a 422 for every route with parameters; this service answers bad input with 400
        # and {"error", "hint"} (the handler below), so the schema says that and nothing else.
        if app.openapi_schema is None:
            schema = schema_of()
            for operations in schema["paths"].values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            for name in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(name, None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(LawindexError)
    async def lawindex_error(_: Request, error: LawindexError) -> Response:
        return _error(status_of(error), ErrorOut.of(error))

    @app.exception_handler(Refusal)
    async def refusal(_: Request, error: Refusal) -> Response:
        return _error(error.status, error.body)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, error: RequestValidationError) -> Response:
        return _error(400, ErrorOut(error=_validation_message(error), hint="see /docs for the parameters"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        message = (
            f"no such endpoint: {request.url.path}"
            if error.status_code == 404
            else f"{request.method} {request.url.path}: {error.detail}"
        )
        return _error(error.status_code, ErrorOut(error=message, hint="see /docs for the endpoints"))

    @app.exception_handler(Exception)
    async def bug(_: Request, error: Exception) -> Response:
        # A bug in lawindex: said so in one line, the traceback only in the server's log.
        return _error(500, _internal(error))

    @app.get("/healthz", response_model=HealthOut, summary="The process answers")
    async def healthz() -> Response:
        return _json(HealthOut().model_dump())

    @app.get(
        "/readyz", response_model=ReadyOut, responses=_READY_ERRORS, summary="OpenSearch answers, a state is loaded"
    )
    def readyz() -> Response:
        served = _served_states(engine, connection)
        if not served:
            raise Refusal(
                503, ErrorOut(error="no state is loaded yet", hint="load one with `lawindex load corpora --state TX`")
            )
        return _json(ReadyOut(states=len(served)).model_dump())

    @app.get("/v1/states", response_model=StatesOut, responses=_ERRORS, summary="Each loaded state")
    def states() -> Response:
        from indexer.opensearch.read.status import status

        rows = [StateOut.of(row) for row in status(connection)]
        return _json(StatesOut(states=rows).json_obj())

    @app.get(
        "/v1/states/{state}/ask",
        response_model=AnswerOut,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="The laws that best answer a question: what `lawindex ask --json` prints",
    )
    def ask(
        state: State,
        q: Annotated[
            str,
            Query(
                description=f"the question, at most {MAX_QUESTION_CHARS:,} characters",
                examples=["how far from a fire hydrant can i park"],
                json_schema_extra={"maxLength": MAX_QUESTION_CHARS},
            ),
        ],
        limit: Annotated[
            int,
            Query(description="how many laws at most", json_schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        ] = RETRIEVED_LAWS,
        explain: Annotated[
            bool, Query(description="each word's part of each score (and by meaning or hybrid its cosine)")
        ] = False,
        by: Annotated[Way, Query(description=WAY_DESCRIPTION)] = "words",
        rrf_k: Annotated[
            int,
            Query(
                description="the k of the fusion (by=hybrid)",
                json_schema_extra={"minimum": 1, "maximum": RRF_K_MAX},
            ),
        ] = RRF_K,
        words_weight: Annotated[
            float,
            Query(
                description="the words weight of the fusion (by=hybrid); the two weights not both 0",
                json_schema_extra={"minimum": 0},
            ),
        ] = WORDS_WEIGHT,
        meaning_weight: Annotated[
            float,
            Query(
                description="the meaning weight of the fusion (by=hybrid); the two weights not both 0",
                json_schema_extra={"minimum": 0},
            ),
        ] = MEANING_WEIGHT,
    ) -> Response:
        check_fusion(rrf_k, words_weight, meaning_weight)
        answer = engine.ask(state, q, limit, by, rrf_k, words_weight, meaning_weight)
        parts = engine.explain(answer) if explain else None
        _answered(answer)
        return Response(answer_json(answer, parts).encode("utf-8"), media_type=JSON)

    @app.post(
        "/v1/states/{state}/ask",
        response_model=BatchOut,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="Several questions, answered in order; a question that fails is an error in its place",
    )
    def ask_many(state: State, batch: Annotated[BatchIn, Body()]) -> Response:
        code = state_code(state)
        check_question("", batch.limit)
        record = CURRENT.get()
        if record is not None:
            record.way = batch.by
        # Each element's JSON text, as `dumps({"answers": [...]})` would write it.
        answers: list[str] = []
        for question in batch.questions:
            try:
                answer = engine.ask(
                    code, question, batch.limit, batch.by, batch.rrf_k, batch.words_weight, batch.meaning_weight
                )
                parts = engine.explain(answer) if batch.explain else None
            except LawindexError as error:
                answers.append(
                    dumps(
                        QuestionErrorOut(
                            question=question, error=error.message, hint=error.hint, status=status_of(error)
                        ).json_obj()
                    )
                )
                continue
            _answered(answer)
            answers.append(answer_json(answer, parts))
        return Response(f'{{"answers": [{", ".join(answers)}]}}'.encode(), media_type=JSON)

    @app.get(
        "/v1/states/{state}/families/{family}",
        response_model=FamilyOut,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="The process rows of one family, in corpus order",
    )
    def family(state: State, family: Annotated[str, Path(examples=["permit-holding-period"])]) -> Response:
        code = state_code(state)
        rows = engine.family(code, family)
        if not rows:
            raise NotFound(f"{code} has no family {family!r}")
        return _json(FamilyOut(state=code, family=family, laws=rows).json_obj())

    @app.get(
        "/v1/states/{state}/laws/{law_id:path}",
        response_model=Law,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="One law by its id: what `lawindex get --json` prints",
    )
    def law(state: State, law_id: Annotated[str, Path(examples=["TX-S01"])]) -> Response:
        return _law(state, law_id)

    @app.get(
        "/v1/states/{state}/laws",
        response_model=Law,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="One law by its id, as ?id=: any id, `..` and `.` too, which a URL's path cannot carry",
    )
    def law_by_query(
        state: State, law_id: Annotated[str, Query(alias="id", description="the law's id", examples=["TX-S01"])]
    ) -> Response:
        # A WHATWG URL (fetch, a browser) removes a path segment `..` or `.`, and `%2E%2E` with it: the TypeScript
        # client asked /v1/states/TX/laws/.. and got /v1/states/TX/. A query string is never normalised.
        return _law(state, law_id)

    def _law(state: str, law_id: str) -> Response:
        code = state_code(state)
        try:
            found = engine.get(code, law_id)
        except BadInput as error:
            # The state code is valid (checked above), so the engine's only bad input left is the id.
            raise NotFound(error.message, error.hint) from None
        return _json(law_obj(found))

    return app


def _answered(answer: Answer) -> None:
    """The answer's path and windows, for the request's metrics and log line (indexer.service.access_log)."""
    record = CURRENT.get()
    if record is not None:
        record.answered(answer)


def _served_states(engine: ClusterEngine, connection: Connection) -> list[str]:
    """The states served under this namespace's aliases (one request: cheap enough for a probe)."""
    namespace = connection.namespace
    with errors_translated(connection):
        found = engine.client.indices.get_alias(index=f"{namespace}-*", ignore_unavailable=True, allow_no_indices=True)
    served = re.compile(re.escape(namespace) + r"-([a-z]{2})")
    return sorted({alias for body in found.values() for alias in body.get("aliases", {}) if served.fullmatch(alias)})


def _validation_message(error: RequestValidationError) -> str:
    """FastAPI's first complaint as one line: where (`query parameter 'limit'`) and what."""
    problems = error.errors()
    if not problems:
        return "bad request"
    first = problems[0]
    where = [str(part) for part in first.get("loc", ())]
    places = {"query": "query parameter", "path": "path parameter", "body": "body"}
    place = places.get(where[0], where[0]) if where else ""
    name = ".".join(where[1:])
    text = str(first.get("msg", "invalid"))
    return f"{place} {name!r}: {text}" if name else f"{place}: {text}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lawindex")
    except PackageNotFoundError:
        return "0"


def app_from_environment() -> Any:
    """The app for a uvicorn worker process (`--workers N`): settings from LAWINDEX_SERVE_SETTINGS."""
    settings = json.loads(os.environ.get(SETTINGS_VARIABLE, "{}"))
    connection = Connection.from_env(
        settings.get("url"),
        ca_certs=settings.get("ca_certs"),
        insecure=bool(settings.get("insecure", False)),
        timeout=settings.get("timeout"),
    )
    limits = Limits(**settings.get("limits", {}))
    configure(limits)
    return _service(connection, limits, Observing(**settings.get("observing", {})))


def _service(connection: Connection, limits: Limits, observing: Observing | None = None) -> Any:
    """The whole ASGI app of a worker: its metrics and access log (indexer.service.access_log), the body read
    (within its limit) before the request counts against the bound on requests in flight
    (indexer.service.limits.InFlight), then the fast ask path."""
    app = create_app(connection)
    in_flight = InFlight(FastAsk(app), limits.max_in_flight)
    return observed(
        BodyLimit(in_flight), observing or Observing(), lambda: app.state.engine.client, connection.namespace, in_flight
    )


def check_address(host: str, port: int) -> None:
    """Nothing, or BadInput when `host:port` cannot be listened on (taken, or not this machine's address):
    said in one line before uvicorn starts, where it would log the error and exit 1."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise BadInput(f"cannot listen on {host}:{port}: {error.strerror or error}", hint="check --host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            probe.bind(address)
        except OSError as error:
            raise BadInput(
                f"cannot listen on {host}:{port}: {error.strerror or error}",
                hint="choose another --port, or stop what listens there",
            ) from None


def _stopped(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM or SIGINT outside uvicorn's own handling: before it starts (nothing is in flight), or raised
    again by uvicorn once it has drained the requests in flight. Either way the stop is a clean one: exit 0."""
    raise SystemExit(0)


def serve(
    connection: Connection,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    workers: int = 1,
    settings: dict[str, Any] | None = None,
    limits: Limits | None = None,
    observing: Observing | None = None,
) -> None:
    """Run the service until SIGTERM or SIGINT, which stop new connections and let requests in flight finish.
    `limits`: how long a request may take to arrive, how many connections and requests (indexer.service.limits)."""
    import uvicorn

    check_address(host, port)
    limits = open_files_for(limits or Limits())
    configure(limits)
    common: dict[str, Any] = {
        # uvicorn's httptools protocol with the timeouts and bounds it lacks.
        "http": PROTOCOL,
        "host": host,
        "port": port,
        "access_log": False,
        "server_header": False,
        "log_level": "info",
        # Requests in flight get this long to finish after SIGTERM; a question takes milliseconds.
        "timeout_graceful_shutdown": 30,
    }
    if workers <= 1:
        # uvicorn drains on SIGTERM, then raises the signal again under the handler found at its start, so
        # that the process "dies of it" (exit -15). The drain is the whole of a graceful stop here: exit 0.
        # Not restored afterwards: a second SIGTERM while the process ends must not kill it either.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _stopped)
        uvicorn.run(_service(connection, limits, observing), **common)
        return
    observing = observing or Observing()
    os.environ[SETTINGS_VARIABLE] = json.dumps(
        {**(settings or {"url": connection.url}), "limits": limits.json_obj(), "observing": observing.json_obj()}
    )
    if not observing.metrics:
        uvicorn.run("indexer.service.serve:app_from_environment", factory=True, workers=workers, **common)
        return
    # Several workers count into files of one directory, which a scrape of any of them adds up
    # (prometheus-client's multiprocess mode, read by each worker at its import); made empty for this run.
    import shutil
    import tempfile

    counted = tempfile.mkdtemp(prefix="lawindex-metrics-")
    os.environ[MULTIPROCESS] = counted
    try:
        uvicorn.run("indexer.service.serve:app_from_environment", factory=True, workers=workers, **common)
    finally:
        shutil.rmtree(counted, ignore_errors=True)
