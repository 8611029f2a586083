"""The official OpenSearch distribution, from Maven Central into the cache, with the modules lawindex needs.

`org.opensearch.distribution.integ-test-zip:opensearch:<version>:zip` is the min distribution: bin/,
config/, lib/, its modules, no JDK, no plugins. It is what `lawindex opensearch start` runs and what
`lawindex opensearch image` puts in an image. Only the zips from 3.5.0 on carry every module; the 2.19.x
and 3.0-3.4 zips carry transport-netty4 alone, and no module zips are published for them, so
`mappings/laws.json` (mapping char filter, pattern tokenizer, stop, pattern_replace: all analysis-common)
failed there with `Unknown char_filter type [mapping]`. Where a zip lacks analysis-common, lawindex adds
it as a module folder: the module's own jar from Maven Central and a descriptor written here.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

from indexer.errors import NodeError

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
ZIP_PATH = "org/opensearch/distribution/integ-test-zip/opensearch/{v}/opensearch-{v}.zip"
# Modules lawindex needs (every part of mappings/laws.json's analyzer lives in analysis-common), with
# the class the module's jar registers. Added to a distribution only where its zip lacks them.
# (3.x renamed the class; the name is read from the jar.)
NEEDED_MODULES = {
    "analysis-common": (
        "org.opensearch.analysis.common.CommonAnalysisModulePlugin",
        "org.opensearch.analysis.common.CommonAnalysisPlugin",
    )
}
MODULE_JAR_PATH = "org/opensearch/plugin/{name}/{v}/{name}-{v}.jar"
# Bumped when what `ensure` makes from the same zip changes, so caches made by an older lawindex are redone.
LAYOUT = "1"
DOWNLOAD_TIMEOUT_S = 60.0


def maven_repo() -> str:
    """Maven Central, or the mirror in $LAWINDEX_MAVEN_REPO (a corporate proxy, a local file:// copy)."""
    return os.environ.get("LAWINDEX_MAVEN_REPO", MAVEN_CENTRAL).rstrip("/")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created if missing): one download per version, one start per port."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def download(path_in_repo: str, target: Path) -> Path:
    """`path_in_repo` from the Maven repository into `target`, checked against the repository's SHA-1."""
    url = f"{maven_repo()}/{path_in_repo}"
    try:
        with urllib.request.urlopen(f"{url}.sha1", timeout=DOWNLOAD_TIMEOUT_S) as response:
            expected = response.read().decode("ascii", errors="replace").split()[0].strip().lower()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise NodeError(f"{url} is not published ({error.code})") from None
        raise NodeError(f"could not fetch {url}.sha1: {error}") from None
    except (OSError, IndexError) as error:
        raise NodeError(
            f"could not reach {url}: {error}", hint="Maven Central (or $LAWINDEX_MAVEN_REPO) must be reachable"
        ) from None
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha1(usedforsecurity=False)
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise NodeError(f"downloading {url} failed: {error}") from None
    if digest.hexdigest() != expected:
        partial.unlink(missing_ok=True)
        raise NodeError(f"{url}: SHA-1 {digest.hexdigest()} is not the published {expected}")
    partial.replace(target)
    return target


def home(version: str, cache: Path) -> Path:
    """The unpacked distribution `version` (modules added), made once per cache; shared, read-only by convention."""
    root = cache / "dist"
    unpacked = root / f"opensearch-{version}"
    stamp = unpacked / ".lawindex-complete"
    with locked(root / f"opensearch-{version}.lock"):
        if stamp.is_file() and stamp.read_text().strip() == LAYOUT:
            return unpacked
        archive = root / f"opensearch-{version}.zip"
        if not archive.is_file():
            _say(f"downloading OpenSearch {version} (the min distribution, ~160 MB) from {maven_repo()} ...")
            try:
                download(ZIP_PATH.format(v=version), archive)
            except NodeError as error:
                if "not published" in error.message:
                    raise NodeError(
                        f"OpenSearch {version} has no distribution zip on Maven Central",
                        hint="pick a pinned version (node/versions.env) or another published one",
                    ) from None
                raise
        shutil.rmtree(unpacked, ignore_errors=True)
        staging = root / f".opensearch-{version}.unpacking"
        shutil.rmtree(staging, ignore_errors=True)
        _unzip(archive, staging)
        tops = list(staging.iterdir())
        if len(tops) != 1 or not (tops[0] / "bin" / "opensearch").is_file():
            raise NodeError(f"{archive} is not an OpenSearch distribution (no single opensearch-*/bin/opensearch)")
        for name, classnames in NEEDED_MODULES.items():
            if not (tops[0] / "modules" / name).is_dir():
                _add_module(tops[0], name, classnames, version, root)
        tops[0].rename(unpacked)
        staging.rmdir()
        stamp.write_text(LAYOUT + "\n")
    return unpacked


def _unzip(archive: Path, target: Path) -> None:
    """Unpack keeping the executable bits (zipfile drops them); members may not leave `target`."""
    target.mkdir(parents=True)
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            out = (target / info.filename).resolve()
            if target.resolve() not in out.parents and out != target.resolve():
                raise NodeError(f"{archive}: member {info.filename!r} points outside the archive")
            zipped.extract(info, target)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                out.chmod(mode | 0o444 | (0o111 if info.is_dir() else 0))


def modules_added(distribution: Path) -> list[str]:
    """The modules lawindex added to an unpacked distribution (empty where its zip had them all)."""
    return sorted(
        p.parent.name for p in (distribution / "modules").glob("*/plugin-descriptor.properties")
        if "added by lawindex" in p.read_text(encoding="utf-8")
    )  # fmt: skip


def _add_module(distribution: Path, name: str, classnames: tuple[str, ...], version: str, root: Path) -> None:
    jar = root / f"{name}-{version}.jar"
    if not jar.is_file():
        _say(f"OpenSearch {version}'s zip has no {name} module; adding it from its Maven jar")
        download(MODULE_JAR_PATH.format(name=name, v=version), jar)
    with zipfile.ZipFile(jar) as zipped:
        members = set(zipped.namelist())
    found = [c for c in classnames if c.replace(".", "/") + ".class" in members]
    if not found:
        raise NodeError(f"{jar.name} has none of the plugin classes lawindex knows: {', '.join(classnames)}")
    classname = found[0]
    folder = distribution / "modules" / name
    folder.mkdir(parents=True)
    shutil.copy2(jar, folder / jar.name)
    # The descriptor's java.version is the one the distribution's own modules declare.
    java_version = "11"
    for other in sorted((distribution / "modules").glob("*/plugin-descriptor.properties")):
        for line in other.read_text(encoding="utf-8").splitlines():
            if line.startswith("java.version="):
                java_version = line.split("=", 1)[1].strip()
    (folder / "plugin-descriptor.properties").write_text(
        f"# {name} {version}, added by lawindex: this version's min distribution zip lacks it\n"
        f"description=Adds built-in analyzers and filters (added by lawindex)\n"
        f"version={version}\n"
        f"name={name}\n"
        f"classname={classname}\n"
        f"java.version={java_version}\n"
        f"opensearch.version={version}\n"
        # The real module extends lang-painless (scripted analysis filters); the min zip has no painless
        # and lawindex's analyzer scripts nothing, so it extends nothing here.
        "extended.plugins=\n"
        "has.native.controller=false\n",
        encoding="utf-8",
    )
