"""`lawindex eval`: what each way (`--by words|meaning|hybrid`) reaches, against judged questions.

Judged questions are JSON lines, `{"state": "TX", "question": "...", "relevant": ["TX-S01", ...]}` (an
optional `"id"` names the question; else `q<line>`), or TREC qrels (`QID 0 DOCID REL`, REL > 0 relevant)
with a questions file of JSON lines `{"id", "state", "question"}`. Every line is checked, and a bad one is
one error naming file, line and field.

Each question is asked each way through an engine (the reference or OpenSearch), `DEPTH` rows deep; the
measures are recall@8, MRR@8 (the reciprocal rank of the first relevant row within 8) and nDCG@8 (binary
gains), computed by ir-measures (its pytrec_eval backend, trec_eval's own code), never by hand: overall
and per state. ir-measures, as trec_eval, sorts a run by score and breaks ties by document id, so the run it
is given scores each row by its rank turned around (DEPTH - rank + 1), never by the engine's score, which
ties: the order measured is the order the engine returned. `--run FILE` writes the same run.

Per question: the relevant rows each way left out of its first 8, with the rank it reached (None: not in
its first DEPTH; by words, a row sharing no word with the question is never reached). Between two ways:
the questions each wins, loses and ties on nDCG@8.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import BadInput, CorpusError
from indexer.retrieval.corpus import state_code

if TYPE_CHECKING:
    from indexer.service.engines import Engine

CUTOFF = 8
# How deep each way is asked: the most `ask` returns. A relevant row past it is "not in the first 100".
DEPTH = 100
MEASURES = ("R@8", "RR@8", "nDCG@8")
NAMES = {"R@8": "recall@8", "RR@8": "MRR@8", "nDCG@8": "nDCG@8"}


@dataclass(frozen=True)
class Judged:
    """One judged question."""

    id: str
    state: str
    question: str
    relevant: tuple[str, ...]


@dataclass
class Asked:
    """One question asked one way: the rows returned, best first, and its measures."""

    ids: list[str]
    scores: dict[str, float] = field(default_factory=dict)  # measure -> value

    def rank(self, law: str) -> int | None:
        """The rank (from 1) the way gave `law`, or None when it is not among the rows returned."""
        return self.ids.index(law) + 1 if law in self.ids else None


@dataclass(frozen=True)
class Report:
    """The evaluation of several ways over the same judged questions."""

    ways: tuple[str, ...]
    judged: list[Judged]
    asked: dict[str, list[Asked]]  # way -> one per judged question, in order
    overall: dict[str, dict[str, float]]  # way -> measure -> mean
    states: dict[str, dict[str, dict[str, float]]]  # state -> way -> measure -> mean

    def missed(self, way: str, number: int) -> list[tuple[str, int | None]]:
        """The relevant rows of question `number` that `way` left out of its first CUTOFF, with their rank."""
        asked = self.asked[way][number]
        ranks = [(law, asked.rank(law)) for law in self.judged[number].relevant]
        return [(law, rank) for law, rank in ranks if rank is None or rank > CUTOFF]

    def wins(self, first: str, second: str, measure: str = "nDCG@8") -> tuple[int, int, int]:
        """How many questions `first` wins, loses and ties against `second` on `measure`."""
        won = lost = tied = 0
        for a, b in zip(self.asked[first], self.asked[second], strict=True):
            if a.scores[measure] > b.scores[measure]:
                won += 1
            elif a.scores[measure] < b.scores[measure]:
                lost += 1
            else:
                tied += 1
        return won, lost, tied


def _field(obj: dict[str, Any], name: str, file: str, line: int) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(file, line, name, "must be a non-empty string")
    return value


def _json_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"{path}: cannot read: {error}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as error:
            raise CorpusError(str(path), number, None, f"not JSON ({error.msg})") from None
        if not isinstance(obj, dict):
            raise CorpusError(str(path), number, None, "not a JSON object")
        rows.append((number, obj))
    return rows


def read_judged(path: Path, questions: Path | None = None) -> list[Judged]:
    """The judged questions of `path`: JSON lines, or TREC qrels with `questions` (JSON lines)."""
    try:
        head = next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"{path}: cannot read: {error}") from None
    judged = _from_json(path) if head.lstrip().startswith("{") else _from_trec(path, questions)
    if not judged:
        raise BadInput(f"{path}: no judged questions")
    return judged


def _from_json(path: Path) -> list[Judged]:
    judged, seen = [], set()
    for number, obj in _json_lines(path):
        file = str(path)
        state = _state(_field(obj, "state", file, number), file, number)
        question = _field(obj, "question", file, number)
        relevant = obj.get("relevant")
        if not isinstance(relevant, list) or not relevant or not all(isinstance(x, str) and x for x in relevant):
            raise CorpusError(file, number, "relevant", "must be a non-empty list of law ids")
        name = obj.get("id", f"q{number}")
        if not isinstance(name, str) or not name or name in seen:
            raise CorpusError(file, number, "id", f"must be a unique non-empty string, got {name!r}")
        seen.add(name)
        judged.append(Judged(name, state, question, tuple(dict.fromkeys(relevant))))
    return judged


def _state(value: str, file: str, line: int) -> str:
    try:
        return state_code(value)
    except BadInput as error:
        raise CorpusError(file, line, "state", error.message) from None


def _from_trec(path: Path, questions: Path | None) -> list[Judged]:
    if questions is None:
        raise BadInput(f"{path}: TREC qrels need --questions FILE (JSON lines of id, state, question)")
    relevant: dict[str, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise CorpusError(str(path), number, None, "a qrels line is QID ITERATION DOCID RELEVANCE")
        try:
            grade = int(parts[3])
        except ValueError:
            raise CorpusError(str(path), number, "relevance", f"not an integer: {parts[3]!r}") from None
        if grade > 0:
            relevant.setdefault(parts[0], []).append(parts[2])
    judged = []
    for number, obj in _json_lines(questions):
        name = _field(obj, "id", str(questions), number)
        state = _state(_field(obj, "state", str(questions), number), str(questions), number)
        if name in relevant:
            judged.append(Judged(name, state, _field(obj, "question", str(questions), number), tuple(relevant[name])))
    unknown = sorted(set(relevant) - {one.id for one in judged})
    if unknown:
        raise BadInput(f"{path}: questions {', '.join(unknown[:5])} are not in {questions}")
    return judged


def evaluate(engine: Engine, judged: Sequence[Judged], ways: Sequence[str], rrf_k: int = 60) -> Report:
    """Every judged question asked each way, and the measures, by ir-measures."""
    import ir_measures

    measures = [ir_measures.parse_measure(name) for name in MEASURES]
    qrels = [ir_measures.Qrel(one.id, law, 1) for one in judged for law in one.relevant]
    asked: dict[str, list[Asked]] = {}
    overall: dict[str, dict[str, float]] = {}
    states: dict[str, dict[str, dict[str, float]]] = {}
    for way in ways:
        rows = [Asked(engine.ask(one.state, one.question, DEPTH, way, rrf_k).ids()) for one in judged]
        asked[way] = rows
        run = run_of(judged, rows)
        by_query = {one.id: number for number, one in enumerate(judged)}
        for name in MEASURES:
            for row in rows:
                row.scores[name] = 0.0  # a question none of whose relevant rows is returned
        for metric in ir_measures.iter_calc(measures, qrels, run):
            rows[by_query[metric.query_id]].scores[str(metric.measure)] = float(metric.value)
        overall[way] = _named(ir_measures.calc_aggregate(measures, qrels, run))
        for state in sorted({one.state for one in judged}):
            ids = {one.id for one in judged if one.state == state}
            aggregate = ir_measures.calc_aggregate(
                measures, [q for q in qrels if q.query_id in ids], [r for r in run if r.query_id in ids]
            )
            states.setdefault(state, {})[way] = _named(aggregate)
    return Report(tuple(ways), list(judged), asked, overall, states)


def _named(aggregate: dict[Any, float]) -> dict[str, float]:
    return {name: float(aggregate.get(_measure(name), 0.0)) for name in MEASURES}


def _measure(name: str) -> Any:
    import ir_measures

    return ir_measures.parse_measure(name)


def run_of(judged: Sequence[Judged], rows: Sequence[Asked]) -> list[Any]:
    """The TREC run of one way: each row scored by its rank turned around (see the module's docstring)."""
    import ir_measures

    return [
        ir_measures.ScoredDoc(one.id, law, float(DEPTH - rank + 1))
        for one, row in zip(judged, rows, strict=True)
        for rank, law in enumerate(row.ids, 1)
    ]


def trec_run(report: Report, way: str) -> str:
    """The run of `way` as a TREC run file: `QID Q0 DOCID RANK SCORE lawindex-<way>`, a line a row."""
    lines = [
        f"{one.id} Q0 {law} {rank} {DEPTH - rank + 1} lawindex-{way}"
        for one, row in zip(report.judged, report.asked[way], strict=True)
        for rank, law in enumerate(row.ids, 1)
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def question_objects(report: Report) -> list[dict[str, Any]]:
    """One JSON object per question: its hits, measures and misses each way."""
    found = []
    for number, one in enumerate(report.judged):
        ways = {}
        for way in report.ways:
            asked = report.asked[way][number]
            ways[way] = {
                "hits": asked.ids[:CUTOFF],
                **{NAMES[name]: asked.scores[name] for name in MEASURES},
                "missed": [{"id": law, "rank": rank} for law, rank in report.missed(way, number)],
            }
        found.append(
            {"kind": "question", "id": one.id, "state": one.state, "question": one.question,
             "relevant": list(one.relevant), "ways": ways}
        )  # fmt: skip
    return found


def summary_object(report: Report) -> dict[str, Any]:
    """The measures overall and per state, each way, and the wins and losses of each pair of ways."""
    named = {way: {NAMES[name]: value for name, value in measures.items()} for way, measures in report.overall.items()}
    pairs = [(a, b) for i, a in enumerate(report.ways) for b in report.ways[i + 1 :]]
    return {
        "kind": "summary",
        "questions": len(report.judged),
        "overall": named,
        "states": {
            state: {way: {NAMES[name]: value for name, value in measures.items()} for way, measures in ways.items()}
            for state, ways in report.states.items()
        },
        "wins": [
            dict(zip(("first", "second", "wins", "losses", "ties"), (a, b, *report.wins(a, b)), strict=True))
            for a, b in pairs
        ],
    }
