"""What the lawindex plugin's tests share: the raw query over plain HTTP (no lawindex in the path), corpora
made to trip it (stopword-only laws, ties, long laws, and a pair that only float64 tells apart), and the
spec's own TypeScript as the judge.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from indexer import cache
from indexer.node import distribution, plugin
from indexer.retrieval.corpus import Law
from indexer.retrieval.scoring import exact_term_score
from tests import synthetic
from tests.integration.hostile_support import Raw
from tests.spec_oracle.oracle import prepare, run_spec, spec_path


class RawClient:
    """POST /<index>/_search with the plugin's query, by http.client on one kept-alive connection: the
    request any client would send, with nothing of lawindex's on the way."""

    def __init__(self, url: str) -> None:
        self.raw = Raw(url, timeout=60)

    def search(self, index: str, body: dict[str, object], preference: str | None = None) -> dict[str, object]:
        path = f"/{index}/_search" + (f"?preference={preference}" if preference else "")
        reply = self.raw.send("POST", path, body)
        if reply.status != 200:
            raise AssertionError(f"{reply.status} from {index}: {json.dumps(reply.body)[:2000]!r}")
        return reply.body

    def ids(self, index: str, question: str, size: int = 8, preference: str | None = None) -> list[str]:
        """The ids the plugin's query returns for `question`, best first (from the shard copy `preference`
        names, `_primary` or `_replica`, when given)."""
        body = {"size": size, "_source": ["id"], "query": {"lawindex": {"question": question, "field": "words"}}}
        hits = self.search(index, body, preference)["hits"]["hits"]  # type: ignore[index]
        return [str(hit["_source"]["id"]) for hit in hits]

    def close(self) -> None:
        self.raw.close()


def with_stopword_laws(laws: Sequence[Law], every: int = 97) -> list[Law]:
    """`laws` with a ranked law whose words are all stopwords after every `every`-th: the spec counts it in
    N and the average, Lucene's field statistics do not (the similarity's `ranked` setting)."""
    out: list[Law] = []
    for place, law in enumerate(laws):
        out.append(law)
        if place % every == every - 1:
            out.append(
                Law(
                    id=f"{law.id}-STOP",
                    kind="statute",
                    law="It is what it is, and so it should be.",
                    question="Can I?",
                    concept="it-is",
                )
            )
    return out


# The float32 tie: three words and a padding word, and two laws of the same length that have all four, so
# that N, every df and the average length do not depend on how often each law has each word.
TIE_WORDS = ("hydrant", "curb", "signal")
TIE_PAD = "zone"
TIE_LENGTH = 80


def tie_pair_corpus() -> tuple[list[Law], str, tuple[str, str]]:
    """A corpus, a question and two law ids (earlier, later in corpus order) whose spec scores for it differ
    in float64 but round to the same float32, the later one higher: Lucene's float and doc-id tie-break
    would put the earlier first, the spec puts the later first."""
    fillers: list[Law] = []
    for number in range(40):
        # Each filler has some of the words once, in a long law: they score well below the pair. Every
        # second, third and fifth has the first, second and third word: three distinct dfs, so that the
        # sums of the tf combinations are distinct too (with equal dfs, a permutation scores the same).
        words = [word for word, every in zip(TIE_WORDS, (2, 3, 5), strict=True) if number % every == 0]
        words = words or [TIE_WORDS[2]]
        text = " ".join(words + [f"filler{chr(97 + number % 26)}{number}"] * (60 + number % 7))
        fillers.append(Law(id=f"TIE-F{number:02d}", kind="statute", law=text, question="", concept="filler"))
    size = len(fillers) + 2
    filler_lengths = [len(law.law.split()) for law in fillers]  # every token is a ranked word
    average = (sum(filler_lengths) + 2 * TIE_LENGTH) / size
    df = [sum(1 for law in fillers if word in law.law.split()) + 2 for word in TIE_WORDS]

    def score(tfs: tuple[int, ...]) -> float:
        total = 0.0
        for tf, n in zip(tfs, df, strict=True):  # the question's word order: the spec's summing order
            total += exact_term_score(tf, n, size, TIE_LENGTH, average)
        return total

    scored = sorted((score(tfs), tfs) for tfs in itertools.product(range(1, 26), repeat=3))
    pair = None
    for (low, low_tfs), (high, high_tfs) in itertools.pairwise(scored):
        # Apart by many float64 units, so a last-bit difference of a logarithm cannot close the gap.
        if np.float32(low) == np.float32(high) and high - low > 64 * np.spacing(high):  # 47 such pairs
            pair = (low_tfs, high_tfs)
            break
    assert pair is not None, "no float32 tie among the tf combinations"

    def law(law_id: str, tfs: tuple[int, ...]) -> Law:
        tokens = [word for word, tf in zip(TIE_WORDS, tfs, strict=True) for _ in range(tf)]
        tokens += [TIE_PAD] * (TIE_LENGTH - len(tokens))
        return Law(id=law_id, kind="statute", law=" ".join(tokens), question="", concept="tie")

    earlier, later = law("TIE-A", pair[0]), law("TIE-B", pair[1])
    return [*fillers[:20], earlier, *fillers[20:30], later, *fillers[30:]], " ".join(TIE_WORDS), ("TIE-A", "TIE-B")


def generated(state: str, laws: int, questions: int, seed: int) -> tuple[list[Law], list[str]]:
    """A generated corpus (typos, compounds, plurals, ties, long laws, process rows, stopword-only laws) and
    questions on it, deterministic per seed."""
    made = with_stopword_laws(synthetic.generate_corpus(state, laws, seed))
    return made, synthetic.generate_questions(made, questions, seed)


def spec_ids(directory: Path, state: str, laws: Sequence[Law], questions: list[str]) -> list[list[str]]:
    """The spec's own bm25 ids for each question over `laws` (the TypeScript of ../shared/spec/retrieve.md)."""
    spec = spec_path()
    if not spec.is_file():
        raise AssertionError(f"no spec at {spec}: set LAWINDEX_SPEC")
    work = directory / f"oracle-{state}"
    work.mkdir(parents=True, exist_ok=True)
    prepare(work, spec)
    corpus_file = work / f"{state}.jsonl"
    synthetic.write_corpus(corpus_file, laws)
    return [answer["ids"] for answer in run_spec(work, corpus_file, questions)]


def node_home(version: str, where: Path) -> Path:
    """A node home of `version` made as lawindex makes one (hard links to the cached distribution), without
    plugins."""
    dist = distribution.home(version, cache.default_cache_dir())
    home = where / f"opensearch-{version}"
    shutil.copytree(dist, home, symlinks=True, copy_function=plugin._link_or_copy,
                    ignore=shutil.ignore_patterns("config", ".lawindex-complete"))  # fmt: skip
    shutil.copytree(dist / "config", home / "config", symlinks=True)
    (home / "plugins").mkdir(exist_ok=True)
    return home
