"""Meaning and hybrid against words: what the vectors cost to make, to load, to ask, to keep and to serve.

    python -m benchmarks.meaning [--url URL] [--laws 6000] [--questions 100] [--rounds 2]
                                 [--states 50 --memory-laws 15000] [--port 12100] [--before URL]

Every figure is printed beside its words baseline, measured in the same run on the same corpus and the same
questions (equal work both sides), and as a ratio to it:

- embedding: a generated Texas-size corpus (--laws) embedded by the shipped embedder (indexer.retrieval.embedding),
  against the words a load computes of the same laws (indexer.retrieval.reference.statistics: words() and the
  counts of every law); the embedder's own load (once a process) apart.
- load: the same corpus by `load_state` with its vectors and without them (the words-only load of a cluster
  without k-NN), each in a namespace of its own, rounds alternating; the size of each index's store after it
  (`_stats`, primaries, after the load's own merge to one segment) and what the vectors add; the same for
  each of the seven sample states (corpora/).
- ask: `--by words`, `--by meaning`, `--by hybrid` on OpenSearch (the index with vectors) and in process (the
  reference engine, indexer.retrieval.meaning), the same questions each, rounds alternating the ways; p50 and
  p99 of each question's latency, and each way's p50 over words' on the same engine; on OpenSearch also hybrid
  with both rankings fetched whole (its first window the state's size: what hybrid did before its windows).
- plugin, before: with `--before URL`, a second node whose lawindex plugin is another tree's (main's, say: start
  it with that tree's `lawindex opensearch start`); the plugin-path state loaded on it too and asked the same
  questions, alternating with this node question by question, so that a change to the plugin is measured
  against the plugin it replaces in the same run, on the same loaded machine. `--skip windows inprocess` leaves
  out the other engines (and the k-NN load the windows need).
- memory: `lawindex serve` (one worker, its own process) on --states generated states (--memory-laws laws in
  all), loaded with vectors and without; its resident memory at start, after 5 questions a state by words, and
  (with vectors) after 5 more a state by meaning and 5 by hybrid.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.serve import percentile, rss_mib, start_serve, stop_serve
from indexer.opensearch.cluster import vector_layout
from indexer.opensearch.cluster.connection import Connection
from indexer.opensearch.cluster.vector_layout import Meaning
from indexer.opensearch.read import vectors
from indexer.opensearch.read.engine import OpenSearchEngine
from indexer.opensearch.write.load import LoadOptions, load_state
from indexer.opensearch.write.lock import ensure_locks_index
from indexer.retrieval import meaning as rank
from indexer.retrieval import reference
from indexer.retrieval.corpus import Corpus, read_corpora
from indexer.retrieval.embedding import StaticEmbedder, default_embedder, row_text
from indexer.retrieval.request import Request, Way
from tests import synthetic

WAYS = ("words", "meaning", "hybrid")
SECTIONS = ["embedding", "load", "ask", "plugin", "whole", "windows", "inprocess", "samples", "memory"]
WHOLE = "hybrid, whole rankings"  # the baseline of hybrid's windows: what it fetched before them


def _seconds(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def embedding(corpus: Corpus, rounds: int) -> None:
    laws = corpus.laws
    began = time.perf_counter()
    StaticEmbedder()  # a second instance: the load's cost, not the cached one
    model = time.perf_counter() - began
    embedder = default_embedder()
    texts = [row_text(law) for law in laws]
    embed = embed_words = 0.0
    for _ in range(rounds):  # alternating, so that both sides meet the same machine
        embed += _seconds(lambda: embedder.embed(texts))
        # A fresh tuple each time: the statistics are cached per laws sequence.
        embed_words += _seconds(lambda: reference.statistics(tuple(laws)))
    per = 1000 / len(laws)
    embed, embed_words = embed / rounds, embed_words / rounds
    print(f"embedding {len(laws):,} laws (law, question and concept of every row), {rounds} rounds, seconds a round:")
    print(f"  the embedder's own load (once a process, no network)  {model:8.3f} s")
    for name, seconds in (("embed (lawindex-road-256, on the grid)", embed),
                          ("words and counts (what a words load computes)", embed_words)):  # fmt: skip
        print(f"  {name:<52}  {seconds:8.3f} s  = {seconds * per * 1000:7.1f} ms per 1,000 laws")
    print(f"  ratio embed / words: {embed / embed_words:.2f}x")


def _store_bytes(connection: Connection, index: str) -> tuple[int, int]:
    stats = connection.client().indices.stats(index=index, metric="store,docs")["indices"][index]["primaries"]
    return int(stats["store"]["size_in_bytes"]), int(stats["docs"]["count"])


def loading(url: str, corpus: Corpus, rounds: int) -> Connection:
    """Load `corpus` with and without vectors, `rounds` each, alternating; the connection of the last load
    with vectors (its index kept for the asking), the other namespaces removed."""
    prefix = f"lawindex_benchm{uuid.uuid4().hex[:6]}"
    meaning = Meaning(default_embedder())
    seconds: dict[str, list[float]] = {"with vectors": [], "without": []}
    sizes: dict[str, tuple[int, int]] = {}
    kept: Connection | None = None
    for number in range(rounds):
        for side, with_meaning in (("with vectors", meaning), ("without", None)):
            connection = Connection.from_env(url, namespace=f"{prefix}{number}{'v' if with_meaning else 'w'}")
            client = connection.client()
            ensure_locks_index(client, connection.namespace)
            began = time.perf_counter()
            done = load_state(
                client, corpus, LoadOptions(namespace=connection.namespace, meaning=with_meaning, plugin=False)
            )
            seconds[side].append(time.perf_counter() - began)
            assert done.outcome == "indexed" and done.index is not None, done
            sizes[side] = _store_bytes(connection, done.index)
            if with_meaning is not None and number == rounds - 1:
                kept = connection
            else:
                client.indices.delete(index=f"{connection.namespace}*", ignore_unavailable=True, allow_no_indices=True)
    assert kept is not None
    print(f"\nload of the same {len(corpus.laws):,} laws, {rounds} rounds each, alternating (load_state, words path):")
    for side, times in seconds.items():
        size, docs = sizes[side]
        print(
            f"  {side:<13} {statistics.median(times):7.2f} s median  ({', '.join(f'{t:.2f}' for t in times)})  "
            f"store {size / 2**20:7.2f} MiB, {docs:,} documents"
        )
    ratio = statistics.median(seconds["with vectors"]) / statistics.median(seconds["without"])
    added = sizes["with vectors"][0] - sizes["without"][0]
    store = sizes["with vectors"][0] / sizes["without"][0]
    print(f"  ratio with / without: {ratio:.2f}x time; store {store:.2f}x, +{added / 2**20:.2f} MiB, "
          f"{added / len(corpus.laws):,.0f} bytes a row (a vector is 256 float32s: 1,024 bytes)")  # fmt: skip
    return kept


def plugin_loaded(url: str, corpus: Corpus) -> Connection:
    """`corpus` loaded on the plugin path (the lawindex query; vectors as vector_grid doc values), in a namespace
    of its own."""
    connection = Connection.from_env(url, namespace=f"lawindex_benchmp{uuid.uuid4().hex[:6]}")
    client = connection.client()
    ensure_locks_index(client, connection.namespace)
    meaning = vector_layout.for_cluster(client, plugin=True)
    done = load_state(client, corpus, LoadOptions(namespace=connection.namespace, meaning=meaning, plugin=True))
    assert done.outcome == "indexed" and done.index is not None, done
    return connection


def node_time(
    connection: Connection, corpus: Corpus, questions: Sequence[str], name: str = "", zipped: bool = True
) -> None:
    """The node's own time per question through the plugin (`took`, and the profile's query time of the
    lawindex query: its ranking of every row), and the plugin zip's size."""
    from indexer.node import plugin
    from indexer.opensearch.cluster.connection import alias_of, server_version

    client = connection.client()
    alias = alias_of(corpus.state, connection.namespace)
    for question in questions[:3]:  # warmed: each segment's vectors decoded, the embedder loaded
        for by in WAYS:
            client.search(index=alias, body={"size": 8, "query": {"lawindex": {"question": question, "by": by}}})
    asked = f"{len(questions)} questions, size 8"
    print(f"\nthe node's own time through the plugin{name}, {asked} (took; profile's query):")
    for by in WAYS:
        took, query = [], []
        for question in questions:
            body = {"size": 8, "profile": True, "query": {"lawindex": {"question": question, "by": by}}}
            found = client.search(index=alias, body=body)
            took.append(float(found["took"]))
            shard = found["profile"]["shards"][0]["searches"][0]["query"][0]
            query.append(shard["time_in_nanos"] / 1e6)
        print(
            f"  {by:<8} took p50 {percentile(took, 50):6.2f} ms  p99 {percentile(took, 99):6.2f} ms;  "
            f"query (ranking every row) p50 {percentile(query, 50):6.2f} ms  p99 {percentile(query, 99):6.2f} ms"
        )
    if zipped:  # this tree's zip (the node of --before runs another tree's)
        built = plugin.build(server_version(client))
        size = built.stat().st_size / 2**20
        print(f"  the plugin zip for OpenSearch {server_version(client)}: {size:.1f} MiB ({built.name})")


def asking(
    connection: Connection | None,
    corpus: Corpus,
    questions: Sequence[str],
    rounds: int,
    plugged: Connection | None = None,
    whole_too: bool = True,
    before: Connection | None = None,
    in_process: bool = True,
) -> None:
    """`connection`: the k-NN index the windows ask (None: no windows); `plugged` and `before`: the plugin-path
    index on this node and on the node of the plugin before (each None: not asked)."""
    sides: dict[str, Callable[[str, str], object]] = {}
    if plugged is not None:
        through = OpenSearchEngine(plugged)
        sides["plugin"] = lambda question, by: through.ask(Request(corpus.state, question, Way(by), 8))
    if before is not None:
        former = OpenSearchEngine(before)
        sides["plugin, before"] = lambda question, by: former.ask(Request(corpus.state, question, Way(by), 8))
    if connection is not None:
        engine = OpenSearchEngine(connection)
        sides["windows"] = lambda question, by: engine.ask(Request(corpus.state, question, Way(by), 8))
    if in_process:
        sides["in process"] = lambda question, by: rank.answer(corpus, Request(corpus.state, question, Way(by), 8))

    def whole(question: str) -> object:
        """Hybrid as it was before its windows: both rankings whole (the first window the state's size)."""
        kept = vectors.HYBRID_WINDOW
        vectors.HYBRID_WINDOW = len(corpus.laws)
        try:
            return engine.ask(Request(corpus.state, question, Way.hybrid, 8))
        finally:
            vectors.HYBRID_WINDOW = kept

    for ask in sides.values():  # warmed: statistics, vectors, the embedder, connections
        for by in WAYS:
            for question in questions[:3]:
                ask(question, by)
    ways = {side: [*WAYS, *([WHOLE] if side == "windows" and whole_too else [])] for side in sides}
    latencies: dict[tuple[str, str], list[float]] = {(side, by): [] for side in sides for by in ways[side]}
    for _ in range(rounds):
        for side, ask in sides.items():
            if side == "plugin, before":
                continue  # asked with "plugin"
            if side == "plugin":
                # Question by question, each way in turn, the plugin before beside: a shared machine's load moves
                # within a minute, and a way asked in a block of its own met another machine than words did.
                for question in questions:
                    for by in ways[side]:
                        for one in [name for name in ("plugin, before", "plugin") if name in sides]:
                            began = time.perf_counter()
                            sides[one](question, by)
                            latencies[one, by].append((time.perf_counter() - began) * 1000)
                continue
            for by in ways[side]:
                for question in questions:
                    if by == WHOLE:
                        began = time.perf_counter()
                        whole(question)
                        latencies[side, by].append((time.perf_counter() - began) * 1000)
                        continue
                    began = time.perf_counter()
                    ask(question, by)
                    latencies[side, by].append((time.perf_counter() - began) * 1000)
    state = f"{len(corpus.laws):,}-law state"
    print(f"\nask {len(questions)} generated questions x {rounds} rounds, each way, limit 8, on the {state}")
    print(f"  {'engine':<14} {'way':<23} {'p50 ms':>9} {'p99 ms':>9}   p50 / words   p99 / words")
    for side in sides:
        base = latencies[side, "words"]
        for by in ways[side]:
            got = latencies[side, by]
            p50, p99 = percentile(got, 50), percentile(got, 99)
            print(
                f"  {side:<14} {by:<23} {p50:9.2f} {p99:9.2f}   "
                f"{p50 / percentile(base, 50):10.2f}x   {p99 / percentile(base, 99):10.2f}x"
            )
    if "plugin, before" in sides:
        print("  the plugin against the plugin before, the same questions alternating (p50 and p99 after / before):")
        for by in WAYS:
            now, was = latencies["plugin", by], latencies["plugin, before", by]
            print(
                f"    {by:<8} p50 {percentile(now, 50) / percentile(was, 50):5.2f}x   "
                f"p99 {percentile(now, 99) / percentile(was, 99):5.2f}x"
            )


def sample_sizes(url: str) -> None:
    """The store of each sample state's index (corpora/), loaded with its vectors and without them."""
    corpora = read_corpora(Path(__file__).resolve().parents[1] / "corpora")
    prefix = f"lawindex_benchms{uuid.uuid4().hex[:6]}"
    meaning = Meaning(default_embedder())
    sizes: dict[str, dict[str, int]] = {}
    for side, with_meaning in (("with vectors", meaning), ("without", None)):
        connection = Connection.from_env(url, namespace=f"{prefix}{'v' if with_meaning else 'w'}")
        client = connection.client()
        ensure_locks_index(client, connection.namespace)
        try:
            for corpus in corpora:
                done = load_state(
                    client,
                    corpus,
                    LoadOptions(namespace=connection.namespace, meaning=with_meaning, plugin=False, locks_ensured=True),
                )
                assert done.index is not None
                sizes.setdefault(corpus.state, {})[side] = _store_bytes(connection, done.index)[0]
        finally:
            client.indices.delete(index=f"{connection.namespace}*", ignore_unavailable=True, allow_no_indices=True)
    print("\nthe store of each sample state's index (_stats, primaries), with its vectors and without:")
    print(f"  {'state':<6} {'rows':>5} {'with KiB':>9} {'without KiB':>12} {'ratio':>6} {'added a row':>12}")
    total = {"with vectors": 0, "without": 0}
    for corpus in corpora:
        with_, without = sizes[corpus.state]["with vectors"], sizes[corpus.state]["without"]
        total["with vectors"] += with_
        total["without"] += without
        print(f"  {corpus.state:<6} {len(corpus.laws):>5} {with_ / 1024:9.1f} {without / 1024:12.1f} "
              f"{with_ / without:5.2f}x {(with_ - without) / len(corpus.laws):9,.0f} B")  # fmt: skip
    rows = sum(len(corpus.laws) for corpus in corpora)
    print(f"  {'all':<6} {rows:>5} {total['with vectors'] / 1024:9.1f} {total['without'] / 1024:12.1f} "
          f"{total['with vectors'] / total['without']:5.2f}x "
          f"{(total['with vectors'] - total['without']) / rows:9,.0f} B")  # fmt: skip


def _ask_all(port: int, corpora: Sequence[Corpus], by: str) -> None:
    for corpus in corpora:
        for question in synthetic.generate_questions(corpus.laws, 5, 1):
            query = urllib.parse.urlencode({"q": question, "by": by})
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/v1/states/{corpus.state}/ask?{query}", timeout=120
            ) as r:
                r.read()


def memory(url: str, states: int, laws: int, port: int) -> None:
    corpora = [
        synthetic.corpus_of(state, rows) for state, rows in synthetic.generate_corpora(states, laws, 2026).items()
    ]
    sizes = sorted(len(corpus.laws) for corpus in corpora)
    print(
        f"\nmemory of lawindex serve (one worker) on {states} generated states, {sum(sizes):,} laws "
        f"(a state {sizes[0]:,} to {sizes[-1]:,}, median {statistics.median(sizes):,.0f}):"
    )
    meaning = Meaning(default_embedder())
    prefix = f"lawindex_benchmm{uuid.uuid4().hex[:6]}"
    found: dict[str, list[float]] = {}
    for side, with_meaning in (("without vectors", None), ("with vectors", meaning)):
        connection = Connection.from_env(url, namespace=f"{prefix}{'v' if with_meaning else 'w'}")
        client = connection.client()
        ensure_locks_index(client, connection.namespace)
        try:
            began = time.perf_counter()
            namespace = connection.namespace
            with ThreadPoolExecutor(3) as pool:  # 3 states at once, as `lawindex load` does
                loads = [pool.submit(load_state, client, one, namespace=namespace, meaning=with_meaning,
                                     plugin=False, locks_ensured=True) for one in corpora]  # fmt: skip
                for done in loads:
                    done.result()
            loaded = time.perf_counter() - began
            env = {"OPENSEARCH_URL": url, "LAWINDEX_NAMESPACE": connection.namespace}
            process, _ = start_serve(env, port, 1)
            try:
                rss = [rss_mib(process.pid)]
                _ask_all(port, corpora, "words")
                rss.append(rss_mib(process.pid))
                if with_meaning is not None:
                    _ask_all(port, corpora, "meaning")
                    rss.append(rss_mib(process.pid))
                    _ask_all(port, corpora, "hybrid")
                    rss.append(rss_mib(process.pid))
            finally:
                stop_serve(process)
        finally:
            client.indices.delete(index=f"{connection.namespace}*", ignore_unavailable=True, allow_no_indices=True)
        found[side] = rss
        steps = ["at start", "after words", "after meaning", "after hybrid"][: len(rss)]
        print(
            f"  {side:<16} (loaded in {loaded:5.1f} s): "
            + ", ".join(f"{m:.0f} MiB {s}" for m, s in zip(rss, steps, strict=True))
        )
    with_, without = found["with vectors"], found["without vectors"]
    print(f"  ratio with / without vectors: at start {with_[0] / without[0]:.2f}x, "
          f"after words {with_[1] / without[1]:.2f}x; after meaning and hybrid {with_[-1] / without[1]:.2f}x "
          f"of the words-only service ({with_[-1] - without[1]:+.0f} MiB)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("OPENSEARCH_URL"))
    parser.add_argument("--laws", type=int, default=6000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--memory-laws", type=int, default=15000)
    parser.add_argument("--port", type=int, default=12100)
    parser.add_argument("--skip", nargs="*", default=[], choices=SECTIONS)
    parser.add_argument("--before", help="a node with the plugin before (another tree's): asked alternately")
    args = parser.parse_args()
    if not args.url:
        raise SystemExit("benchmarks/meaning.py needs an OpenSearch with k-NN: --url or OPENSEARCH_URL")
    began = time.perf_counter()
    corpus = synthetic.corpus_of("TX", synthetic.generate_corpus("TX", args.laws, 2026))
    questions = synthetic.generate_questions(corpus.laws, args.questions, 7)
    print(f"OpenSearch at {args.url}; a generated state of {len(corpus.laws):,} laws, {len(questions)} questions")
    if "embedding" not in args.skip:
        embedding(corpus, args.rounds)
    if "load" not in args.skip or "ask" not in args.skip:
        windows = "windows" not in args.skip
        kept = loading(args.url, corpus, args.rounds) if "load" not in args.skip or windows else None
        plugged = None if "plugin" in args.skip else plugin_loaded(args.url, corpus)
        before = plugin_loaded(args.before, corpus) if args.before and plugged is not None else None
        try:
            if "ask" not in args.skip:
                whole, in_process = "whole" not in args.skip, "inprocess" not in args.skip
                asking(kept if windows else None, corpus, questions, args.rounds, plugged, whole, before, in_process)
            if plugged is not None:
                node_time(plugged, corpus, questions)
            if before is not None:
                node_time(before, corpus, questions, f" before ({args.before})", zipped=False)
        finally:
            for one in (kept, plugged, before):
                if one is not None:
                    client = one.client()
                    client.indices.delete(index=f"{one.namespace}*", ignore_unavailable=True, allow_no_indices=True)
    if "samples" not in args.skip:
        sample_sizes(args.url)
    if "memory" not in args.skip:
        memory(args.url, args.states, args.memory_laws, args.port)
    print(f"\n(the whole run: {time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
