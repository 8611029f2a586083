"""The page at `/` and `eval --html` in a real browser: Debian's Chromium (/usr/bin/chromium, installed by .ci/run)
driven headless by Playwright for Python, never a browser Playwright downloads.

Over `lawindex serve` on the sample states: each column holds the laws `lawindex ask --json` gives that way, on
every state, for a few questions; the form works by keyboard and puts the state and the question in the URL;
a refusal is the API's own message and status; a corpus row holding `<script>` and an `onerror=` attribute,
loaded as its own state in this test's namespace, shows as text and runs nothing; `eval --html`'s file opens
with its SVG figures. A screenshot of each is kept under the test's tmp path (and copied to
$LAWINDEX_ARTIFACTS when it is set). Under CI=true nothing here skips: no Chromium is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from typer.testing import CliRunner

from indexer.cli import app
from indexer.retrieval.corpus import read_corpora
from tests.integration.serving import Service, loaded, running

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "corpora"
STATES = sorted(path.stem for path in CORPORA.glob("*.jsonl"))
QUESTIONS = [
    "how far must i be behing a firehydrant",
    "when do i have to stop for a school bus",
    "how long do i have to hold my permit",
]
WAYS = ("words", "meaning", "hybrid")
HOSTILE_STATE = "WY"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(1)>"
JUDGED_FILE = "judged.jsonl"
HOSTILE_FILE = "<img src=x onerror=alert(1)>.jsonl"
CHROMIUM = os.environ.get("LAWINDEX_CHROMIUM", "/usr/bin/chromium")
# Headless, and nothing the browser would fetch or start on its own (updates, sync, QUIC probes).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
runner = CliRunner()


def _cannot(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"no browser for the page's tests: {why} (.ci/run installs Debian's chromium)", pytrace=False)
    pytest.skip(f"no browser for the page's tests: {why}")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium with a fresh profile of its own, for the module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _cannot("the playwright package is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        _cannot(f"{CHROMIUM} is missing")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def env(opensearch_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The sample states and a hostile one (a law text holding a script and an onerror attribute), loaded in a
    namespace of this module's own."""
    hostile = tmp_path_factory.mktemp("hostile")
    rows = [json.loads(line) for line in (CORPORA / "VT.jsonl").read_text("utf-8").splitlines() if line.strip()]
    rows = [json.loads(json.dumps(row).replace('"VT-', f'"{HOSTILE_STATE}-')) for row in rows]
    rows[0]["law"] += " " + HOSTILE
    rows[1]["id"] = f"{HOSTILE_STATE}-<b>S02</b>"
    (hostile / f"{HOSTILE_STATE}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    with loaded(opensearch_url, read_corpora(CORPORA) + read_corpora(hostile, [HOSTILE_STATE])) as env:
        yield env


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The service's questions folder (`--questions`): 20 judged questions and a hostile one, under a plain name
    and under a hostile name."""
    folder = tmp_path_factory.mktemp("questions")
    lines = (ROOT / "eval" / "questions.jsonl").read_text("utf-8").splitlines()[:20]
    lines.append(json.dumps({"id": "<i>x</i>", "state": "TX", "question": HOSTILE, "relevant": ["TX-S01"]}))
    (folder / JUDGED_FILE).write_text("\n".join(lines) + "\n", "utf-8")
    (folder / HOSTILE_FILE).write_text("\n".join(lines[-3:]) + "\n", "utf-8")
    return folder


@pytest.fixture(scope="module")
def service(env: dict[str, str], questions: Path) -> Iterator[Service]:
    with running(env, "--questions", str(questions), ready="/readyz") as started:
        yield started


@pytest.fixture
def shots(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """Where a test's screenshots go; copied to $LAWINDEX_ARTIFACTS/page/<test> when that is set."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    yield folder
    kept = os.environ.get("LAWINDEX_ARTIFACTS")
    if kept:
        target = Path(kept) / "page" / request.node.name.replace("/", "_")
        shutil.copytree(folder, target, dirs_exist_ok=True)


def ask_json(env: dict[str, str], state: str, question: str, way: str) -> dict[str, Any]:
    result = runner.invoke(app, ["ask", state, question, "--by", way, "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def page_url(service: Service, state: str, question: str) -> str:
    return f"{service.url}/?{urlencode({'state': state, 'q': question})}"


def shown(page: Any) -> dict[str, list[tuple[str, str]]]:
    """Each way's (id, kind) rows on the page, in order, as the browser sees them."""
    rows: dict[str, list[tuple[str, str]]] = {}
    for way in WAYS:
        rows[way] = page.eval_on_selector_all(
            f"section.way-{way} li.law",
            "items => items.map(li => [li.dataset.id, li.querySelector('.kind').textContent])",
        )
        rows[way] = [(law, kind) for law, kind in rows[way]]
    return rows


def opened(browser: Any) -> tuple[Any, list[str]]:
    """A new tab, and the dialogs (alert, confirm) anything on it tried to open."""
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return page, dialogs


def refused_by_policy(page: Any) -> list[str]:
    """What the Content-Security-Policy refuses on `page` from now on, as the console says it (an inline style, a
    script)."""
    refused: list[str] = []

    def said(message: Any) -> None:
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    page.on("console", said)
    return refused


@pytest.mark.parametrize("state", STATES)
def test_the_columns_are_ask_json_each_way(
    browser: Any, service: Service, env: dict[str, str], shots: Path, state: str
) -> None:
    page, _ = opened(browser)
    try:
        for number, question in enumerate(QUESTIONS):
            response = page.goto(page_url(service, state, question))
            assert response is not None and response.status == 200
            rows = shown(page)
            for way in WAYS:
                answer = ask_json(env, state, question, way)
                assert rows[way] == [(hit["id"], hit["kind"]) for hit in answer["hits"]], (state, question, way)
            if number == 0:
                page.screenshot(path=str(shots / f"{state}.png"), full_page=True)
        # The words as the API gives them, each with what it stands for.
        answer = ask_json(env, state, QUESTIONS[0], "words")
        listed = page.goto(page_url(service, state, QUESTIONS[0])) and page.inner_text(".terms")
        assert all(term in listed for term in answer["terms"])
    finally:
        page.close()


def test_each_terms_part_is_explain(browser: Any, service: Service, env: dict[str, str]) -> None:
    """The words column's bars and tables: a rect a part, each part as `ask --explain --json` gives it."""
    page, _ = opened(browser)
    try:
        page.goto(page_url(service, "AL", QUESTIONS[0]))
        result = runner.invoke(app, ["ask", "AL", QUESTIONS[0], "--explain", "--json"], env=env)
        hits = json.loads(result.stdout)["hits"]
        laws = page.query_selector_all("section.way-words li.law")
        assert len(laws) == len(hits)
        for law, hit in zip(laws, hits, strict=True):
            assert len(law.query_selector_all("svg.bar rect")) == len(hit["explain"])
            # The table is folded in <details>: its text as the document holds it, not as rendered.
            cells = [
                [cell.text_content() for cell in row.query_selector_all("td")]
                for row in law.query_selector_all("tbody tr")
            ]
            assert [(cells[0], cells[-1]) for cells in cells] == [
                (part["word"], f"{part['score']:.4f}") for part in hit["explain"]
            ]
            assert law.query_selector(".score").inner_text() == f"{hit['score']:.4f}"
    finally:
        page.close()


def test_the_form_by_keyboard_puts_the_question_in_the_url(browser: Any, service: Service, shots: Path) -> None:
    page, _ = opened(browser)
    try:
        page.set_viewport_size({"width": 390, "height": 844})  # a phone
        page.goto(service.url + "/")
        assert (
            page.get_by_label("State", exact=True).is_visible()
            and page.get_by_label("Question", exact=True).is_visible()
        )
        page.keyboard.press("Tab")  # the title's link, then the picker, the box and the button, in that order
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "state"
        page.get_by_label("State", exact=True).select_option("MD")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "q"
        page.keyboard.type("school bus")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"state": ["MD"], "q": ["school bus"]}
        assert page.locator("section.way-meaning li.law").count() == 8  # every row is reached by meaning
        # Nothing wider than the phone: no sideways scrolling.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(shots / "phone.png"), full_page=True)
        # The same URL opened afresh is the same answer (a shared link).
        first = shown(page)
        page.goto(page.url)
        assert shown(page) == first
    finally:
        page.close()


@pytest.mark.parametrize(
    ("state", "question"),
    [("ZZ", "fire hydrant"), ("TX", "x" * 2001), ("NV", "fire hydrant")],
    ids=["not-a-state", "too-long", "no-index"],
)
def test_a_refusal_is_the_apis(browser: Any, service: Service, state: str, question: str) -> None:
    api = httpx.get(f"{service.url}/v1/states/{state}/ask", params={"q": question}, timeout=60)
    assert api.status_code in (400, 404)
    page, _ = opened(browser)
    try:
        response = page.goto(page_url(service, state, question))
        assert response is not None and response.status == api.status_code
        assert page.inner_text(".error .message") == api.json()["error"]
        assert page.inner_text(".error .status") == str(api.status_code)
    finally:
        page.close()


def test_a_hostile_row_is_text_and_runs_nothing(
    browser: Any, service: Service, env: dict[str, str], shots: Path
) -> None:
    page, dialogs = opened(browser)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        question = "script alert img onerror " + HOSTILE
        response = page.goto(page_url(service, HOSTILE_STATE, question))
        assert response is not None and response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
        assert dialogs == [] and errors == []
        # No element came from the data: no script, no img, no attribute `on...` anywhere.
        assert page.evaluate("document.querySelectorAll('script, img, iframe, object').length") == 0
        assert (
            page.evaluate(
                "[...document.querySelectorAll('*')].some(e => [...e.attributes].some(a => a.name.startsWith('on')))"
            )
            is False
        )
        texts = page.locator("section.way-words .text").all_inner_texts()
        assert any(HOSTILE in text for text in texts)  # shown, as the characters it is
        assert page.input_value("#q") == question
        ids = [law for law, _ in shown(page)["meaning"]]
        assert ids == [hit["id"] for hit in ask_json(env, HOSTILE_STATE, question, "meaning")["hits"]]
        page.screenshot(path=str(shots / "hostile.png"), full_page=True)
    finally:
        page.close()


def test_eval_html_opens_with_its_figures(browser: Any, env: dict[str, str], tmp_path: Path, shots: Path) -> None:
    judged = tmp_path / "judged.jsonl"
    lines = (ROOT / "eval" / "questions.jsonl").read_text("utf-8").splitlines()[:20]
    lines.append(json.dumps({"id": "<i>x</i>", "state": "TX", "question": HOSTILE, "relevant": ["TX-S01"]}))
    judged.write_text("\n".join(lines) + "\n", "utf-8")
    report = tmp_path / "eval.html"
    result = runner.invoke(app, ["eval", str(judged), "--html", str(report)], env=env)
    assert result.exit_code == 0, result.stderr
    page, dialogs = opened(browser)
    try:
        page.goto(report.as_uri())
        figures = page.locator("figure.plot svg")
        assert figures.count() == 3
        for number in range(3):
            box = figures.nth(number).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100  # drawn, not empty
        assert page.locator("figure.plot svg path").count() > 100  # the lines, bars, points and the text as paths
        assert dialogs == [] and page.evaluate("document.querySelectorAll('script, img').length") == 0
        misses = page.inner_text("table.misses")  # by words the hostile question reaches no TX-S01: a miss
        assert HOSTILE in misses and "<i>x</i>" in misses
        page.screenshot(path=str(shots / "eval.png"), full_page=True)
    finally:
        page.close()


def test_the_eval_view_opens_with_its_figures(
    browser: Any, service: Service, env: dict[str, str], questions: Path, shots: Path
) -> None:
    """From `/`'s footer to a questions file's view, by keyboard: its three figures drawn under the page's CSP, its
    measures `lawindex eval --json`'s on the same file, the hostile question as text."""
    result = runner.invoke(app, ["eval", str(questions / JUDGED_FILE), "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout.splitlines()[-1])
    page, dialogs = opened(browser)
    refused = refused_by_policy(page)
    try:
        page.goto(service.url + "/")
        with page.expect_navigation():
            page.get_by_role("link", name="eval", exact=True).click()
        assert urlsplit(page.url).path == "/eval"
        page.get_by_label("Questions file", exact=True).select_option(JUDGED_FILE)
        page.get_by_role("button", name="Evaluate").focus()
        with page.expect_navigation():
            page.keyboard.press("Enter")
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"file": [JUDGED_FILE], "by": list(WAYS)}
        figures = page.locator("figure.plot svg")
        assert figures.count() == 3
        for number in range(3):
            box = figures.nth(number).bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100  # drawn, not empty
        assert page.locator("figure.plot svg path").count() > 100
        # Drawn in its colours, not in black: the styles are attributes, which the policy lets through.
        colour = page.evaluate(
            "getComputedStyle(document.querySelector('#figure-recall svg [stroke=\"#0550ae\"]')).stroke"
        )
        assert colour == "rgb(5, 80, 174)"
        page.wait_for_load_state("networkidle")
        assert refused == [] and dialogs == []
        assert page.evaluate("document.querySelectorAll('script, img, style').length") == 0
        rows = page.eval_on_selector_all(
            "table:first-of-type tbody tr:has(th)", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
        )
        assert {row[1]: row[2:] for row in rows} == {
            way: [f"{summary['overall'][way][name]:.3f}" for name in ("recall@8", "MRR@8", "nDCG@8")] for way in WAYS
        }
        misses = page.inner_text("table.misses")
        assert HOSTILE in misses and "<i>x</i>" in misses
        page.screenshot(path=str(shots / "eval-view.png"), full_page=True)
        # One way only: its figures, no wins and losses.
        page.goto(f"{service.url}/eval?{urlencode({'file': JUDGED_FILE, 'by': 'hybrid'})}")
        assert page.locator("figure.plot svg").count() == 2
    finally:
        page.close()


def test_a_hostile_file_name_is_text_and_a_path_is_no_file(browser: Any, service: Service, shots: Path) -> None:
    page, dialogs = opened(browser)
    refused = refused_by_policy(page)
    try:
        response = page.goto(service.url + "/eval")
        assert response is not None and response.status == 200
        assert HOSTILE_FILE in page.locator(".files").inner_text()
        page.get_by_role("link", name=HOSTILE_FILE).click()
        page.wait_for_load_state("networkidle")
        assert parse_qs(urlsplit(page.url).query) == {"file": [HOSTILE_FILE]}
        assert page.locator("figure.plot svg").count() == 3
        assert HOSTILE_FILE in page.inner_text("h2#eval-title")
        assert dialogs == [] and refused == []
        assert page.evaluate("document.querySelectorAll('script, img').length") == 0
        page.screenshot(path=str(shots / "eval-hostile-name.png"), full_page=True)
        for name in ("../judged.jsonl", "/etc/passwd", "judged", ""):
            response = page.goto(f"{service.url}/eval?{urlencode({'file': name})}")
            assert response is not None and response.status == 404
            assert page.inner_text(".error .message") == f"no questions file {name!r}"
            assert page.locator("figure.plot svg").count() == 0
    finally:
        page.close()
