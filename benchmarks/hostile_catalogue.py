"""The hostile catalogue of tests/integration/test_hostile_catalogue.py, counted instead of asserted, on both
paths of one node (an index built for the lawindex plugin, and one without it): answers equal to the reference
engine's, answers given on the index's own path, the family whole, the requests sent (how many, the largest,
how many over search_limits.PAGE laws) and the circuit breakers tripped meanwhile.

    python benchmarks/hostile_catalogue.py --url URL

Run with another tree's lawindex first on PYTHONPATH (and this file and the test beside it copied in) to
count that tree: benchmarks/RESULTS.md, "The hostile catalogue on the default node, both paths".
"""

from __future__ import annotations

import argparse
import logging
import os

from indexer.opensearch.read import search_limits
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.retrieval import reference
from tests.integration.support import fresh_connection
from tests.integration.test_hostile_catalogue import CORPUS, FAMILY, QUESTIONS, STATE, Watched, tripped


def count(url: str, plugin: bool) -> str:
    with fresh_connection(url) as connection:
        load_state(connection.client(), CORPUS, LoadOptions(namespace=connection.namespace, plugin=plugin))
        before = tripped(url)
        engine = Watched(connection)
        exact = own_path = reaching = 0
        for question, limit in QUESTIONS:
            truth = reference.ask(CORPUS, question, limit)
            try:
                got = engine.words.ask(STATE, question, limit)
            except Exception as error:  # counted, and said: a failure is a figure here
                print(f"  failed: {question[:40]!r}: {type(error).__name__}: {str(error)[:160]}")
                continue
            same = [(h.law.id, h.score) for h in got.hits] == [(h.law.id, h.score) for h in truth.hits]
            exact += same and got.terms == truth.terms
            if truth.terms:
                reaching += 1
                own_path += got.window is not None and got.window.plugin == plugin
        family = [law.id for law in engine.family(STATE, "permit")]
        whole = family == [law.id for law in CORPUS.laws if law.family == "permit"] and len(family) == FAMILY
        over = sum(size > search_limits.PAGE for size in engine.sizes)
        return (
            f"{'plugin' if plugin else 'window'}: exact {exact}/{len(QUESTIONS)}, on its own path "
            f"{own_path}/{reaching}, family of {FAMILY} whole: {whole}, requests {len(engine.sizes)}, largest "
            f"{max(engine.sizes)} laws, over {search_limits.PAGE}: {over}, breakers tripped {tripped(url) - before}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the fallbacks' stderr lines: counted in "on its own path"
    for plugin in (True, False):
        print(count(args.url, plugin), flush=True)


if __name__ == "__main__":
    main()
