"""The spec's own TypeScript, run under Node, against indexer.reference: the same ids, in the same order.

The code is extracted from spec/retrieve.md at test time (from `import { fileURLToPath }` to the line
that calls `main()`), next to tests/spec_oracle's `corpus.ts` (the spec's unshown `corpus.js`: the laws
of the JSONL file named by LAWINDEX_CORPUS) and `run.ts`. This holds the Python port to the spec itself,
including what a literal port could share with it by mistake (the tokeniser, Math.log, the sort).

Needs node and `tests/spec_oracle/install.sh` (npm ci: tsx). Without them it skips on a laptop and
fails under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer import reference
from indexer.corpus import Law, read_corpus
from tests import synthetic

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "spec_oracle"
TSX = ORACLE / "node_modules" / ".bin" / "tsx"
CORPORA = ROOT / "corpora"


def _spec_path() -> Path:
    if "LAWINDEX_SPEC" in os.environ:
        return Path(os.environ["LAWINDEX_SPEC"])
    return ROOT.parent / "shared" / "spec" / "retrieve.md"


def _unavailable(reason: str) -> None:
    # Never a skip: an oracle that quietly does not run proves nothing, on a laptop or in CI.
    pytest.fail(f"the spec oracle cannot run: {reason}")


def extract_spec(markdown: str) -> str:
    """The TypeScript of ask/retrieve.ts as the chapter lists it."""
    start = markdown.index("import { fileURLToPath }")
    end_marker = "if (process.argv[1] === fileURLToPath(import.meta.url)) main();"
    end = markdown.index(end_marker, start) + len(end_marker)
    return markdown[start:end] + "\n"


@pytest.fixture(scope="module")
def oracle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = _spec_path()
    if not spec.is_file():
        _unavailable(f"no spec at {spec} (set LAWINDEX_SPEC)")
    if shutil.which("node") is None:
        _unavailable("node is not installed")
    if not TSX.exists():
        # tsx, pinned by package-lock.json, from the npm registry: a second on a machine that has npm.
        done = subprocess.run(["bash", str(ORACLE / "install.sh")], capture_output=True, text=True, check=False)
        if done.returncode != 0 or not TSX.exists():
            _unavailable(f"tests/spec_oracle/install.sh could not install tsx: {done.stderr.strip()[-500:]}")
    directory = tmp_path_factory.mktemp("spec_oracle")
    (directory / "retrieve.ts").write_text(extract_spec(spec.read_text(encoding="utf-8")), encoding="utf-8")
    for name in ("corpus.ts", "run.ts"):
        shutil.copy(ORACLE / name, directory / name)
    return directory


def spec_answers(directory: Path, corpus_file: Path, questions: list[str]) -> list[dict[str, list[str]]]:
    questions_file = directory / "questions.jsonl"
    questions_file.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    completed = subprocess.run(
        [str(TSX), str(directory / "run.ts")],
        env={**os.environ, "LAWINDEX_CORPUS": str(corpus_file), "LAWINDEX_QUESTIONS": str(questions_file)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return [json.loads(line) for line in completed.stdout.splitlines()]


def compare(directory: Path, corpus_file: Path, laws: tuple[Law, ...], questions: list[str]) -> None:
    answers = spec_answers(directory, corpus_file, questions)
    assert len(answers) == len(questions)
    for question, answer in zip(questions, answers, strict=True):
        stats = reference.statistics(laws)
        asked, _ = reference.expand(question, stats)
        assert asked == answer["words"], question
        assert [law.id for law in reference.bm25(laws, question)] == answer["ids"], question


def test_extraction_takes_the_whole_module() -> None:
    spec = _spec_path()
    if not spec.is_file():
        _unavailable(f"no spec at {spec}")
    code = extract_spec(spec.read_text(encoding="utf-8"))
    assert code.startswith("import { fileURLToPath }")
    for name in ("export function bm25", "function spelledAs", "function oneEditApart", "function main"):
        assert name in code


SAMPLE_FILES = sorted(CORPORA.glob("*.jsonl")) if CORPORA.is_dir() else []


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[p.stem for p in SAMPLE_FILES])
def test_sample_corpora_rank_as_the_spec(oracle_dir: Path, path: Path) -> None:
    corpus = read_corpus(path)
    questions = [law.question for law in corpus.laws][:60] + synthetic.generate_questions(corpus.laws, 100, 11)
    questions += ["how far from a fire hydrant can i park", "how far must i be behing a firehydrant", ""]
    compare(oracle_dir, path, corpus.laws, questions)


def test_a_generated_corpus_ranks_as_the_spec(oracle_dir: Path, tmp_path: Path) -> None:
    laws = tuple(synthetic.generate_corpus("TX", 3000, 5))
    corpus_file = tmp_path / "TX.jsonl"
    corpus_file.write_text("".join(law.model_dump_json(exclude_none=True) + "\n" for law in laws), encoding="utf-8")
    questions = synthetic.generate_questions(laws, 300, 6)
    questions += ["İstanbul PARKS near \u212aelvin hydrants", "ſtop at the HYDRANTS", "Straße fire-station"]
    compare(oracle_dir, corpus_file, laws, questions)
