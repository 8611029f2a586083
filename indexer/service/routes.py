"""The service's routes: the FastAPI app over one engine, built from small named parts (the schema, the
refusals, the probes, the two asks, the lookups), each route answering what the CLI prints with `--json`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from fastapi import Body, FastAPI, Path, Query
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from indexer.errors import (
    BadInput,
    LawindexError,
    NotFound,
    http_status,
)
from indexer.opensearch.cluster.connection import Connection, errors_translated
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import STATES, state_code
from indexer.retrieval.request import FUSION, MAX_QUESTION_CHARS, Request, parameter
from indexer.service import page
from indexer.service.metrics import CURRENT
from indexer.service.output import (
    DESCRIPTIONS,
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
    answer_json,
    dumps,
    law_obj,
    schema_of,
)
from indexer.service.responses import JSON, Refusal, error_response, internal_error, json_response

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


def create_app(connection: Connection, views: Sequence[page.View] = ()) -> FastAPI:
    """The service over `connection`: one engine, shared by every request of this process; its routes in
    the order the schema lists them, then the page's (`views`: its views from above the service)."""
    engine = OpenSearchEngine(connection)
    app = FastAPI(
        title="lawindex",
        summary="A state's road laws that best answer a question, ranked exactly as the spec's bm25 ranks them.",
        version=_version(),
    )
    app.state.engine = engine
    _schema_without_422(app)
    _refusals(app)
    _probes(app, engine, connection)
    _ask_one(app, engine)
    _ask_many(app, engine)
    _lookups(app, engine)
    # The HTML page at `/`, over the same engine (indexer/service/page.py).
    page.install(app, engine, lambda: _served_states(engine, connection), views)
    return app


def _schema_without_422(app: FastAPI) -> None:
    """The schema says what the service answers: 400 with {error, hint}, never FastAPI's 422."""
    schema_of = app.openapi

    def openapi() -> dict[str, Any]:
        # FastAPI documents a 422 for every route with parameters; this service answers bad input with 400
        # and {"error", "hint"} (`_refusals`), so the schema says that and nothing else.
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


def _refusals(app: FastAPI) -> None:
    """Every error as one line of JSON: the library's, a refusal, bad parameters, no such route, a bug."""

    @app.exception_handler(LawindexError)
    async def lawindex_error(_: HttpRequest, error: LawindexError) -> Response:
        return error_response(http_status(error), ErrorOut.of(error))

    @app.exception_handler(Refusal)
    async def refusal(_: HttpRequest, error: Refusal) -> Response:
        return error_response(error.status, error.body)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: HttpRequest, error: RequestValidationError) -> Response:
        return error_response(400, ErrorOut(error=_validation_message(error), hint="see /docs for the parameters"))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: HttpRequest, error: StarletteHTTPException) -> Response:
        message = (
            f"no such endpoint: {request.url.path}"
            if error.status_code == 404
            else f"{request.method} {request.url.path}: {error.detail}"
        )
        return error_response(error.status_code, ErrorOut(error=message, hint="see /docs for the endpoints"))

    @app.exception_handler(Exception)
    async def bug(_: HttpRequest, error: Exception) -> Response:
        # A bug in lawindex: said so in one line, the traceback only in the server's log.
        return error_response(500, internal_error(error))


def _probes(app: FastAPI, engine: OpenSearchEngine, connection: Connection) -> None:
    """/healthz, /readyz and /v1/states."""

    @app.get("/healthz", response_model=HealthOut, summary="The process answers")
    async def healthz() -> Response:
        return json_response(HealthOut().model_dump())

    @app.get(
        "/readyz", response_model=ReadyOut, responses=_READY_ERRORS, summary="OpenSearch answers, a state is loaded"
    )
    def readyz() -> Response:
        served = _served_states(engine, connection)
        if not served:
            raise Refusal(
                503, ErrorOut(error="no state is loaded yet", hint="load one with `lawindex load corpora --state TX`")
            )
        return json_response(ReadyOut(states=len(served)).model_dump())

    @app.get("/v1/states", response_model=StatesOut, responses=_ERRORS, summary="Each loaded state")
    def states() -> Response:
        from indexer.opensearch.read.status import status

        rows = [StateOut.of(row) for row in status(connection)]
        return json_response(StatesOut(states=rows).json_obj())


def _ask_one(app: FastAPI, engine: OpenSearchEngine) -> None:
    """GET /v1/states/{state}/ask: what `lawindex ask --json` prints."""

    @app.get(
        "/v1/states/{state}/ask",
        response_model=AnswerOut,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="The laws that best answer a question: what `lawindex ask --json` prints",
        openapi_extra={"parameters": [_documented(name) for name in _ASKED]},
    )
    def ask(
        request: HttpRequest,
        state: State,
        q: Annotated[
            str,
            Query(
                description=f"the question, at most {MAX_QUESTION_CHARS:,} characters",
                examples=["how far from a fire hydrant can i park"],
                json_schema_extra={"maxLength": MAX_QUESTION_CHARS},
            ),
        ],
        explain: Annotated[
            bool, Query(description="each word's part of each score (and by meaning or hybrid its cosine)")
        ] = False,
    ) -> Response:
        answer = engine.ask(Request.of(state, q, _given(request.query_params)))
        parts = engine.explain(answer) if explain else None
        _answered(answer)
        return Response(answer_json(answer, parts).encode("utf-8"), media_type=JSON)


# The question's parameters besides `q` (contract/request.json's names), read from the query string as given: the
# contract's checks, not FastAPI's, say what is wrong with one (and one the way does not take is refused).
_ASKED = ("limit", "by", *FUSION, "vector")
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _given(query: Mapping[str, str]) -> dict[str, object]:
    """Each of the question's parameters in `query` by name, an integer's or a number's text parsed as JSON would
    parse it (any other text is kept, and refused by the contract's check with it in the message)."""
    given: dict[str, object] = {}
    for name in _ASKED:
        text = query.get(name)
        if text is None or name == "by":
            given[name] = text
            continue
        kind = parameter(name)["type"]
        if kind == "vector":  # a JSON array; anything else is kept as text, and refused by the contract
            given[name] = _json_or_text(text)
            continue
        if kind == "integer" and _INTEGER.fullmatch(text):
            given[name] = int(text)
        elif kind == "weight" and _NUMBER.fullmatch(text):
            given[name] = float(text)
        else:
            given[name] = text
    return given


def _json_or_text(text: str) -> object:
    """`text` as JSON (NaN and Infinity read as Python reads them: the contract refuses them by name), else itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _documented(name: str) -> dict[str, Any]:
    """One of the question's parameters as the OpenAPI schema lists it (its rule from the contract)."""
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": DESCRIPTIONS[name],
        "schema": {"type": "string"} if name == "vector" else schema_of(name),
    }


def _ask_many(app: FastAPI, engine: OpenSearchEngine) -> None:
    """POST /v1/states/{state}/ask: several questions, answered in order."""

    @app.post(
        "/v1/states/{state}/ask",
        response_model=BatchOut,
        response_model_exclude_none=True,
        responses=_ERRORS,
        summary="Several questions, answered in order; a question that fails is an error in its place",
    )
    def ask_many(state: State, batch: Annotated[BatchIn, Body()]) -> Response:
        code = state_code(state)
        asking = Request.of(code, "", batch.given())  # the batch's parameters, checked once for every question
        record = CURRENT.get()
        if record is not None:
            record.way = asking.way.value
        # Each element's JSON text, as `dumps({"answers": [...]})` would write it.
        answers: list[str] = []
        for question in batch.questions:
            try:
                answer = engine.ask(asking.but(question=question))
                parts = engine.explain(answer) if batch.explain else None
            except LawindexError as error:
                answers.append(
                    dumps(
                        QuestionErrorOut(
                            question=question, error=error.message, hint=error.hint, status=http_status(error)
                        ).json_obj()
                    )
                )
                continue
            _answered(answer)
            answers.append(answer_json(answer, parts))
        return Response(f'{{"answers": [{", ".join(answers)}]}}'.encode(), media_type=JSON)


def _lookups(app: FastAPI, engine: OpenSearchEngine) -> None:
    """A family's rows and one law by its id (in the path, or as ?id=)."""

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
        return json_response(FamilyOut(state=code, family=family, laws=rows).json_obj())

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
        return json_response(law_obj(found))


def _answered(answer: Answer) -> None:
    """The answer's path and windows, for the request's metrics and log line (indexer.service.access_log)."""
    record = CURRENT.get()
    if record is not None:
        record.answered(answer)


def _served_states(engine: OpenSearchEngine, connection: Connection) -> list[str]:
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
