"""The k-NN plugin (`org.opensearch.plugin:opensearch-knn`), which `ask --by meaning` and `--by hybrid` need on
OpenSearch without the lawindex plugin (the window path), and installing a plugin's zip into a node's home.

A node `lawindex opensearch start` makes has the lawindex plugin, which ranks by meaning itself: it gets k-NN only when
asked (`--knn`, or a node first made with it, whose indices may hold `knn_vector` fields).

Published on Maven Central for 3.6.0 (3.6.0.0) and 2.19.6 (2.19.6.0), not for 3.8.0 nor 2.19.4 (the secured
node's version). The zips carry no native libraries, so only the Lucene engine works (a field on faiss, or
naming no engine, which defaults to faiss, is created and kills the node on its first write). The Maven
repository publishes no checksum beside these zips (no .sha1, .md5, .asc), so lawindex pins their SHA-256
here. Both descriptors extend `lang-painless` (3.6.0.0 also `transport-grpc`): the 3.6.0 min distribution
carries both modules; the 2.19.x min distributions carry neither, and painless is more than a jar (its
ANTLR and ASM jars, a security policy), so on 2.19.x lawindex does not install k-NN and says so: words
work there, meaning and hybrid refuse with the one line `missing()` makes.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.errors import NodeError
from indexer.node import distribution

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

NAME = "opensearch-knn"
ZIP_PATH = "org/opensearch/plugin/opensearch-knn/{v}/opensearch-knn-{v}.zip"
# The plugin version per OpenSearch version, with the SHA-256 of its zip (checked on download).
PINNED = {
    "3.6.0": ("3.6.0.0", "ac392ca28a39b3bf290648a422ef30cb149dda2963a9d7feb26060e932341c9a"),
    "2.19.6": ("2.19.6.0", "c21b9565624d29fd4024e3a3902712349006cb7894a73c45d976756a761e628f"),
}
# The modules a k-NN descriptor extends; a distribution must carry them for the node to start.
EXTENDS = ("lang-painless",)
# What a node's record says of k-NN when its start did not ask for it (`lawindex opensearch start --knn` does): the
# lawindex plugin every node gets ranks by meaning itself, so the first start fetches no k-NN zip (issue 48.5).
NOT_ASKED = "none: not asked (--knn installs it)"


def unsupported(version: str, home: Path | None = None) -> str | None:
    """Why k-NN is not installed for `version` (None when it is): no zip published, or a module it extends
    missing from the distribution at `home`."""
    if version not in PINNED:
        return f"no {NAME} zip is published for OpenSearch {version}"
    if home is not None:
        lacking = [name for name in EXTENDS if not (home / "modules" / name).is_dir()]
        if lacking:
            return f"OpenSearch {version}'s min distribution lacks {', '.join(lacking)}, which {NAME} extends"
    return None


def plugin_zip(version: str, cache: Path) -> Path:
    """The k-NN zip for `version` in the cache, downloaded once and checked against its pinned SHA-256."""
    plugin, expected = PINNED[version]
    target = cache / "dist" / f"{NAME}-{plugin}.zip"
    with distribution.locked(cache / "dist" / f"{NAME}-{plugin}.lock"):
        if target.is_file() and _sha256(target) == expected:
            return target
        url = f"{distribution.maven_repo()}/{ZIP_PATH.format(v=plugin)}"
        partial = target.with_name(target.name + ".part")
        try:
            distribution.streamed(url, partial, f"downloading {NAME} {plugin} from {distribution.where()}", len)
        except (OSError, urllib.error.URLError) as error:
            raise NodeError(
                f"downloading {url} failed: {error}", hint="Maven Central (or $LAWINDEX_MAVEN_REPO) must be reachable"
            ) from None
        found = _sha256(partial)
        if found != expected:
            partial.unlink(missing_ok=True)
            raise NodeError(f"{url}: SHA-256 {found} is not the pinned {expected}")
        partial.replace(target)
    return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def install_zip(home: Path, archive: Path) -> str:
    """Install the plugin `archive` (a zip of jars and a descriptor, no bin/ or config/) into the OpenSearch
    `home`: unpacked once beside the zip, then hard-linked into `home/plugins/<name>`, as
    `bin/opensearch-plugin install` lays it out, without starting a JVM (3 s a node). Returns its name."""
    unpacked = archive.with_suffix("")
    stamp = unpacked / ".lawindex-complete"
    with distribution.locked(archive.with_suffix(".unpack.lock")):
        if not stamp.is_file():
            shutil.rmtree(unpacked, ignore_errors=True)
            with zipfile.ZipFile(archive) as zipped:
                names = zipped.namelist()
                if any(name.startswith(("bin/", "config/")) or ".." in name for name in names):
                    raise NodeError(f"{archive.name} has bin/ or config/ files: install it with bin/opensearch-plugin")
                zipped.extractall(unpacked)
            stamp.write_text("1\n")
    descriptor = (unpacked / "plugin-descriptor.properties").read_text(encoding="utf-8")
    name = next(
        (line.split("=", 1)[1].strip() for line in descriptor.splitlines() if line.startswith("name=")), archive.stem
    )
    target = home / "plugins" / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(unpacked, target, copy_function=_link_or_copy, ignore=shutil.ignore_patterns(".lawindex-complete"))
    return name


def _link_or_copy(source: str, target: str) -> None:
    try:
        Path(target).hardlink_to(source)
    except OSError:
        shutil.copy2(source, target)


def install(home: Path, version: str, cache: Path) -> str:
    """k-NN installed into a node's `home` where it can be (the plugin's name), else the reason it is not,
    said on stderr: the node then answers words only."""
    why = unsupported(version, home)
    if why is not None:
        print(f"note: {why}: this node answers --by words only", file=sys.stderr, flush=True)
        return f"none: {why}"
    install_zip(home, plugin_zip(version, cache))
    return NAME


def installed(client: OpenSearch) -> bool:
    """True when every node of the cluster has the k-NN plugin (indexer.opensearch.cluster.plugins)."""
    from indexer.opensearch.cluster.plugins import every_node_has

    return every_node_has(client, NAME)


def home_with_knn(dist: Path, version: str, cache: Path) -> Path:
    """The unpacked distribution `dist` with k-NN in its plugins (a hard-linked copy beside it, made once),
    for an image; `dist` itself where k-NN cannot be installed (said on stderr)."""
    if unsupported(version, dist) is not None:
        install(dist, version, cache)  # only says why not
        return dist
    archive = plugin_zip(version, cache)
    target = cache / "dist" / f"{dist.name}+knn"
    stamp = target / ".lawindex-complete"
    with distribution.locked(cache / "dist" / f"{dist.name}+knn.lock"):
        if not stamp.is_file():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(dist, target, symlinks=True, copy_function=_link_or_copy)
            stamp.unlink(missing_ok=True)
            install_zip(target, archive)
            stamp.write_text(distribution.LAYOUT + "\n")
    return target


def plugins_of(home: Path) -> list[str]:
    """The plugins installed in an OpenSearch home, by folder name."""
    folder = home / "plugins"
    return sorted(path.name for path in folder.iterdir()) if folder.is_dir() else []
