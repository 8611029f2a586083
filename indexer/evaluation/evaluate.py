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
the questions each wins, loses and ties on nDCG@8, and whether the difference of each measure is more than
chance (paired randomization and t tests, indexer.evaluation.significance); between this run and an earlier
one (`--against`, its `--json`), the same tests per way on the questions both asked.

A judged question may name its `split` (`tuning` or `held-out`): `--split` keeps that half only, so that
the fusion is chosen on one half and measured on the other.

A relevant row may carry a grade (`{"id": "XX-S01", "grade": 2}`, or a qrels line's REL): nDCG@8 weighs it so;
recall@8 and MRR@8 count every grade above 0 as relevant.

Long: one evaluation read top to bottom, from the judged files (JSON lines, qrels) and their checks, through the
asking and the measures, to what `--json` and `--run` write; the CLI and the page's eval view
(indexer.evaluation.view) share all of it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.errors import BadInput, CorpusError
from indexer.retrieval.corpus import state_code
from indexer.retrieval.files import text_lines
from indexer.retrieval.request import DEFAULT_FUSION, Fusion, Request, Way

if TYPE_CHECKING:
    from indexer.evaluation.significance import Paired
    from indexer.service.engines import Engine

CUTOFF = 8
# How deep each way is asked: the most `ask` returns. A relevant row past it is "not in the first 100".
DEPTH = 100
MEASURES = ("R@8", "RR@8", "nDCG@8")
SPLITS = ("tuning", "held-out")
NAMES = {"R@8": "recall@8", "RR@8": "MRR@8", "nDCG@8": "nDCG@8"}
# Judged questions, qrels and an earlier run are read whole (indexer.retrieval.files): a judged line is a
# question (2,000 characters at most) and its laws' ids, an earlier run's line a question's measures.
MAX_FILE_BYTES = 64 << 20
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Judged:
    """One judged question."""

    id: str
    state: str
    question: str
    relevant: tuple[str, ...]
    split: str | None = None  # tuning or held-out (SPLITS), or None: in no half
    grades: tuple[int, ...] = ()  # per relevant row, its grade (>= 1); empty: every one 1


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

    def values(self, way: str, measure: str) -> list[float]:
        """`way`'s value of `measure` for each judged question, in order."""
        return [asked.scores[measure] for asked in self.asked[way]]

    def significance(self, first: str, second: str, measure: str) -> Paired:
        """The paired tests of `first` against `second` on `measure` (indexer.evaluation.significance)."""
        from indexer.evaluation.significance import paired

        return paired(first, second, NAMES[measure], self.values(first, measure), self.values(second, measure))


def against(report: Report, earlier: Path) -> list[Paired]:
    """Each way of `report` against the same way in `earlier` (a `lawindex eval --json` output), on every
    measure, paired over the questions both asked (by id); BadInput when they share no question and way."""
    from indexer.evaluation.significance import paired

    before: dict[str, dict[str, dict[str, float]]] = {}  # way -> question id -> measure name -> value
    for number, obj in _json_lines(earlier):
        if obj.get("kind") != "question":
            continue
        ways = obj.get("ways")
        if not isinstance(ways, dict) or not isinstance(obj.get("id"), str):
            raise CorpusError(str(earlier), number, "ways", "not a `lawindex eval --json` question")
        for way, measures in ways.items():
            if isinstance(measures, dict):
                before.setdefault(way, {})[obj["id"]] = measures
    found = []
    for way in report.ways:
        kept = before.get(way, {})
        numbers = [n for n, one in enumerate(report.judged) if one.id in kept]
        if not numbers:
            continue
        for measure in MEASURES:
            now = [report.asked[way][n].scores[measure] for n in numbers]
            try:
                then = [float(kept[report.judged[n].id][NAMES[measure]]) for n in numbers]
            except (KeyError, TypeError, ValueError):
                raise BadInput(f"{earlier}: a question of {way} has no number for {NAMES[measure]}") from None
            found.append(paired(f"{way} (this run)", f"{way} ({earlier.name})", NAMES[measure], now, then))
    if not found:
        raise BadInput(f"{earlier}: no question and way in common with this run")
    return found


def _field(obj: dict[str, Any], name: str, file: str, line: int) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(file, line, name, "must be a non-empty string")
    return value


def _json_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in _lines(path):
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


def _lines(path: Path) -> list[tuple[int, str]]:
    """The numbered lines of one of eval's files, within its bounds (indexer.retrieval.files)."""
    return text_lines(path, MAX_FILE_BYTES, MAX_LINE_BYTES)


def read_judged(path: Path, questions: Path | None = None) -> list[Judged]:
    """The judged questions of `path`: JSON lines, or TREC qrels with `questions` (JSON lines)."""
    head = next((line for _, line in _lines(path) if line.strip()), "")
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
        relevant = _graded(obj.get("relevant"), file, number)
        name = obj.get("id", f"q{number}")
        if not isinstance(name, str) or not name or name in seen:
            raise CorpusError(file, number, "id", f"must be a unique non-empty string, got {name!r}")
        split = obj.get("split")
        if split is not None and split not in SPLITS:
            raise CorpusError(file, number, "split", f"must be one of {', '.join(SPLITS)}, got {split!r}")
        seen.add(name)
        judged.append(Judged(name, state, question, tuple(relevant), split, tuple(relevant.values())))
    return judged


def _graded(relevant: Any, file: str, line: int) -> dict[str, int]:
    """A line's `relevant`: law ids, or `{"id", "grade"}` objects (grade an integer >= 1), to id -> grade."""
    if not isinstance(relevant, list) or not relevant:
        raise CorpusError(file, line, "relevant", "must be a non-empty list of law ids")
    graded: dict[str, int] = {}
    for item in relevant:
        if isinstance(item, dict):
            law, grade = item.get("id"), item.get("grade", 1)
        else:
            law, grade = item, 1
        if not isinstance(law, str) or not law:
            raise CorpusError(file, line, "relevant", "must be a non-empty list of law ids (or {id, grade})")
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            raise CorpusError(file, line, "relevant", f"a grade must be an integer >= 1, got {grade!r}")
        graded.setdefault(law, grade)
    return graded


def of_split(judged: Sequence[Judged], split: str | None) -> list[Judged]:
    """The judged questions of `split` (all of them for None); BadInput when none is of it."""
    if split is None:
        return list(judged)
    if split not in SPLITS:
        raise BadInput(f"unknown split {split!r}", hint=f"use one of: {', '.join(SPLITS)}")
    chosen = [one for one in judged if one.split == split]
    if not chosen:
        raise BadInput(f"no judged question is of the {split} split", hint="a line names its half in 'split'")
    return chosen


def _state(value: str, file: str, line: int) -> str:
    try:
        return state_code(value)
    except BadInput as error:
        raise CorpusError(file, line, "state", error.message) from None


def _from_trec(path: Path, questions: Path | None) -> list[Judged]:
    if questions is None:
        raise BadInput(f"{path}: TREC qrels need --questions FILE (JSON lines of id, state, question)")
    relevant: dict[str, dict[str, int]] = {}
    for number, line in _lines(path):
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
            relevant.setdefault(parts[0], {}).setdefault(parts[2], grade)
    judged = []
    for number, obj in _json_lines(questions):
        name = _field(obj, "id", str(questions), number)
        state = _state(_field(obj, "state", str(questions), number), str(questions), number)
        if name in relevant:
            graded = relevant[name]
            split = obj.get("split") if obj.get("split") in SPLITS else None
            judged.append(
                Judged(name, state, _field(obj, "question", str(questions), number), tuple(graded), split,
                       tuple(graded.values()))
            )  # fmt: skip
    unknown = sorted(set(relevant) - {one.id for one in judged})
    if unknown:
        raise BadInput(f"{path}: questions {', '.join(unknown[:5])} are not in {questions}")
    return judged


def check_relevant(engine: Engine, judged: Sequence[Judged], source: str) -> None:
    """Every judged id is a law of its state (a typo in a judgment would count as a miss forever); BadInput
    naming `source` (the file), the question and the law for one that is not."""
    seen: set[tuple[str, str]] = set()
    for number, one in enumerate(judged, 1):
        for law in one.relevant:
            if (one.state, law) in seen:
                continue
            try:
                engine.get(one.state, law)
            except BadInput as error:
                raise BadInput(f"{source}: question {one.id} (#{number}): field 'relevant': {error.message}") from None
            seen.add((one.state, law))


def evaluate(
    engine: Engine,
    judged: Sequence[Judged],
    ways: Sequence[Way],
    fusion: Fusion = DEFAULT_FUSION,
) -> Report:
    """Every judged question asked each way, and the measures, by ir-measures."""
    import ir_measures

    measures = [ir_measures.parse_measure(name) for name in MEASURES]
    qrels = qrels_of(judged)
    asked: dict[str, list[Asked]] = {}
    overall: dict[str, dict[str, float]] = {}
    states: dict[str, dict[str, dict[str, float]]] = {}
    for asking in ways:
        way = Way(asking).value
        taken = fusion if way == Way.hybrid else DEFAULT_FUSION
        rows = [Asked(engine.ask(Request(one.state, one.question, Way(way), DEPTH, taken)).ids()) for one in judged]
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
    return Report(tuple(Way(way).value for way in ways), list(judged), asked, overall, states)


def qrels_of(judged: Sequence[Judged]) -> list[Any]:
    """The judgements as ir-measures' qrels: each relevant row with its grade (1 when none is given)."""
    import ir_measures

    return [
        ir_measures.Qrel(one.id, law, one.grades[number] if one.grades else 1)
        for one in judged
        for number, law in enumerate(one.relevant)
    ]


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
             **({"split": one.split} if one.split else {}), "relevant": list(one.relevant), "ways": ways}
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
        "significance": [paired_object(report.significance(a, b, measure)) for a, b in pairs for measure in MEASURES],
    }


def paired_object(found: Paired) -> dict[str, Any]:
    """One paired comparison as `--json` writes it."""
    return {
        "first": found.first, "second": found.second, "measure": found.measure,
        "first_mean": found.first_mean, "second_mean": found.second_mean, "difference": found.difference,
        "randomization_p": found.randomization_p, "t_p": found.t_p, "significant": found.significant,
    }  # fmt: skip
