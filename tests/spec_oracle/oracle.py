"""The spec's own TypeScript, made runnable: extracted from spec/retrieve.md (read where it lies, never
copied into the repository) beside corpus.ts, run.ts and answer.ts, and run with the pinned tsx."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

ORACLE = Path(__file__).resolve().parent
ROOT = ORACLE.parents[1]
TSX = ORACLE / "node_modules" / ".bin" / "tsx"
DRIVERS = ("corpus.ts", "run.ts", "answer.ts")


def spec_path() -> Path:
    """Where the spec is read: LAWINDEX_SPEC, else ../shared/spec/retrieve.md beside the repository."""
    if "LAWINDEX_SPEC" in os.environ:
        return Path(os.environ["LAWINDEX_SPEC"])
    return ROOT.parent / "shared" / "spec" / "retrieve.md"


def extract_spec(markdown: str) -> str:
    """The TypeScript of ask/retrieve.ts as the chapter lists it."""
    start = markdown.index("import { fileURLToPath }")
    end_marker = "if (process.argv[1] === fileURLToPath(import.meta.url)) main();"
    end = markdown.index(end_marker, start) + len(end_marker)
    return markdown[start:end] + "\n"


def prepare(directory: Path, spec: Path) -> Path:
    """`directory` with retrieve.ts (extracted from `spec`) and the drivers in it."""
    (directory / "retrieve.ts").write_text(extract_spec(spec.read_text(encoding="utf-8")), encoding="utf-8")
    for name in DRIVERS:
        shutil.copy(ORACLE / name, directory / name)
    return directory


def spec_ids(directory: Path, corpus_file: Path, questions: list[str]) -> list[list[str]]:
    """The ids the spec's own `bm25` returns for each of `questions` over `corpus_file`, best first."""
    return [answer["ids"] for answer in run_spec(directory, corpus_file, questions)]


def run_spec(directory: Path, corpus_file: Path, questions: list[str]) -> list[dict[str, list[str]]]:
    """The spec's own bm25 on `questions` over the laws of `corpus_file` (run.ts in `directory`, made by
    `prepare`): one {"words", "ids"} per question, in order."""

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
    if completed.returncode != 0:
        raise RuntimeError(f"the spec's TypeScript failed: {completed.stderr[-2000:]}")
    return [json.loads(line) for line in completed.stdout.splitlines()]
