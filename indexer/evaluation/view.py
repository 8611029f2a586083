"""The page's eval view: `lawindex serve --questions DIR` draws `lawindex eval --html`'s figures for a judged-questions
file already on the server, at `/eval?file=NAME&by=WAY` (`by` repeated for several ways; all three by default).

DIR is a folder of judged-questions files, JSON lines as `lawindex eval` reads them (indexer.evaluation.evaluate).
`/eval` lists its `.jsonl` files; `/eval?file=NAME` evaluates NAME each way through the service's own engine, as
`lawindex eval` does, and shows the measures, the three figures (recall@k for k = 1..20, the wins and losses, the
misses' ranks: indexer.evaluation.html_report, the same SVG) and the misses, on the page, under its CSP.

A file is found by its name among the folder's entries, never by a path from the URL: NAME must be one of the names
the folder lists (a file ending `.jsonl`, not hidden), so `../x`, `/etc/passwd` or `a/b` is no such file, 404
naming it, as the API names an unknown law. It is read by the one reader of a user's files
(indexer.retrieval.files, with eval's bounds), and its errors name it by NAME alone, never by the server's path.
A file holds at most MAX_JUDGED judged questions, the most the batch API takes in one request; each is asked each
way DEPTH deep, as eval asks. The errors are the API's: their status by their class, their message and hint.

Installed by the CLI (`lawindex serve --questions DIR`, a `View` of indexer.service.page): the service stands
below offline evaluation and never imports it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from indexer.errors import BadInput, CorpusError, LawindexError, NotFound
from indexer.retrieval.request import Way, way_of
from indexer.service.page import View, refused, render

if TYPE_CHECKING:
    from indexer.evaluation.evaluate import Judged
    from indexer.service.engines import Engine

__all__ = ["MAX_JUDGED", "PATH", "Questions", "install", "view"]

PATH = "/eval"
# The most questions one view asks each way: what the batch API takes in one request (output.BatchIn).
MAX_JUDGED = 1000
SUFFIX = ".jsonl"
# A name echoed in a refusal is cut here: the URL's own bound is far longer.
SHOWN_NAME = 200


def view(folder: Path) -> View:
    """The view the CLI hands `lawindex serve` for `--questions folder`."""
    return View(f"{__name__}:install", PATH, "eval", {"folder": str(folder)})


class Questions:
    """The judged-questions files of one folder, by name."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def names(self) -> list[str]:
        """The folder's judged-questions files: its entries ending SUFFIX, not hidden, files (or links to one)."""
        try:
            with os.scandir(self.folder) as entries:
                return sorted(
                    entry.name
                    for entry in entries
                    if entry.name.endswith(SUFFIX) and not entry.name.startswith(".") and entry.is_file()
                )
        except OSError as error:
            raise BadInput(f"the questions folder cannot be read: {error.strerror or error}") from None

    def judged(self, name: str) -> list[Judged]:
        """The judged questions of the file called `name`; NotFound (404) for a name the folder does not list,
        the reader's refusal (400) naming it for a bad file."""
        from indexer.evaluation.evaluate import read_judged

        if name not in self.names():
            shown = name if len(name) <= SHOWN_NAME else name[:SHOWN_NAME] + "..."
            raise NotFound(f"no questions file {shown!r}", hint=f"see {PATH} for the files this server has")
        path = self.folder / name  # a name the folder listed: no separator, no `..`
        try:
            judged = read_judged(path)
        except CorpusError as error:
            raise CorpusError(name, error.line, error.field, error.problem) from None
        except BadInput as error:
            raise BadInput(error.message.replace(str(path), name), hint=error.hint) from None
        if len(judged) > MAX_JUDGED:
            raise BadInput(
                f"{name}: {len(judged):,} judged questions, more than the {MAX_JUDGED:,} a view asks",
                hint="split the file, or run `lawindex eval` on it",
            )
        return judged


def ways_of(given: list[str]) -> list[Way]:
    """The ways asked (`by`, repeated), each once in the order given, all three when none is; the contract's
    refusal of a way it does not know."""
    return list(dict.fromkeys(way_of(value) for value in given)) if given else list(Way)


def install(app: FastAPI, engine: Engine, options: dict[str, Any]) -> None:
    """`/eval` on `app`, over `engine`, for the files of `options["folder"]`."""
    questions = Questions(Path(options["folder"]))

    @app.get(PATH, include_in_schema=False)
    def evaluation(request: Request) -> Response:
        params = request.query_params
        name = params.get("file")
        context: dict[str, Any] = {"links": [(PATH, "eval")], "file": name, "files": [], "asked": []}
        status = 200
        try:
            context["files"] = questions.names()
            context["asked"] = [way.value for way in ways_of(params.getlist("by"))]
            if name is not None:
                context.update(_evaluated(engine, questions, name, context["asked"]))
        except LawindexError as error:
            status, context["error"] = refused(error)
        return render("eval_view.html", {**context, "ways": [way.value for way in Way]}, status)


def _evaluated(engine: Engine, questions: Questions, name: str, ways: list[str]) -> dict[str, Any]:
    """The report's context (html_report.report_context) for the file `name`, each of `ways` asked."""
    from indexer.evaluation.evaluate import check_relevant, evaluate
    from indexer.evaluation.html_report import report_context

    judged = questions.judged(name)
    check_relevant(engine, judged, name)
    return report_context(evaluate(engine, judged, [Way(way) for way in ways]))
