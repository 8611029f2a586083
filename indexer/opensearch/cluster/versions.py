"""The OpenSearch versions lawindex supports, and what each of them can do that another cannot.

Supported: every release line from 2.11 to 3.9, the newest 3.x on Maven Central (`docs/versions.md` is the
matrix that proves each line; `scripts/matrix` runs it). A version outside is refused before anything is
written, by `load` (the cluster's own version), `lawindex opensearch start` and `lawindex plugin build`.

What differs inside the range, and what lawindex does about it:

- The alias action's `must_exist` is parsed from 2.12.0 on (OpenSearch #11210); 2.11 answers
  `[remove] unknown field [must_exist]` (400), and a `remove` of an alias that is not there passes in silence
  (measured on 2.11.1: the call is acknowledged and its other actions applied). So on 2.11 the swap adds the
  new index as the alias's write index instead (`is_write_index`): an alias may have one write index only
  (2.11.1 refuses the call whole, `alias [..] has more than one write index`), so two loads that both took the
  same old index for current can never both land; the second is refused and nothing of it is applied.
- A plugin descriptor may name a range of versions (`dependencies={"opensearch": "~2.19.0"}`) from 2.13.0
  on (OpenSearch #11441); before that it names one exact version (`opensearch.version`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

OLDEST = (2, 11, 0)
NEWEST_LINE = (3, 9)
RANGE = f"{OLDEST[0]}.{OLDEST[1]}.0 to {NEWEST_LINE[0]}.{NEWEST_LINE[1]}.x"
MUST_EXIST_SINCE = (2, 12, 0)
DESCRIPTOR_RANGES_SINCE = (2, 13, 0)
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:[-+].*)?")


def parse(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of `3.6.0` (a `-SNAPSHOT` or build suffix ignored); None for anything else."""
    found = _VERSION.fullmatch(version.strip())
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def unsupported(version: str) -> str | None:
    """Why `version` is outside the supported range (one line naming the range), or None when it is inside."""
    parsed = parse(version)
    if parsed is None:
        return f"{version!r} is not an OpenSearch version (major.minor.patch)"
    if parsed < OLDEST or parsed[:2] > NEWEST_LINE:
        return f"OpenSearch {version} is outside the versions lawindex supports ({RANGE})"
    return None


def has_must_exist(version: str) -> bool:
    """Whether the cluster parses the alias `remove` action's `must_exist` (2.12.0 and later)."""
    parsed = parse(version)
    return parsed is None or parsed >= MUST_EXIST_SINCE


def takes_descriptor_range(version: str) -> bool:
    """Whether a plugin descriptor may name a range of OpenSearch versions (2.13.0 and later)."""
    parsed = parse(version)
    return parsed is not None and parsed >= DESCRIPTOR_RANGES_SINCE


def line(version: str) -> str:
    """The release line of `version`: `2.19` of 2.19.6."""
    parsed = parse(version)
    return f"{parsed[0]}.{parsed[1]}" if parsed else version


def plugin_zip(version: str) -> str:
    """The lawindex plugin zip that serves OpenSearch `version`: its line's from 2.13 (`lawindex-2.19.zip`), else its
    own (`lawindex-2.11.1.zip`); indexer.node.plugin builds it under this name."""
    return f"lawindex-{line(version)}.zip" if takes_descriptor_range(version) else f"lawindex-{version}.zip"


def matches_range(running: str, wanted: str) -> bool:
    """Whether OpenSearch `running` satisfies a descriptor's `wanted`: an exact version, `=2.19.6`, or the
    tilde range `~2.19.0` (2.19.0 up to, not including, 2.20.0), as OpenSearch's SemverRange reads them."""
    wanted = wanted.strip()
    have = parse(running)
    if wanted.startswith("~"):
        low = parse(wanted[1:])
        return have is not None and low is not None and low <= have and have[:2] == low[:2]
    return parse(wanted.removeprefix("=")) == have and have is not None


@dataclass(frozen=True)
class ClusterFit:
    """What a cluster runs and what lawindex can do there: `lawindex status` and `verify` say it."""

    version: str
    unsupported: str | None  # why the version is outside the range, None inside
    plugin: str | None  # the installed lawindex plugin's requirement (`~2.19.0`, `2.11.1`), None when absent
    plugin_matches: bool  # installed on every node, and built for the version they run
    knn: bool  # every node has k-NN (the meaning path)

    def describe(self) -> str:
        """One line: `OpenSearch 2.19.6 (supported: 2.11.0 to 3.9.x); lawindex plugin ~2.19.0: matches`."""
        support = self.unsupported or f"supported: {RANGE}"
        if self.plugin is None:
            plugin = "lawindex plugin: not installed (the window path only)"
        elif self.plugin_matches:
            plugin = f"lawindex plugin for {self.plugin}: matches"
        else:
            plugin = f"lawindex plugin for {self.plugin}: does NOT match, or not on every node (the window path only)"
        return f"OpenSearch {self.version} ({support}); {plugin}; k-NN: {'yes' if self.knn else 'no'}"

    def paths(self, built_for_plugin: bool, has_vectors: bool) -> list[str]:
        """The paths a state can take here: `plugin` (its index built for it, the plugin installed and
        matching), `window` (always), `meaning` (its index carries vectors and every node has k-NN)."""
        found = ["plugin"] if built_for_plugin and self.plugin_matches else []
        found.append("window")
        if has_vectors and self.knn:
            found.append("meaning")
        return found


def cluster_fit(client: Any) -> ClusterFit:
    """The cluster's version and plugins (`_nodes/plugins`; where that is refused, the plugin and k-NN count as
    absent from what can be seen)."""
    from opensearchpy.exceptions import OpenSearchException

    from indexer.opensearch.cluster.connection import server_version

    version = server_version(client)
    nodes: dict[str, Any] = {}
    with contextlib.suppress(OpenSearchException):
        answer = client.transport.perform_request(
            "GET", "/_nodes/plugins",
            params={"filter_path": "nodes.*.version,nodes.*.plugins.name,nodes.*.plugins.opensearch_version"},
        )  # fmt: skip
        nodes = (answer or {}).get("nodes") or {}
    wanted: set[str] = set()
    on_every, matches, knn = bool(nodes), bool(nodes), bool(nodes)
    for node in nodes.values():
        plugins = {p.get("name"): str(p.get("opensearch_version", "")) for p in node.get("plugins") or []}
        knn = knn and "opensearch-knn" in plugins
        if "lawindex" not in plugins:
            on_every = matches = False
            continue
        wanted.add(plugins["lawindex"])
        matches = matches and matches_range(str(node.get("version", version)), plugins["lawindex"])
    plugin = sorted(wanted)[0] if wanted else None
    return ClusterFit(version, unsupported(version), plugin, on_every and matches, knn)
