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
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from indexer.errors import NodeError
from indexer.node import progress
from indexer.opensearch.cluster import versions

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


def where() -> str:
    """`Maven Central`, or the mirror's URL: what a message names."""
    return "Maven Central" if maven_repo() == MAVEN_CENTRAL else maven_repo()


def maven_repo() -> str:
    """Maven Central, or the mirror in $LAWINDEX_MAVEN_REPO (a corporate proxy, a local file:// copy)."""
    return os.environ.get("LAWINDEX_MAVEN_REPO", MAVEN_CENTRAL).rstrip("/")


# Given a function that takes the lock if it is free (True), waits until it has it, saying what it waits for.
Waiter = Callable[[Callable[[], bool]], None]


@contextlib.contextmanager
def locked(path: Path, waiting: Waiter | None = None) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created if missing): one download per version, one start per port.
    `waiting`, when another process holds it, waits (and says what for) instead of blocking silently."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:

        def take() -> bool:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        if waiting is None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        elif not take():
            waiting(take)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# The digests Maven Central may publish beside an artifact, strongest first. Some OpenSearch zips carry only
# some of them (3.1.0: sha1 and sha512; 3.4.0: sha1) and some none at all (2.12.0, 2.16.0, 2.17.1, 3.0.0, 3.2.0,
# 3.3.0, 3.5.0, 3.7.0: the zip answers, every digest is a 404), so a missing .sha1 says nothing of the zip.
DIGESTS = ("sha512", "sha256", "sha1", "md5")
# A digest the user vouches for, `sha512:<hex>` (any of DIGESTS), for a zip Maven Central publishes none for.
USER_DIGEST = "LAWINDEX_ZIP_DIGEST"


class NotPublished(NodeError):
    """The artifact itself is absent from the repository (404)."""


class NoDigest(NodeError):
    """The artifact is there, but the repository publishes no digest of it, and none was given."""


def _fetch_text(url: str) -> str | None:
    """The body of `url`, or None when the repository says it has no such file (404, or no such local file)."""
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            return str(response.read().decode("ascii", errors="replace"))
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise NodeError(f"could not fetch {url}: {error}") from None
    except urllib.error.URLError as error:
        if isinstance(error.reason, FileNotFoundError):
            return None
        raise NodeError(
            f"could not reach {url}: {error}", hint="Maven Central (or $LAWINDEX_MAVEN_REPO) must be reachable"
        ) from None
    except OSError as error:
        raise NodeError(
            f"could not reach {url}: {error}", hint="Maven Central (or $LAWINDEX_MAVEN_REPO) must be reachable"
        ) from None


def _exists(url: str) -> bool:
    """Whether the repository has `url` (a HEAD request; a local file for file:// mirrors)."""
    if url.startswith("file://"):
        return Path(urllib.request.url2pathname(url.removeprefix("file://"))).is_file()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=DOWNLOAD_TIMEOUT_S):
            return True
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise NodeError(f"could not fetch {url}: {error}") from None
    except OSError as error:
        raise NodeError(
            f"could not reach {url}: {error}", hint="Maven Central (or $LAWINDEX_MAVEN_REPO) must be reachable"
        ) from None


def user_digest() -> tuple[str, str] | None:
    """The digest in $LAWINDEX_ZIP_DIGEST as (algorithm, hex); BadInput-like NodeError when it is malformed."""
    given = os.environ.get(USER_DIGEST, "").strip()
    if not given:
        return None
    algorithm, _, value = given.partition(":")
    algorithm, value = algorithm.strip().lower(), value.strip().lower()
    lengths = {"sha512": 128, "sha256": 64, "sha1": 40, "md5": 32}
    if algorithm not in lengths or len(value) != lengths[algorithm] or not all(c in "0123456789abcdef" for c in value):
        raise NodeError(
            f"${USER_DIGEST}={given!r} is not a digest",
            hint=f"give it as <algorithm>:<hex>, the algorithm one of {', '.join(DIGESTS)}",
        )
    return algorithm, value


def published_digest(url: str) -> tuple[str, str, list[str]] | None:
    """The strongest digest the repository publishes for `url` as (algorithm, hex, the digest files it lacks),
    or None when it publishes none. Every one is asked for, so that what is missing can be said exactly."""
    found: list[tuple[str, str]] = []
    missing: list[str] = []
    # Asked at once: one after the other, four round trips an artifact were most of a first start's 17 jars.
    with ThreadPoolExecutor(len(DIGESTS), thread_name_prefix="digest") as asking:
        texts = list(asking.map(_fetch_text, [f"{url}.{algorithm}" for algorithm in DIGESTS]))
    for algorithm, text in zip(DIGESTS, texts, strict=True):
        if text is not None and text.split():
            found.append((algorithm, text.split()[0].strip().lower()))
        else:
            missing.append(f".{algorithm}")
    return (*found[0], missing) if found else None


def length_file(partial: Path) -> Path:
    """Where a download under way keeps its expected size, for another process that waits on it."""
    return partial.with_name(partial.name + ".length")


def streamed(url: str, partial: Path, what: str, consume: Callable[[bytes], object]) -> None:
    """`url` into `partial`, each chunk given to `consume` too, its progress on stderr (indexer.node.progress);
    `partial` and its length file are removed when it fails (urllib's and the file's errors, raised)."""
    shown: progress.Download | None = None
    try:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, partial.open("wb") as out:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if total is not None:
                length_file(partial).write_text(f"{total}\n")
            shown = progress.Download(what, total)
            done = 0
            while chunk := response.read(1 << 20):
                consume(chunk)
                out.write(chunk)
                done += len(chunk)
                shown.update(done)
        shown.done()
    except BaseException:
        if shown is not None:
            shown.done("failed")
        partial.unlink(missing_ok=True)
        raise
    finally:
        length_file(partial).unlink(missing_ok=True)


def download(path_in_repo: str, target: Path, *, user: tuple[str, str] | None = None, what: str | None = None) -> Path:
    """`path_in_repo` from the Maven repository into `target`, checked against the strongest digest the
    repository publishes for it (sha512, sha256, sha1, md5), else against `user`'s. NotPublished when the
    artifact is absent; NoDigest, before anything is downloaded, when it is there with no digest and no `user`.
    `what` names it in its progress (indexer.node.progress)."""
    url = f"{maven_repo()}/{path_in_repo}"
    found = published_digest(url)
    if found is None and user is None:
        if not _exists(url):
            raise NotPublished(f"{url} is not published (404)")
        raise NoDigest(
            f"{url} is published, but with no digest ({', '.join('.' + a for a in DIGESTS)} are all absent): "
            "lawindex downloads nothing it cannot check",
            hint=f"get the file's digest from a source you trust and give it as ${USER_DIGEST}=sha512:<hex>",
        )
    algorithm, expected = (found[0], found[1]) if found is not None else user  # type: ignore[misc]
    partial = target.with_name(target.name + ".part")
    digest = hashlib.new(algorithm, usedforsecurity=False)
    try:
        streamed(url, partial, what or f"downloading {target.name}", digest.update)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise NotPublished(f"{url} is not published (404)") from None
        raise NodeError(f"downloading {url} failed: {error}") from None
    except OSError as error:
        raise NodeError(f"downloading {url} failed: {error}") from None
    if digest.hexdigest() != expected:
        partial.unlink(missing_ok=True)
        whose = "the published" if found is not None else f"${USER_DIGEST}'s"
        raise NodeError(f"{url}: {algorithm} {digest.hexdigest()} is not {whose} {expected}")
    if found is not None and found[2]:
        _say(f"checked {url.rsplit('/', 1)[-1]} with its .{algorithm} ({', '.join(found[2])} not published)")
    partial.replace(target)
    return target


def working_versions() -> list[str]:
    """The versions whose distribution zip and a digest of it are on Maven Central, as the version matrix
    (pins/matrix.tsv) last found them: what a refused version's hint offers instead."""
    for candidate in (Path(__file__).resolve().parents[2] / "pins", Path(__file__).resolve().parent / "_data" / "pins"):
        matrix = candidate / "matrix.tsv"
        if matrix.is_file():
            rows = [line.split("\t") for line in matrix.read_text(encoding="utf-8").splitlines()]
            return [r[0] for r in rows if len(r) > 1 and not r[0].startswith("#") and r[1] == "zip+digest"]
    return []


def check_supported(version: str) -> None:
    """NodeError, before anything is downloaded or built, when lawindex does not support OpenSearch `version`."""
    why = versions.unsupported(version)
    if why is not None:
        raise NodeError(f"{why}: nothing was downloaded", hint=f"start OpenSearch {versions.RANGE}")


def home(version: str, cache: Path) -> Path:
    """The unpacked distribution `version` (modules added), made once per cache; shared, read-only by convention."""
    check_supported(version)
    root = cache / "dist"
    unpacked = root / f"opensearch-{version}"
    stamp = unpacked / ".lawindex-complete"
    archive = root / f"opensearch-{version}.zip"
    with locked(root / f"opensearch-{version}.lock", _watching(archive, f"OpenSearch {version}")):
        if stamp.is_file() and stamp.read_text().strip() == LAYOUT:
            return unpacked
        if not archive.is_file():
            working = ", ".join(working_versions()) or "pins/versions.env's"
            what = f"downloading OpenSearch {version} (the min distribution) from {where()}"
            try:
                download(ZIP_PATH.format(v=version), archive, user=user_digest(), what=what)
            except NotPublished:
                raise NotPublished(
                    f"OpenSearch {version} has no distribution zip on {where()}",
                    hint=f"start a version whose zip is published with a digest ({working}); "
                    f"`lawindex plugin build --version {version}` still builds the plugin for it",
                ) from None
            except NoDigest as error:
                raise NoDigest(
                    f"OpenSearch {version}'s distribution zip is on {where()}, but no digest of it is "
                    f"(.sha512, .sha256, .sha1 and .md5 are all absent): lawindex starts nothing it cannot check",
                    hint=f"{error.hint}, or start a version published with a digest ({working})",
                ) from None
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


def saying(line: str) -> Waiter:
    """Waits for the lock after saying `line` (what another process is doing) on stderr."""

    def wait(take: Callable[[], bool]) -> None:
        _say(line)
        while not take():
            time.sleep(0.1)

    return wait


def _watching(archive: Path, what: str) -> Waiter:
    """Waits for another process that downloads and unpacks `archive` (scripts/demo's background fetch beside
    pip, or another start), showing its download's progress from the size of its .part file."""

    def wait(take: Callable[[], bool]) -> None:
        _say(f"waiting for another lawindex process that fetches {what} ...")
        partial = archive.with_name(archive.name + ".part")
        shown: progress.Download | None = None
        while not take():
            with contextlib.suppress(OSError, ValueError):
                if shown is None and partial.is_file():
                    total = length_file(partial)
                    shown = progress.Download(
                        f"downloading {what} (another process)",
                        int(total.read_text()) if total.is_file() else None,
                    )
                if shown is not None and partial.is_file():
                    shown.update(partial.stat().st_size)
            time.sleep(0.25)
        if shown is not None:
            if archive.is_file():
                shown.update(archive.stat().st_size)
            shown.done()

    return wait


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
