"""`lawindex` with a candidate table (and, optionally, the question rewritten: prep.py) in place of WordLlama's,
in this process only: the least intrusive way to run lawindex's own `eval` (reference engine) on a table.

Usage: python3 lawindex_with.py TABLE|wordllama [--prep stop|spell|both] -- eval ARGS...
"""

from __future__ import annotations

import sys

import numpy as np


def main() -> None:
    args = sys.argv[1:]
    cut = args.index("--")
    mine, rest = args[:cut], args[cut + 1:]
    table = mine[0]
    prep = mine[mine.index("--prep") + 1] if "--prep" in mine else None
    from indexer.retrieval import embedding, meaning, reference

    if table != "wordllama":
        import bench

        made = bench.table_embedder(bench.read_table(table))
        embedding._default.cache_clear()
        embedding._default = lambda: made  # type: ignore[assignment]
    if prep:
        import prep as rewriting

        spell, stop = prep in ("spell", "both"), prep in ("stop", "both")
        original = meaning.question_vector
        expand = reference.expand

        def expanding(question, stats):  # type: ignore[no-untyped-def]
            expanding.vocabulary = stats.spelling  # the state's vocabulary, for the question's vector
            return expand(question, stats)

        def rewritten(question, embedder=None):  # type: ignore[no-untyped-def]
            return original(rewriting.rewrite(question, expanding.vocabulary, spell, stop), embedder)

        reference.expand = expanding  # type: ignore[assignment]
        meaning.question_vector = rewritten  # type: ignore[assignment]
    sys.argv = ["lawindex", *rest]
    from indexer.cli import main as cli

    np.seterr(all="ignore")
    cli()


if __name__ == "__main__":
    main()
