"""The page at `/` (indexer.service.page) and `eval --html` (indexer.evaluation.html_report), over the in-process
reference engine: each column is the engine's own answer, every text escaped, the API's errors and statuses.
The same in a real browser over OpenSearch: tests/integration/test_page.py."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from indexer.errors import BadInput
from indexer.retrieval.corpus import state_code
from indexer.retrieval.request import MAX_QUESTION_CHARS, Request
from indexer.service import page
from indexer.service.engines import ReferenceEngine

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
STATES = sorted(path.stem for path in CORPORA.glob("*.jsonl"))
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)> \"quoted\" & 'single'"


def _client(corpora: Path, states: list[str]) -> tuple[TestClient, ReferenceEngine]:
    app = FastAPI()
    engine = ReferenceEngine(corpora)
    page.install(app, engine, lambda: [f"lawindex-{code.lower()}" for code in states])  # type: ignore[arg-type]
    return TestClient(app), engine


@pytest.fixture(scope="module")
def sample() -> tuple[TestClient, ReferenceEngine]:
    return _client(CORPORA, STATES)


def _tags(html: str) -> list[tuple[str, list[str]]]:
    """Every element of the page as the browser's parser starts it: its tag and its attributes' names."""
    from html.parser import HTMLParser

    found: list[tuple[str, list[str]]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Tags().feed(html)
    return found


def columns(html: str) -> dict[str, list[str]]:
    """Each way's law ids on the page, in order."""
    found = {}
    for way in page.WAYS:
        section = re.search(rf'<section class="column way-{way}".*?</section>', html, re.S)
        assert section is not None, way
        found[way] = [unescape(law) for law in re.findall(r'<li class="law" data-id="([^"]*)"', section.group(0))]
    return found


@pytest.mark.parametrize("state", STATES)
def test_each_column_is_the_engines_own_answer(sample: tuple[TestClient, ReferenceEngine], state: str) -> None:
    client, engine = sample
    for question in ("how far must i be behing a firehydrant", "when do i stop for a school bus"):
        response = client.get("/", params={"state": state, "q": question})
        assert response.status_code == 200
        shown = columns(response.text)
        for way in page.WAYS:
            assert shown[way] == engine.ask(Request.of(state, question, {"by": way})).ids(), (state, question, way)


def test_words_parts_and_spelling(sample: tuple[TestClient, ReferenceEngine]) -> None:
    client, engine = sample
    html = client.get("/", params={"state": "AL", "q": "how far must i be behing a firehydrant"}).text
    # What each word stands for: the unknown ones as the engine spells them.
    assert re.search(r"firehydrant</span>.*?>fire</span> \+ <span[^>]*>hydrant</span>", html)
    assert re.search(r"behing</span>.*?>behind</span>", html)
    # Each word's part, as --explain gives it, in the first hit's table; the bar has one rect a part.
    answer = engine.ask(Request("AL", "how far must i be behing a firehydrant"))
    parts = engine.explain(answer)[0]
    words = re.search(r'<section class="column way-words".*?</section>', html, re.S)
    assert words is not None
    first = words.group(0).split('<li class="law"')[1]
    assert first.count("<rect ") == len(parts)
    for part in parts:
        assert f"{part.score:.4f}" in first


def test_refusals_are_the_apis(sample: tuple[TestClient, ReferenceEngine]) -> None:
    client, _ = sample
    for state, question in (("ZZ", "fire"), ("TX", "x" * (MAX_QUESTION_CHARS + 1)), ("", "fire")):
        with pytest.raises(BadInput) as refused:
            state_code(state)
            Request.of(state, question)
        response = client.get("/", params={"state": state, "q": question})
        assert response.status_code == 400
        assert unescape(refused.value.message) in unescape(response.text)
    assert client.get("/").status_code == 200  # no question: the form alone
    assert client.get("/static/nothing.js").status_code == 404


def test_hostile_text_is_text_under_a_strict_policy(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (CORPORA / "VT.jsonl").read_text("utf-8").splitlines() if line.strip()]
    rows = [json.loads(json.dumps(row).replace('"VT-', '"WY-')) for row in rows]
    rows[0]["law"] += " " + HOSTILE
    (tmp_path / "WY.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    client, _ = _client(tmp_path, ["WY"])
    response = client.get("/", params={"state": "WY", "q": "script alert img onerror " + HOSTILE})
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == page.CSP
    html = response.text
    tags = _tags(html)
    assert not {"script", "img", "iframe", "object"} & {tag for tag, _ in tags}
    assert not [name for _, names in tags for name in names if name.startswith("on")]
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 2  # the question, and the law in a column
    assert " style=" not in html  # the CSP forbids inline style: nothing on the page may need it


def test_eval_html_is_self_contained_svg_and_escaped(tmp_path: Path) -> None:
    from indexer.evaluation.evaluate import Judged, evaluate
    from indexer.evaluation.html_report import html_report

    engine = ReferenceEngine(CORPORA)
    judged = [
        Judged("q1", "TX", "how far from a fire hydrant can i park", ("TX-S01",)),
        Judged("<b>q2</b>", "AL", "school bus " + HOSTILE, ("AL-S10", "AL-S01")),
        Judged("q$3$", "MD", "$x^2$ headlights", ("MD-S01",)),
    ]
    html = html_report(evaluate(engine, judged, ["words", "meaning", "hybrid"]))  # type: ignore[arg-type]
    assert html.count("<svg") == 3 and "<?xml" not in html
    assert "<b>q2" not in html and "&lt;b&gt;q2&lt;/b&gt;" in html
    tags = _tags(html)
    assert not {"script", "img", "link"} & {tag for tag, _ in tags}  # nothing fetched, nothing run
    assert not [name for _, names in tags for name in names if name.startswith("on") or name == "src"]
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))  # three figures in one file, no id shared
