"""The spec's own TypeScript, made runnable: extracted from ../shared/spec/retrieve.md (read where it lies, never
copied into the repository) beside corpus.ts, run.ts and answer.ts, and run with the pinned tsx.

tsx (package-lock.json) is installed by `npm ci` into lawindex's cache, not the source tree:
`<cache>/spec-oracle/<digest of package.json and package-lock.json>/node_modules` (the cache is
`LAWINDEX_CACHE`, else the one the local node uses), so a new lock gets a new folder and a checkout stays
clean. `python3 -m tests.spec_oracle.oracle install` (what install.sh runs) installs it once."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from indexer.cache import default_cache_dir

ORACLE = Path(__file__).resolve().parent
ROOT = ORACLE.parents[1]
MANIFESTS = ("package.json", "package-lock.json")
DRIVERS = ("corpus.ts", "run.ts", "answer.ts")


def install_dir() -> Path:
    """Where `npm ci` puts the oracle's node_modules: a folder of the cache named by the lock's digest."""
    digest = hashlib.sha256()
    for name in MANIFESTS:
        digest.update((ORACLE / name).read_bytes())
    return default_cache_dir() / "spec-oracle" / digest.hexdigest()[:16]


TSX = install_dir() / "node_modules" / ".bin" / "tsx"


def install() -> Path:
    """tsx, pinned by package-lock.json, installed by `npm ci` into install_dir() unless it is there; its path.

    npm writes into a folder of its own beside the final one, renamed into place when complete, so an
    interrupted install is never taken for a whole one."""
    target = install_dir()
    tsx = target / "node_modules" / ".bin" / "tsx"
    if tsx.exists():
        return tsx
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.with_name(f"{target.name}.{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    for name in MANIFESTS:
        shutil.copy(ORACLE / name, building / name)
    try:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(building)],
            cwd=building,
            stdout=sys.stderr,  # npm's summary is progress; stdout is the path printed at the end
            check=True,
        )
        try:
            building.rename(target)
        except OSError:  # another install finished first: keep its folder
            if not tsx.exists():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return tsx


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


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        raise SystemExit("usage: python3 -m tests.spec_oracle.oracle install")
    print(install())
