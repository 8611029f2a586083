"""The jars the lawindex plugin compiles against, from Maven Central: no distribution needed.

`org.opensearch:opensearch:<version>` (the server) and what its pom names of OpenSearch's own libraries
(`opensearch-core`, `opensearch-common`, `opensearch-x-content`, ...) and of Lucene, each checked against a
digest Maven Central publishes for it (indexer.node.distribution.download). Third-party jars the pom names
(log4j, jackson, joda-time...) are left out: the plugin's sources import OpenSearch and Lucene only, and javac
needs only what those sources and their supertypes reach (checked by compiling every line from 2.11 to 3.9).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from indexer.errors import NodeError
from indexer.node import distribution

SERVER = ("org.opensearch", "opensearch")
# The groups whose jars go on the classpath (what the plugin imports and what those classes extend).
GROUPS = ("org.opensearch", "org.apache.lucene")
# Lucene modules the plugin does not reach: left out to keep the download small (lucene-core is ~4 MB, the
# rest ~10 MB more).
LUCENE_NEEDED = {"lucene-core", "lucene-analysis-common", "lucene-queries", "lucene-sandbox"}
_POM_NS = "{http://maven.apache.org/POM/4.0.0}"
JARS_AT_ONCE = 6


def artifact_path(group: str, artifact: str, version: str, ext: str) -> str:
    """`org/opensearch/opensearch/2.19.0/opensearch-2.19.0.jar` of (org.opensearch, opensearch, 2.19.0, jar)."""
    return f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.{ext}"


def fetch(group: str, artifact: str, version: str, ext: str, cache: Path) -> Path:
    """One artifact from the Maven repository into the cache (checked against its published digest), once."""
    target = cache / "maven" / artifact_path(group, artifact, version, ext)
    with distribution.locked(target.with_name(target.name + ".lock")):
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                distribution.download(artifact_path(group, artifact, version, ext), target)
            except distribution.NotPublished:
                raise NodeError(
                    f"{group}:{artifact}:{version} is not on {distribution.maven_repo()}",
                    hint="check the version: `lawindex plugin build --version` takes a released OpenSearch version",
                ) from None
    return target


def dependencies(pom: Path) -> list[tuple[str, str, str]]:
    """(group, artifact, version) of every compile or runtime dependency `pom` names with a literal version."""
    try:
        root = ET.parse(pom).getroot()
    except ET.ParseError as error:
        raise NodeError(f"{pom} is not a pom: {error}") from None
    found = []
    for dependency in root.iter(f"{_POM_NS}dependency"):
        group, artifact, version, scope = (
            (dependency.findtext(f"{_POM_NS}{field}") or "").strip()
            for field in ("groupId", "artifactId", "version", "scope")
        )
        if scope in ("", "compile", "runtime") and group and artifact and version and "$" not in version:
            found.append((group, artifact, version))
    return found


def compile_classpath(version: str, cache: Path) -> list[Path]:
    """The jars to compile the plugin against for OpenSearch `version`: the server, the OpenSearch libraries
    its pom names, and the Lucene modules the plugin reaches, each downloaded once and checked."""
    pom = fetch(*SERVER, version, "pom", cache)
    wanted = [(*SERVER, version)] + [
        (group, artifact, release)
        for group, artifact, release in dependencies(pom)
        if group == "org.opensearch" or (group == "org.apache.lucene" and artifact in LUCENE_NEEDED)
    ]
    # Side by side (each a few round trips to the repository, not CPU), in the pom's order.
    with ThreadPoolExecutor(JARS_AT_ONCE, thread_name_prefix="jar") as fetching:
        return list(fetching.map(lambda one: fetch(one[0], one[1], one[2], "jar", cache), wanted))


def lucene_major(classpath: Sequence[Path]) -> int:
    """The Lucene major of a classpath, from its lucene-core-<version>.jar."""
    for jar in classpath:
        found = re.match(r"lucene-core-(\d+)\.", jar.name)
        if found:
            return int(found.group(1))
    raise NodeError("the classpath has no lucene-core jar: the server's pom names none")
