"""The page at `/`: a state, a question, and the three ways side by side, for the people who are not at a terminal.

`GET /?state=TX&q=...` answers with HTML rendered on the server (the answer needs no JavaScript), from the
templates under `page/templates` (Jinja2, autoescaped: a law's text, a question or an id that holds `<script>`
shows as text) and one stylesheet under `page/static`, served by this app: no CDN, no build. Its
Content-Security-Policy (`CSP`) forbids any inline script or style, so the bars are SVG drawn with attributes.

Everything on the page is what the JSON API answers for the same question, from the same engine calls
(`ask_way`, the page's one call into the engine): each way asked DEPTH deep (what `limit=100` answers), its
first RETRIEVED_LAWS laws shown (the laws and order of `limit=8`: the rankings are exact, so the first rows never
depend on how many were asked for); the words' parts as `explain=true` gives them; a law's rank in the other
ways is its place in their DEPTH-deep answers ("over 100" past it; a hybrid hit's own `ranks` as the API gives
them); what an unknown word stands for is the `terms` the API answers for that word asked alone. A refusal
shows the API's own message, hint and HTTP status.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import Response

from indexer.errors import LawindexError, http_status
from indexer.retrieval.answers import Answer
from indexer.retrieval.corpus import STATES, state_code
from indexer.retrieval.request import DEFAULT_FUSION, RETRIEVED_LAWS
from indexer.retrieval.request import Request as Question
from indexer.service.metrics import CURRENT
from indexer.service.responses import RETRY_AFTER

if TYPE_CHECKING:
    from jinja2 import Environment

    from indexer.retrieval.explain import Contribution
    from indexer.service.engines import Engine

__all__ = ["CSP", "DEPTH", "WAYS", "View", "ask_way", "install", "refused", "render", "templates"]

HERE = Path(__file__).with_name("page")
WAYS = ("words", "meaning", "hybrid")
# How deep the meaning and hybrid answers are asked for the other ways' ranks: the API's largest limit.
DEPTH = 100
# Unknown words whose spelling is shown (each is one more question of one word); a pasted paragraph stops here.
SPELLED_AT_MOST = 12
# Nothing inline, nothing from elsewhere: a law text that slipped through escaping still could not run.
CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_STATIC = {"page.css": "text/css; charset=utf-8"}
BAR_WIDTH = 300  # the SVG's own units; it is drawn at the column's width


def ask_way(engine: Engine, state: str, question: str, way: str, limit: int) -> Answer:
    """The page's one call into the engine: what `GET /v1/states/{state}/ask?by=WAY&limit=LIMIT` answers (the
    fusion at its defaults), checked by the same request value as the API's."""
    return engine.ask(Question.of(state, question, {"by": way, "limit": limit}))


@dataclass(frozen=True)
class View:
    """A view more on the page, from a layer above the service (the eval view, indexer.evaluation.view): the CLI
    names it and the service installs it without importing what stands above it. `install` is a function
    `(app, engine, options) -> None` as `module:function`, imported by that name in each worker (as uvicorn
    imports the app, so that `--workers N` installs it too); `path` and `title` its link in the page's footer;
    `options` (JSON) what its install is given."""

    install: str
    path: str
    title: str
    options: dict[str, Any]

    def installed(self, app: FastAPI, engine: Engine) -> None:
        from importlib import import_module

        module, _, function = self.install.partition(":")
        getattr(import_module(module), function)(app, engine, self.options)


def install(app: FastAPI, engine: Engine, served: Callable[[], list[str]], views: Sequence[View] = ()) -> None:
    """The page's routes on `app` (left out of the API's schema): `/` and its stylesheet, then each of `views`.
    `served()`: the aliases of the states the engine serves, for the picker."""
    links = [(view.path, view.title) for view in views]

    @app.get("/", include_in_schema=False)
    def page(request: Request) -> Response:
        params = request.query_params
        state, question = params.get("state"), params.get("q")
        states = _states(served)
        context: dict[str, Any] = {"states": states, "state": state or "", "question": question or ""}
        status = 200
        if question is not None:
            try:
                context["answer"] = compare(engine, state or "", question)
                context["state"] = context["answer"].state
            except LawindexError as error:
                status, context["error"] = refused(error)
        return render("page.html", {**context, "links": links}, status)

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in _STATIC:
            return Response("no such file", status_code=404, media_type="text/plain", headers=HEADERS)
        body = (HERE / "static" / name).read_bytes()
        return Response(body, media_type=_STATIC[name], headers={**HEADERS, "Cache-Control": "max-age=3600"})

    for view in views:
        view.installed(app, engine)


def refused(error: LawindexError) -> tuple[int, dict[str, Any]]:
    """A refusal as the page shows it: the API's status, message and hint."""
    status = http_status(error)
    return status, {"status": status, "message": error.message, "hint": error.hint}


def render(template: str, context: dict[str, Any], status: int = 200) -> Response:
    """One of the page's templates as the response, under the page's headers (its CSP; Retry-After on a 503,
    as the API's)."""
    headers = dict(HEADERS)
    if status == 503:
        headers["Retry-After"] = str(RETRY_AFTER)
    html = templates().get_template(template).render(**context)
    return Response(html, status_code=status, media_type="text/html; charset=utf-8", headers=headers)


def _states(served: Callable[[], list[str]]) -> list[str]:
    """The codes of the states served, for the picker; every code when the cluster cannot say (the question's
    own error then says why)."""
    try:
        return sorted({alias.rsplit("-", 1)[1].upper() for alias in served()})
    except LawindexError:
        return sorted(STATES)


@cache
def templates() -> Environment:
    """The page's templates (and eval's report, indexer.evaluation.html_report), every value autoescaped."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined, trim_blocks=True
    )


# ---- one question, the three ways ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One piece of a bar: a word's part of a BM25 score, or a way's part of a fused score."""

    name: str
    value: float
    x: float  # where it starts, in BAR_WIDTH units
    width: float
    css: str  # its colour's class
    detail: str  # what a hover and a screen reader say


@dataclass(frozen=True)
class Row:
    """One law of a column: its rank, id, kind, score, its ranks in the other ways, and its bar."""

    rank: int
    id: str
    kind: str
    law: str
    score: float
    others: list[tuple[str, str]]  # (way, its rank there as text)
    parts: list[Part]
    explained: list[Contribution]
    cosine: float | None


@dataclass(frozen=True)
class Column:
    way: str
    rows: list[Row]
    json_url: str
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Compared:
    state: str
    question: str
    words: list[str]
    terms: list[str]
    spelled: list[tuple[str, list[str]]]  # (word, the vocabulary words it stands for)
    spelled_all: bool  # False when a long question had more unknown words than are spelled
    columns: list[Column]
    colour: dict[str, str]  # term -> its colour's class, the same in the words and in the bars
    rrf_k: int
    weights: tuple[float, float]


def compare(engine: Engine, state: str, question: str) -> Compared:
    """The three ways' answers to `question`, side by side; a LawindexError (with the API's status) when the
    words answer itself is refused (a bad state, a question too long, no index)."""
    code = state_code(state)
    deep = {"words": ask_way(engine, code, question, "words", DEPTH)}
    errors: dict[str, dict[str, Any]] = {}
    for way in ("meaning", "hybrid"):
        try:
            deep[way] = ask_way(engine, code, question, way, DEPTH)
        except LawindexError as error:  # by meaning where the index has no vectors: 501, that column only
            errors[way] = refused(error)[1]
    for answer in deep.values():
        _answered(answer)
    words = replace(deep["words"], hits=deep["words"].hits[:RETRIEVED_LAWS])
    ranks = {way: _Ranks.of(answer) for way, answer in deep.items()}
    colour = {term: f"t{number % 8}" for number, term in enumerate(words.terms)}
    columns = [_words_column(words, engine.explain(words), ranks, colour, question)]
    for way in ("meaning", "hybrid"):
        url = _json_url(code, question, way)
        if way in errors:
            columns.append(Column(way, [], url, errors[way]))
        else:
            columns.append(_deep_column(deep[way], ranks, url))
    spelled, spelled_all = _spelled(engine, code, words)
    hybrid = deep.get("hybrid")
    return Compared(
        state=code,
        question=question,
        words=words.words,
        terms=words.terms,
        spelled=spelled,
        spelled_all=spelled_all,
        columns=columns,
        colour=colour,
        rrf_k=DEFAULT_FUSION.rrf_k if hybrid is None or hybrid.rrf_k is None else hybrid.rrf_k,
        weights=DEFAULT_FUSION.fields()["weights"] if hybrid is None or hybrid.weights is None else hybrid.weights,
    )


@dataclass(frozen=True)
class _Ranks:
    """Where one way's answer, asked DEPTH deep, put each law: its rank, "over 100" when the answer was full
    (the law may be further down), "not reached" when it was not (the way reaches no more laws)."""

    way: str
    of_law: dict[str, int]
    full: bool

    @classmethod
    def of(cls, answer: Answer) -> _Ranks:
        ranks = {hit.law.id: rank for rank, hit in enumerate(answer.hits, 1)}
        return cls(answer.by, ranks, len(answer.hits) >= DEPTH)

    def text(self, law: str) -> str:
        found = self.of_law.get(law)
        if found is not None:
            return str(found)
        if self.full:
            return f"over {DEPTH}"
        return "not reached (no word shared)" if self.way == "words" else "not reached"


def _json_url(state: str, question: str, way: str) -> str:
    """The API's URL of the same answer, for a reader who wants the JSON."""
    query = {"q": question} if way == "words" else {"q": question, "by": way}
    return f"/v1/states/{state}/ask?{urlencode(query)}"


def _rank_in(ranks: dict[str, _Ranks], way: str, law: str) -> str:
    """`law`'s rank by `way` as text; "?" when that way was refused (its column says why)."""
    return ranks[way].text(law) if way in ranks else "?"


def _reached_text(rank: int | None) -> str:
    """A hybrid hit's words rank: None is a law words do not reach."""
    return "not reached (no word shared)" if rank is None else str(rank)


def _words_column(
    answer: Answer,
    parts: Sequence[Sequence[Contribution]],
    ranks: dict[str, _Ranks],
    colour: dict[str, str],
    question: str,
) -> Column:
    """The BM25 column: each law's bar is its words' parts, added left to right in the spec's order."""
    top = max((hit.score for hit in answer.hits), default=0.0) or 1.0
    rows = []
    for rank, (hit, explained) in enumerate(zip(answer.hits, parts, strict=True), 1):
        pieces, x = [], 0.0
        for part in explained:
            width = part.score / top * BAR_WIDTH
            detail = f"{part.word}: {part.score:.4f} (tf {part.tf}, df {part.df}, idf {part.idf:.4f})"
            pieces.append(Part(part.word, part.score, x, width, colour.get(part.word, "t0"), detail))
            x += width
        others = [(way, _rank_in(ranks, way, hit.law.id)) for way in ("meaning", "hybrid")]
        rows.append(Row(rank, hit.law.id, hit.law.kind, hit.law.law, hit.score, others, pieces, list(explained), None))
    return Column("words", rows, _json_url(answer.state, question, "words"))


def _deep_column(answer: Answer, ranks: dict[str, _Ranks], url: str) -> Column:
    """A meaning or hybrid column: its first RETRIEVED_LAWS of the answer asked DEPTH deep (the same laws in
    the same order as the API's limit=8). Hybrid's bar is each way's part, weight / (rrf_k + rank), from the
    hit's own ranks (exact: a hybrid hit's ranks are known, never bounded)."""
    from indexer.retrieval.request import Fusion

    reached = answer.reached or []
    hits = answer.hits[:RETRIEVED_LAWS]
    top = max((hit.score for hit in hits), default=0.0) or 1.0
    rows = []
    for rank, (hit, how) in enumerate(zip(hits, reached, strict=False), 1):
        pieces: list[Part] = []
        if answer.by == "hybrid":
            k = answer.rrf_k or DEFAULT_FUSION.rrf_k
            ww, mw = answer.weights or (DEFAULT_FUSION.words_weight, DEFAULT_FUSION.meaning_weight)
            fusion = Fusion(k, ww, mw)
            x = 0.0
            for way, part, css, way_rank in (
                ("words", fusion.score(how.words, None), "pw", how.words),
                ("meaning", fusion.score(None, how.meaning), "pm", how.meaning),
            ):
                if way_rank is None:
                    continue
                width = part / top * BAR_WIDTH
                weight = ww if way == "words" else mw
                detail = f"{way}: {weight:g} / ({k} + {way_rank}) = {part:.6f}"
                pieces.append(Part(way, part, x, width, css, detail))
                x += width
            others = [("words", _reached_text(how.words)), ("meaning", str(how.meaning))]
        else:
            width = max(how.cosine, 0.0) * BAR_WIDTH
            pieces.append(Part("cosine", how.cosine, 0.0, width, "pm", f"cosine {how.cosine:.6f}"))
            others = [
                ("words", _rank_in(ranks, "words", hit.law.id)),
                ("hybrid", _rank_in(ranks, "hybrid", hit.law.id)),
            ]
        rows.append(Row(rank, hit.law.id, hit.law.kind, hit.law.law, hit.score, others, pieces, [], how.cosine))
    return Column(answer.by, rows, url)


def _spelled(engine: Engine, state: str, answer: Answer) -> tuple[list[tuple[str, list[str]]], bool]:
    """Each surviving word and the vocabulary words it stands for: itself when the state's laws have it (it
    is then among the terms), else the terms the API answers for that word asked alone (what it contains, or
    is one edit from; none for an unknown short word)."""
    found, asked = [], 0
    known = set(answer.terms)
    alone: dict[str, list[str]] = {}
    for word in answer.words:
        if word in known:
            found.append((word, [word]))
            continue
        if word not in alone:
            if asked == SPELLED_AT_MOST:
                return found, False
            asked += 1
            alone[word] = ask_way(engine, state, word, "words", 1).terms
        found.append((word, alone[word]))
    return found, True


def _answered(answer: Answer) -> None:
    """The answer counted in the request's metrics and log line, as the API's routes count theirs."""
    record = CURRENT.get()
    if record is not None:
        record.answered(answer)
