"""The page's eval view (indexer.evaluation.view) over the in-process reference engine: a questions file on the
server found by its name only, the same figures as `eval --html`, drawn without a style the page's CSP refuses,
every name and question escaped, the API's errors and statuses. In a real browser: tests/integration/test_page.py."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from indexer.errors import BadInput
from indexer.evaluation import view as eval_view
from indexer.evaluation.evaluate import evaluate, read_judged
from indexer.evaluation.html_report import html_report
from indexer.retrieval.request import Way, way_of
from indexer.service import page
from indexer.service.engines import ReferenceEngine
from tests.unit.test_page import HOSTILE, _tags

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
HOSTILE_NAME = "<img src=x onerror=alert(1)>.jsonl"
JUDGED = [
    {"id": "q1", "state": "TX", "question": "how far from a fire hydrant can i park", "relevant": ["TX-S01", "TX-S04"]},
    {"id": "<b>q2</b>", "state": "AL", "question": "school bus " + HOSTILE, "relevant": ["AL-S10", "AL-S01"]},
    {"id": "q3", "state": "MD", "question": "headlights at night", "relevant": ["MD-S01"]},
]


def _lines(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, ReferenceEngine, Path]:
    folder = tmp_path_factory.mktemp("questions")
    (folder / "judged.jsonl").write_text(_lines(JUDGED), "utf-8")
    (folder / HOSTILE_NAME).write_text(_lines(JUDGED[:1]), "utf-8")
    (folder / "broken.jsonl").write_text('{"state": "TX"}\n', "utf-8")
    (folder / "typo.jsonl").write_text(_lines([{**JUDGED[0], "relevant": ["TX-S99"]}]), "utf-8")
    (folder / ".hidden.jsonl").write_text(_lines(JUDGED), "utf-8")
    (folder / "notes.txt").write_text("not a questions file", "utf-8")
    (folder / "sub.jsonl").mkdir()
    engine = ReferenceEngine(CORPORA)
    app = FastAPI()
    states = ["al", "md", "tx"]
    page.install(app, engine, lambda: [f"lawindex-{code}" for code in states], [eval_view.view(folder)])  # type: ignore[arg-type]
    return TestClient(app), engine, folder


def _svgs(html: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", html, re.S)


def test_the_listing_is_the_folders_files_by_name_escaped(served: tuple[TestClient, ReferenceEngine, Path]) -> None:
    client, _, folder = served
    response = client.get("/eval")
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == page.CSP
    names = re.findall(r'<option value="([^"]*)"', response.text)
    assert names == sorted(["broken.jsonl", "judged.jsonl", "typo.jsonl", "&lt;img src=x onerror=alert(1)&gt;.jsonl"])
    assert "<img" not in response.text and str(folder) not in response.text
    assert "hidden" not in response.text and "notes.txt" not in response.text and "sub.jsonl" not in response.text
    # `/` links to the view.
    assert '<a href="/eval">eval</a>' in client.get("/").text


def test_the_view_draws_eval_htmls_figures_under_the_pages_policy(
    served: tuple[TestClient, ReferenceEngine, Path],
) -> None:
    client, engine, folder = served
    response = client.get("/eval", params={"file": "judged.jsonl"})
    assert response.status_code == 200, response.text
    html = response.text
    figures = _svgs(html)
    assert len(figures) == 3
    report = evaluate(engine, read_judged(folder / "judged.jsonl"), list(Way))
    assert figures == _svgs(html_report(report))  # the same figures as the file eval --html writes
    # Nothing the CSP (style-src 'self', no inline script) would refuse: no style attribute, no <style>.
    tags = _tags(html)
    assert not {"script", "style", "img"} & {tag for tag, _ in tags}
    assert not [name for _, names in tags for name in names if name == "style" or name.startswith("on")]
    assert "<b>q2" not in html and "&lt;b&gt;q2&lt;/b&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_the_ways_asked(served: tuple[TestClient, ReferenceEngine, Path]) -> None:
    client, _, _ = served
    html = client.get("/eval", params=[("file", "judged.jsonl"), ("by", "hybrid"), ("by", "words")]).text
    assert "ways hybrid, words" in html
    assert re.findall(r'name="by" value="(\w+)" checked', html) == ["words", "hybrid"]
    assert len(_svgs(html)) == 3
    alone = client.get("/eval", params={"file": "judged.jsonl", "by": "meaning"}).text
    assert len(_svgs(alone)) == 2  # one way: no wins and losses


def test_a_hostile_name_is_text(served: tuple[TestClient, ReferenceEngine, Path]) -> None:
    client, _, _ = served
    response = client.get("/eval", params={"file": HOSTILE_NAME})
    assert response.status_code == 200
    assert "<img" not in response.text and "&lt;img src=x onerror=alert(1)&gt;.jsonl" in response.text


@pytest.mark.parametrize(
    "name",
    ["missing.jsonl", "../judged.jsonl", "sub.jsonl", ".hidden.jsonl", "notes.txt", "/etc/passwd", "", "x" * 5000],
)
def test_only_a_listed_name_is_a_file(served: tuple[TestClient, ReferenceEngine, Path], name: str) -> None:
    """Never a path from the URL: anything the folder does not list by that name is 404, naming it (cut)."""
    client, _, folder = served
    (folder.parent / "judged.jsonl").write_text(_lines(JUDGED), "utf-8")  # what `../judged.jsonl` would reach
    response = client.get("/eval", params={"file": name})
    assert response.status_code == 404
    message = re.search(r'<p class="message">(.*?)</p>', response.text)
    assert message is not None and message.group(1).startswith("no questions file ")
    assert len(message.group(1)) < 300 and str(folder) not in response.text
    assert "<svg" not in response.text


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"file": "broken.jsonl"}, 400, "broken.jsonl:1: field 'question': must be a non-empty string"),
        ({"file": "typo.jsonl"}, 400, "typo.jsonl: question q1 (#1): field 'relevant': TX has no law 'TX-S99'"),
        ({"file": "judged.jsonl", "by": "neither"}, 400, None),
    ],
    ids=["a-bad-line", "an-unknown-law", "an-unknown-way"],
)
def test_a_bad_file_or_way_is_the_apis_refusal(
    served: tuple[TestClient, ReferenceEngine, Path], params: dict[str, str], status: int, message: str | None
) -> None:
    client, _, folder = served
    response = client.get("/eval", params=params)
    assert response.status_code == status
    shown = re.search(r'<p class="message">(.*?)</p>', response.text)
    assert shown is not None
    if message is None:  # the contract's refusal of an unknown way, as /v1/states/TX/ask?by=neither gives it
        with pytest.raises(BadInput) as refused:
            way_of("neither")
        message = refused.value.message
    assert unescape(shown.group(1)) == message
    assert str(folder) not in response.text


def test_too_many_questions_are_refused(tmp_path: Path) -> None:
    (tmp_path / "many.jsonl").write_text(
        _lines([{**JUDGED[0], "id": f"q{n}"} for n in range(eval_view.MAX_JUDGED + 1)]), "utf-8"
    )
    with pytest.raises(BadInput, match="1,001 judged questions, more than the 1,000"):
        eval_view.Questions(tmp_path).judged("many.jsonl")


def test_each_worker_installs_the_view(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`--workers N`: each worker builds its app from the settings, the views among them, by their names."""
    from dataclasses import asdict

    from indexer.service import serve

    (tmp_path / "judged.jsonl").write_text(_lines(JUDGED), "utf-8")
    settings = {"url": "http://127.0.0.1:9", "views": [asdict(eval_view.view(tmp_path))]}
    monkeypatch.setenv(serve.SETTINGS_VARIABLE, json.dumps(settings))
    with TestClient(serve.app_from_environment()) as client:
        listing = client.get("/eval")
        assert listing.status_code == 200 and 'value="judged.jsonl"' in listing.text
        assert '<a href="/eval">eval</a>' in client.get("/").text
    monkeypatch.setenv(serve.SETTINGS_VARIABLE, json.dumps({"url": "http://127.0.0.1:9"}))
    with TestClient(serve.app_from_environment()) as client:
        assert client.get("/eval").status_code == 404  # no --questions: no view
        assert "/eval" not in client.get("/").text
