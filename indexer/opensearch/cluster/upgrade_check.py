"""The pre-flight of an upgrade (`lawindex plugin check`): what each node of a cluster runs, which lawindex plugin zip
it needs, and whether the cluster can take the step to a version `V` node by node.

OpenSearch's rules, as its nodes report them (`GET /` of a 3.6.0 node: `minimum_wire_compatibility_version` 2.19.0,
`minimum_index_compatibility_version` 2.0.0):

- a rolling upgrade mixes old and new nodes, so every node must speak to a node of `V` over the transport: a node of
  the same major as `V`, or of the last line of the major before (2.19.x for 3.x: `WIRE_FROM`); never a node newer
  than `V` (no downgrade);
- every index must be readable by `V`: created on `V`'s major or the one before (an index made on 1.x must be
  reindexed on 2.x before 3.x opens it);
- each node runs the lawindex plugin zip built for its own line (`lawindex-2.19.zip` on 2.19.x, `lawindex-3.6.zip` on
  3.6.x: indexer.node.plugin.zip_name): a node of `V` needs `V`'s zip installed before it starts;
- the step is taken from a green cluster (every copy assigned), one node at a time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from indexer.opensearch.cluster import versions

PLUGIN = "lawindex"
# The oldest version of the major before that a node of each major speaks to over the transport (its
# `minimum_wire_compatibility_version`): 3.x nodes join a cluster of 2.19 nodes, 2.x ones of 1.3 nodes.
WIRE_FROM: dict[int, tuple[int, int, int]] = {3: (2, 19, 0), 2: (1, 3, 0)}

# `lawindex plugin check`'s exit codes beside the errors' (docs/exit-codes.md): a node without the plugin build its
# version needs; a cluster that cannot take the step to --to V.
PLUGIN_MISMATCH_EXIT = 9
CANNOT_STEP_EXIT = 10


@dataclass(frozen=True)
class NodeCheck:
    """One node: its name, version, the lawindex plugin it has (the OpenSearch it was built for, `~2.19.0`, and its
    own version), the zip its version needs, and the zip it will need on the target."""

    name: str
    version: str
    plugin_built_for: str | None
    plugin_version: str | None
    needs: str | None
    matches: bool
    needs_on_target: str | None = None


@dataclass
class CheckReport:
    """What `lawindex plugin check` says of a cluster."""

    status: str
    nodes: list[NodeCheck]
    indices: dict[str, str]  # index -> the version it was created on
    target: str | None = None
    can_step: bool | None = None
    blockers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def plugins_match(self) -> bool:
        return bool(self.nodes) and all(node.matches for node in self.nodes)

    @property
    def exit_code(self) -> int:
        if self.target is not None and not self.can_step:
            return CANNOT_STEP_EXIT
        return 0 if self.plugins_match else PLUGIN_MISMATCH_EXIT

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["plugins_match"] = self.plugins_match
        found["exit_code"] = self.exit_code
        return found

    def lines(self) -> list[str]:
        """The report for people, a line each."""
        said = [f"cluster: {len(self.nodes)} node(s), {self.status}"]
        for node in self.nodes:
            has = (
                f"lawindex plugin {node.plugin_version} built for {node.plugin_built_for}"
                if node.plugin_built_for
                else "no lawindex plugin"
            )
            fit = (
                f"matches {node.needs}"
                if node.matches
                else f"does NOT match: install {node.needs or 'none: unsupported'}"
            )
            row = f"  {node.name}: OpenSearch {node.version}, {has} ({fit})"
            if node.needs_on_target is not None:
                row += f"; on {self.target} it needs {node.needs_on_target}"
            said.append(row)
        created: dict[str, int] = {}
        for version in self.indices.values():
            created[version] = created.get(version, 0) + 1
        if created:
            said.append("indices created on: " + ", ".join(f"{v} ({n})" for v, n in sorted(created.items())))
        if self.target is not None:
            verdict = "can" if self.can_step else "CANNOT"
            said.append(f"step to OpenSearch {self.target}: the cluster {verdict} take it node by node")
            said += [f"  blocker: {blocker}" for blocker in self.blockers]
            if self.can_step:
                said.append(
                    f"  each node in turn: lawindex plugin build --version {self.target}, install the zip into "
                    "the node's new home, then docs/operations.md's steps"
                )
        said += [f"  note: {note}" for note in self.notes]
        return said


def needed_zip(version: str) -> str | None:
    """The lawindex plugin zip a node of `version` needs (None: lawindex has no build for it)."""
    if versions.unsupported(version) is not None:
        return None
    return versions.plugin_zip(version)


def step_blockers(node_versions: dict[str, str], indices: dict[str, str], target: str) -> list[str]:
    """Why the nodes (name -> version) and indices (name -> creation version) cannot step to `target` node by node
    (none: they can)."""
    aim = versions.parse(target)
    if aim is None:
        return [f"{target!r} is not an OpenSearch version (major.minor.patch)"]
    blockers: list[str] = []
    why = versions.unsupported(target)
    if why is not None:
        blockers.append(f"the lawindex plugin has no build for {target}: {why}")
    wire_from = WIRE_FROM.get(aim[0])
    for name, running in sorted(node_versions.items()):
        have = versions.parse(running)
        if have is None:
            blockers.append(f"{name} reports {running!r}, not a version")
        elif have > aim:
            blockers.append(f"{name} runs {running}, newer than {target}: OpenSearch has no downgrade")
        elif have[0] == aim[0] or (have[0] == aim[0] - 1 and wire_from is not None and have >= wire_from):
            continue
        elif wire_from is None:
            blockers.append(f"{name} runs {running}: lawindex does not know which versions a node of {target} talks to")
        else:
            first = ".".join(map(str, wire_from))
            blockers.append(
                f"{name} runs {running}, which a node of {target} cannot talk to (its wire compatibility starts at "
                f"{first}): upgrade it to {first[:-2]}.x first"
            )
    for index, created in sorted(indices.items()):
        made = versions.parse(created)
        if made is not None and made[0] < aim[0] - 1:
            blockers.append(
                f"index {index} was created on {created}, which {target} cannot read (from {aim[0] - 1}.0.0 on): "
                f"reindex it on {aim[0] - 1}.x first"
            )
    return blockers


def check(client: Any, target: str | None = None) -> CheckReport:
    """The pre-flight of the cluster `client` talks to (and of the step to `target`, when given)."""
    answer = client.transport.perform_request(
        "GET",
        "/_nodes/plugins",
        params={"filter_path": "nodes.*.name,nodes.*.version,nodes.*.plugins.name,nodes.*.plugins.version,"
                "nodes.*.plugins.opensearch_version"},
    )  # fmt: skip
    nodes: list[NodeCheck] = []
    for found in sorted(((answer or {}).get("nodes") or {}).values(), key=lambda n: str(n.get("name"))):
        version = str(found.get("version"))
        plugins = {str(p.get("name")): p for p in found.get("plugins") or []}
        ours = plugins.get(PLUGIN)
        built_for = str(ours.get("opensearch_version")) if ours else None
        nodes.append(
            NodeCheck(
                name=str(found.get("name")),
                version=version,
                plugin_built_for=built_for,
                plugin_version=str(ours.get("version")) if ours else None,
                needs=needed_zip(version),
                matches=built_for is not None and versions.matches_range(version, built_for),
                needs_on_target=needed_zip(target) if target is not None else None,
            )
        )
    settings = client.transport.perform_request(
        "GET",
        "/_all/_settings",
        params={"human": "true", "expand_wildcards": "all", "filter_path": "*.settings.index.version.created_string"},
    )  # fmt: skip
    indices = {
        name: str(body["settings"]["index"]["version"]["created_string"])
        for name, body in (settings or {}).items()
        if isinstance(body, dict)
    }
    health = client.transport.perform_request("GET", "/_cluster/health") or {}
    report = CheckReport(status=str(health.get("status")), nodes=nodes, indices=indices, target=target)
    if target is not None:
        report.blockers = step_blockers({n.name: n.version for n in nodes}, indices, target)
        if report.status != "green":
            report.blockers.append(f"the cluster is {report.status}: a rolling upgrade starts from green")
        if len(nodes) < 2:
            report.notes.append("one node: its restart on the new version is an outage (no rolling upgrade)")
        report.can_step = not report.blockers
    return report
