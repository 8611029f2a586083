"""What a state's index is made of: its settings, mappings and `_meta` marker, and its documents (one per law,
then the statistics, sealed) in the order they are written.

Apart from the load's steps (indexer.opensearch.write.load) so that what is written to OpenSearch can be read, and
tested, without a cluster: `body` is the index's create request, `documents` its bulk actions, `fingerprint`
what says an index is unchanged.
"""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from indexer.opensearch.cluster import plugin_path, stored_lexicon
from indexer.opensearch.cluster.connection import DEFAULT_NAMESPACE
from indexer.opensearch.cluster.schema import (
    GRID_FIELD,
    LAW_FIELDS,
    RANKED_FIELD,
    SCHEMA,
    STATISTICS_ID,
    VECTOR_FIELD,
    law_id,
)
from indexer.opensearch.trust import integrity, ownership, sealing
from indexer.opensearch.write import mappings
from indexer.retrieval.corpus import Corpus, Law
from indexer.retrieval.lexicon import Lexicon
from indexer.retrieval.words import ranked, ranked_text

if TYPE_CHECKING:
    from indexer.opensearch.cluster.vector_layout import Meaning
    from indexer.retrieval.statistics import Counts


def fingerprint(corpus: Corpus, meaning: Meaning | None = None) -> str:
    """What an index was built from: the corpus file, laws.json and the schema, and the embedder of its
    vectors where it has them (indexer.opensearch.cluster.vector_layout); unchanged means equal."""
    made = f"{SCHEMA}:{corpus.sha256}:{mappings.fingerprint()}"
    return made if meaning is None else f"{made}:meaning={meaning.identity}:{meaning.layout}"


def documents(
    corpus: Corpus,
    stats: Counts,
    *,
    index: str = "",
    namespace: str = DEFAULT_NAMESPACE,
    meaning: Meaning | None = None,
) -> Iterator[dict[str, Any]]:
    """The bulk actions for a state: one document per law (with its vector, given `meaning`), then the
    statistics document, sealed for `index` (its name, state, namespace and fingerprint under a checksum:
    sealing.seal), with every law document's digest in it (indexer/opensearch/trust/integrity.py), so that a law
    altered later is never served."""
    embedded = None if meaning is None else meaning.vectors(corpus)
    digests: list[bytes] = []
    vector_digests: list[bytes] = []  # sealed beside the laws' (indexer/opensearch/trust/integrity.py)
    for order, law in enumerate(corpus.laws):
        source: dict[str, Any] = {name: getattr(law, name) for name in LAW_FIELDS}
        source.update(
            state=corpus.state,
            order=order,
            length=stats.lengths[order],
            counts=stats.counts[order],
        )
        # A process row carries no ranked text at all, so that Lucene counts it in neither N nor
        # df nor the average length: the spec's `ranked`.
        if ranked(law):
            source[RANKED_FIELD] = ranked_text(law)
        grid = None
        if embedded is not None:
            if order % _ROWS_AT_ONCE == 0:
                from indexer.opensearch.cluster.vector_layout import grid_units

                # _ROWS_AT_ONCE rows at a time, not a row at a time (a dozen numpy calls a row: 5-9 s of a 50-state
                # load's client CPU) nor a state at once (51,781 rows: two 106 MB arrays of float64 on the way):
                # their grid units, and the values each grid reads back as, which the seal digests.
                units = grid_units(embedded[order : order + _ROWS_AT_ONCE])
                read_back = integrity.grid_values(units)
            row = order % _ROWS_AT_ONCE
            grid = base64.b64encode(units[row].tobytes()).decode("ascii")
            if meaning is not None and meaning.knn:  # the window path's knn_vector: float32 values, exact as JSON's
                source[VECTOR_FIELD] = embedded[order].tolist()
                vector_digests.append(integrity.vector_digest(embedded[order]))  # the same float32s as the list
            else:  # the grid is the one copy: sealed as it reads back (a -0.0 component reads back as 0.0)
                vector_digests.append(integrity.vector_digest(read_back[row]))
        digests.append(integrity.digest(source))
        if grid is not None:  # the plugin's doc values; the one copy in _source where there is no knn_vector
            source[GRID_FIELD] = grid
        yield {"_id": law_id(law.id), "_source": source}
    summary, blocks = stored_lexicon.stored(Lexicon.of(stats.vocabulary))
    sealed = sealing.seal(
        {
            "kind": "statistics",
            "state": corpus.state,
            "statistics": {
                "size": stats.size,
                "average": stats.average,
                # Lucene's own N and total length for the field: a ranked law whose words are all
                # stopwords has no terms, so Lucene does not count it while the spec does. The query
                # side needs both to bound how far OpenSearch's scores can stray from the spec's.
                "doc_count": stats.doc_count,
                "total_length": stats.sum_total_term_freq,
                # The vocabulary: a summary sealed here, its blocks (one per word length, each word
                # with its place in the spec's Map order and its df) stored beside it, out of _source,
                # each sealed by its digest in the summary (indexer/opensearch/cluster/stored_lexicon.py).
                "words": summary,
                "digests": integrity.pack(digests),
                **({} if embedded is None else {"vector_digests": integrity.pack(vector_digests)}),
            },
        },
        namespace=namespace,
        index=index,
        fingerprint=fingerprint(corpus, meaning),
    )
    yield {"_id": STATISTICS_ID, "_source": {**sealed, stored_lexicon.FIELD: blocks}}


_ROWS_AT_ONCE = 4096  # a load's vectors made grid units and digested a block at a time: 8 MB of float64


def counts(laws: Sequence[Law]) -> tuple[int, int]:
    """How many laws are ranked and how many are process rows."""
    ranked_laws = sum(1 for law in laws if ranked(law))
    return ranked_laws, len(laws) - ranked_laws


def new_generation() -> str:
    """The generation part of a new index's name (`lawindex-tx-<generation>`): the time to the microsecond,
    20 digits, so that the newest of a state's indices is the last by name."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")


def body(
    corpus: Corpus,
    stats: Counts,
    index: str,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    replicas: int | None = None,
    meaning: Meaning | None = None,
    plugin: bool = False,
    opensearch: str = "",
) -> dict[str, Any]:
    """The create request of `index`, a new generation of the state's index: mappings/laws.json's settings
    and mappings, `replicas` fixed (default: its auto_expand_replicas 0-1), lawindex's `_meta` marker, the
    plugin's similarity (`plugin`) and the vector field (`meaning`) where asked, and the private alias the
    bulk fill writes through (`<index>-filling`). `opensearch`: the cluster's version, kept for `lawindex history`."""
    state = corpus.state
    ranked_laws, process = counts(corpus.laws)
    made = mappings.laws_index()
    # No periodic refresh, ever: the index is written once, by the load, and refreshed once at the end; a
    # reload builds a new index rather than writing to this one. (Setting it back after the load cost a
    # request a state and bought nothing; a node's restart refreshes after replaying the translog.)
    made["settings"]["index"]["refresh_interval"] = "-1"
    if replicas is not None:
        made["settings"]["index"].pop("auto_expand_replicas", None)
        made["settings"]["index"]["number_of_replicas"] = replicas
    made["mappings"]["_meta"] = {
        "lawindex": {
            **ownership.marker(namespace, state, index),
            "fingerprint": fingerprint(corpus, meaning),
            "sha256": corpus.sha256,
            "source": str(corpus.path),
            "laws": len(corpus.laws),
            "ranked": ranked_laws,
            "process": process,
            "loaded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "loaded_by": socket.gethostname(),
            "lawindex_version": lawindex_version(),
            "opensearch_version": opensearch,
        }
    }
    if plugin:
        plugin_path.for_plugin(made, stats)
    # Bulk requests go to a private alias of the new index with require_alias: if the index vanishes
    # mid-load (another load of the state took it for an orphan), they fail instead of auto-creating a
    # namesake with dynamic mappings and no analyzer, which a count check cannot tell from the real one.
    if meaning is not None:
        meaning.extend(made)  # the vector field, for --by meaning and hybrid (indexer.opensearch.cluster.vector_layout)
    made["aliases"] = {filling(index): {}}
    return made


def lawindex_version() -> str:
    """This lawindex's version, as installed ("0" from a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lawindex")
    except PackageNotFoundError:
        return "0"


def filling(index: str) -> str:
    """The private alias a new index is filled through, until the swap removes it."""
    return f"{index}-filling"
