"""The spec's own TypeScript, run under Node, against indexer.retrieval.reference: the same words and ids, in order.

The code is extracted from the spec at test time (from `import { fileURLToPath }` to the line
that calls `main()`), next to tests/spec_oracle's `corpus.ts` (the spec's unshown `corpus.js`: the laws
of the JSONL file named by LAWINDEX_CORPUS) and `run.ts`. This holds the Python port to the spec itself,
including what a literal port could share with it by mistake (the tokeniser, Math.log, the sort).

The spec is read where it lies (../shared/spec/retrieve.md beside the repository, or LAWINDEX_SPEC),
never copied in. It needs node and tests/spec_oracle/install.sh (npm ci: tsx), which it runs itself when
tsx is missing. Where the spec is not there, the one test says so in one line and is skipped, except
under CI=true, where it fails; where node or tsx cannot run, it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer.retrieval import reference
from indexer.retrieval.corpus import Law, read_corpus
from tests import spec_port, synthetic
from tests.spec_oracle.oracle import ORACLE, ROOT, TSX, prepare, run_spec, spec_path

CORPORA = ROOT / "corpora"


def _unavailable(reason: str) -> None:
    # An oracle that quietly does not run proves nothing: a failure, but for a checkout without the spec
    # beside it on a laptop, which is told in one line.
    pytest.fail(f"the spec oracle cannot run: {reason}")


def _no_spec(spec: Path) -> None:
    message = f"no spec at {spec}: the spec's TypeScript cannot be run (set LAWINDEX_SPEC)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def oracle_dir(directory: Path) -> Path:
    """`directory` with the spec's TypeScript extracted into it, beside corpus.ts and run.ts."""
    spec = spec_path()
    if not spec.is_file():
        _no_spec(spec)
    if shutil.which("node") is None:
        _unavailable("node is not installed")
    if not TSX.exists():
        # tsx, pinned by package-lock.json, from the npm registry: a second on a machine that has npm.
        done = subprocess.run(["bash", str(ORACLE / "install.sh")], capture_output=True, text=True, check=False)
        if done.returncode != 0 or not TSX.exists():
            _unavailable(f"tests/spec_oracle/install.sh could not install tsx: {done.stderr.strip()[-500:]}")
    return prepare(directory, spec)


def spec_answers(directory: Path, corpus_file: Path, questions: list[str]) -> list[dict[str, list[str]]]:
    return run_spec(directory, corpus_file, questions)


def compare(directory: Path, corpus_file: Path, laws: tuple[Law, ...], questions: list[str]) -> None:
    answers = spec_answers(directory, corpus_file, questions)
    assert len(answers) == len(questions)
    for question, answer in zip(questions, answers, strict=True):
        stats = reference.statistics(laws)
        asked, _ = reference.expand(question, stats)
        assert asked == answer["words"], question
        assert [law.id for law in reference.bm25(laws, question)] == answer["ids"], question


SAMPLE_FILES = sorted(CORPORA.glob("*.jsonl")) if CORPORA.is_dir() else []


def test_the_spec_s_own_typescript_ranks_as_the_reference(tmp_path: Path) -> None:
    directory = oracle_dir(tmp_path)
    code = (directory / "retrieve.ts").read_text(encoding="utf-8")
    for name in ("export function bm25", "function spelledAs", "function oneEditApart", "function main"):
        assert name in code  # the whole module was extracted
    assert SAMPLE_FILES
    for path in SAMPLE_FILES:
        corpus = read_corpus(path)
        questions = [law.question for law in corpus.laws][:60] + synthetic.generate_questions(corpus.laws, 100, 11)
        questions += ["how far from a fire hydrant can i park", "how far must i be behing a firehydrant", ""]
        compare(directory, path, corpus.laws, questions)
    # A generated Texas-like corpus: long laws, ties, process rows, typos; and the case-mapping traps.
    laws = tuple(synthetic.generate_corpus("TX", 3000, 5))
    corpus_file = tmp_path / "TX.jsonl"
    synthetic.write_corpus(corpus_file, laws)
    questions = synthetic.generate_questions(laws, 300, 6)
    questions += ["İstanbul PARKS near \u212aelvin hydrants", "ſtop at the HYDRANTS", "Straße fire-station"]
    compare(directory, corpus_file, laws, questions)


def test_answers_decided_in_the_last_bit_are_the_spec_s(tmp_path: Path) -> None:
    # Exact float64 ties that glibc's logarithm breaks (both ways), and term scores whose sum depends on
    # the order they are added in (tests/synthetic.py: last_bit_corpora). The spec's own TypeScript says
    # what the answer is; the reference must say the same, and so must the spec's literal port.
    directory = oracle_dir(tmp_path)
    for corpus in synthetic.last_bit_corpora():
        laws = tuple(corpus.laws)
        corpus_file = tmp_path / f"{corpus.name}.jsonl"
        synthetic.write_corpus(corpus_file, laws)
        compare(directory, corpus_file, laws, corpus.questions)
        answers = [answer["ids"] for answer in spec_answers(directory, corpus_file, corpus.questions)]
        assert answers == [[law.id for law in spec_port.bm25(laws, q)] for q in corpus.questions], corpus.name
        if corpus.name == "sum-order":
            # The order of addition shows: asked in one order one law wins, in another the other.
            assert len({tuple(ids[:2]) for ids in answers}) == 2, answers
        else:
            assert all(ids[:2] == ["TX-S0101", "TX-S0701"] for ids in answers), (corpus.why, answers)
