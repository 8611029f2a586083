"""The measure used to choose: lawindex's own reference engine pieces (the spec's words ranking, the exact
meaning ranking from a table, the weighted RRF of indexer.retrieval.meaning.fuse), with a candidate table
swapped into lawindex's embedder in process. The words rankings are computed once; the measures by
ir-measures, as `lawindex eval` computes them (checked: `python3 bench.py` reproduces its figures)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAIN = Path(__import__("os").environ.get("LAWINDEX_MAIN", Path(__file__).resolve().parents[1]))
MEASURES = ("R@8", "RR@8", "nDCG@8")


def table_embedder(matrix: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    """lawindex's embedder with WordLlama's own table, its matrix replaced by `matrix` (float16 values), or as
    WordLlama shipped it."""
    from indexer.retrieval import embedding

    made = embedding.StaticEmbedder(embedding.wordllama_files()[1], embedding.WORDLLAMA)
    if matrix is not None:
        assert matrix.shape == (32000, 256), matrix.shape
        made._matrix = np.ascontiguousarray(matrix.astype(np.float16).astype(np.float32))
        made._exact = embedding.exact_terms(made._matrix)
        assert made._exact > 100_000, "the table's values are too large for the exact sum"
        made._version = "candidate+" + __import__("hashlib").sha256(made._matrix.tobytes()).hexdigest()[:12]
    return made


def read_table(path: str | Path) -> np.ndarray:
    from safetensors.numpy import load_file

    return load_file(str(path))["embedding.weight"]


def write_table(path: str | Path, matrix: np.ndarray) -> str:
    import hashlib

    from safetensors.numpy import save_file

    save_file({"embedding.weight": np.ascontiguousarray(matrix.astype(np.float16))}, str(path))
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass
class Question:
    id: str
    text: str
    grades: dict[str, int]
    words: list[int]  # the spec's words ranking (row indexes), every law sharing a word
    terms: list[str]


@dataclass
class Set:
    name: str
    laws: list  # type: ignore[type-arg]
    questions: list[Question] = field(default_factory=list)
    stats: object = None


def load_set(name: str, judged_file: Path, corpora: Path, split: str | None = None) -> list[Set]:
    from indexer.evaluation.evaluate import of_split, read_judged
    from indexer.retrieval import reference
    from indexer.retrieval.corpus import read_corpus

    judged = of_split(read_judged(judged_file), split)
    sets: dict[str, Set] = {}
    for one in judged:
        if one.state not in sets:
            laws = list(read_corpus(corpora / f"{one.state}.jsonl").laws)
            sets[one.state] = Set(f"{name}/{one.state}", laws, stats=reference.statistics(laws))
        s = sets[one.state]
        _, terms = reference.expand(one.question, s.stats)
        words = [h.order for h in reference.top_hits(s.stats, s.laws, terms, len(s.laws))] if terms else []
        grades = {law: (one.grades[i] if one.grades else 1) for i, law in enumerate(one.relevant)}
        s.questions.append(Question(one.id, one.question, grades, words, terms))
    return list(sets.values())


def tuning_sets() -> dict[str, list[Set]]:
    return {
        "handbook-tuning": load_set("handbook-tuning", MAIN / "eval/handbook.jsonl", MAIN / "eval/corpora", "tuning"),
        "samples": load_set("samples", MAIN / "eval/questions.jsonl", MAIN / "corpora"),
    }


def rankings(embedder, sets: Sequence[Set], prepare: Callable[[str, Set], str] | None = None):  # type: ignore[no-untyped-def]
    """Per question of each set: (words ranking, meaning ranking) as row indexes."""
    from indexer.retrieval.embedding import cosines, row_text
    from indexer.retrieval.meaning import meaning_order

    out = []
    for s in sets:
        rows = embedder.embed([row_text(law) for law in s.laws])
        texts = [prepare(q.text, s) if prepare else q.text for q in s.questions]
        asked = embedder.embed(texts)
        for q, vector in zip(s.questions, asked, strict=True):
            order = meaning_order(cosines(rows, vector)) if vector.any() else []
            out.append((s, q, order))
    return out


def measure(ranked, way: str, rrf_k: int = 5, words_weight: float = 1.0, meaning_weight: float = 4.0,
            per_question: bool = False):  # type: ignore[no-untyped-def]
    import ir_measures

    from indexer.retrieval.meaning import fuse
    from indexer.retrieval.request import Fusion

    qrels, run = [], []
    for s, q, order in ranked:
        for law, grade in q.grades.items():
            qrels.append(ir_measures.Qrel(q.id, law, grade))
        if way == "words":
            top = q.words[:8]
        elif way == "meaning":
            top = order[:8]
        else:
            fusion = Fusion(rrf_k, words_weight, meaning_weight)
            top = [r.index for r in fuse(q.words, order, fusion)[:8]] if order else []
        run.extend(ir_measures.ScoredDoc(q.id, s.laws[i].id, float(100 - n)) for n, i in enumerate(top))
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    total = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    result = {m: round(total.get(m, 0.0), 4) for m in MEASURES}
    if per_question:
        each = {q.id: {m: 0.0 for m in MEASURES} for _, q, _ in ranked}
        for metric in ir_measures.iter_calc(measures, qrels, run):
            each[metric.query_id][str(metric.measure)] = float(metric.value)
        return result, each
    return result


def report(embedder, sets: dict[str, list[Set]], prepare=None, fusion=(5, 1.0, 4.0)) -> dict:  # type: ignore[no-untyped-def]
    out = {}
    for name, group in sets.items():
        ranked = rankings(embedder, group, prepare)
        out[name] = {way: measure(ranked, way, *fusion) for way in ("words", "meaning", "hybrid")}
    return out


if __name__ == "__main__":
    table = read_table(sys.argv[1]) if len(sys.argv) > 1 else None
    print(json.dumps(report(table_embedder(table), tuning_sets()), indent=1))


def dev_measure(embedder) -> dict:  # type: ignore[no-untyped-def]
    """Meaning alone on the traindata topics kept out of training (common.DEV_TOPICS): each question against
    every passage of every topic, recall@8 and MRR@8 of its own passage."""
    import common

    from indexer.retrieval.embedding import cosines
    from indexer.retrieval.meaning import meaning_order

    items = common.traindata(dev=True) + common.traindata()
    passages = sorted({it["passage"] for it in items})
    where = {p: n for n, p in enumerate(passages)}
    rows = embedder.embed(passages)
    recall = rr = 0.0
    count = 0
    for it in common.traindata(dev=True):
        for q in it["questions"]:
            order = meaning_order(cosines(rows, embedder.embed([q])[0]))[:8]
            if where[it["passage"]] in order:
                recall += 1
                rr += 1 / (order.index(where[it["passage"]]) + 1)
            count += 1
    return {"questions": count, "R@8": round(recall / count, 4), "RR@8": round(rr / count, 4)}
