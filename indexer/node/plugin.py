"""The lawindex plugin for OpenSearch (`plugin/`, Java): built here for a node's version, installed into nodes.

The plugin gives OpenSearch the spec's BM25 (the `lawindex_bm25` similarity) and its retrieval (the
`lawindex` query), so that any client gets the spec's laws in the spec's order in one request. A plugin's
descriptor must name the exact OpenSearch version it runs on, so there is no one zip: `build` compiles
`plugin/` with `javac` against the jars of that version's own distribution (`indexer.node.distribution`, the zip
`lawindex opensearch start` runs) and packs `lawindex-<version>.zip`, cached per version and source digest.
No Gradle, no Maven: a JDK is all it takes. Lucene 9 (OpenSearch 2.x) and Lucene 10 (3.x) differ in two
classes (Weight#scorer, the Scorer constructor); each has its own `src/lucene<N>/` beside the shared sources.

`node_home` is the distribution with every plugin a node gets installed once (cached), which each node's
home is then hard-linked from: `install` runs the distribution's own `bin/opensearch-plugin install
--batch` for a list of zips, for this plugin and for any other (the k-NN plugin) alike.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from indexer.errors import BadInput, NodeError
from indexer.node import distribution

NAME = "lawindex"
# Bumped when what `build` makes from the same sources changes (the zip's layout, the descriptor's fields).
BUILD_LAYOUT = "1"
# Lucene majors with a shim folder under plugin/src/ (src/lucene9, src/lucene10).
LUCENE_MAJORS = (9, 10)
# The OpenSearch majors on those Lucene majors (2.x is Lucene 9, 3.x Lucene 10): a version of another major
# is refused before anything is downloaded or compiled.
OPENSEARCH_MAJORS = {2: 9, 3: 10}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
JAVAC_TIMEOUT_S = 600.0
INSTALL_TIMEOUT_S = 300.0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def sources() -> Path:
    """The plugin's source folder: the repository's plugin/, else the wheel's copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "plugin", here / "_data" / "plugin"):
        if (candidate / "src" / "main" / "java").is_dir():
            return candidate
    raise NodeError("plugin/ (the lawindex plugin's sources) not found next to the indexer package")


def _source_files(root: Path, lucene: int) -> list[Path]:
    return sorted((root / "src" / "main" / "java").rglob("*.java")) + sorted(
        (root / "src" / f"lucene{lucene}" / "java").rglob("*.java")
    )


def _descriptor_template(root: Path) -> str:
    return (root / "src" / "main" / "resources" / "plugin-descriptor.properties").read_text(encoding="utf-8")


def lucene_major(dist: Path) -> int:
    """The Lucene major of an unpacked distribution, from its lib/lucene-core-<version>.jar."""
    for jar in (dist / "lib").glob("lucene-core-*.jar"):
        found = re.match(r"lucene-core-(\d+)\.", jar.name)
        if found:
            return int(found.group(1))
    raise NodeError(f"{dist / 'lib'} has no lucene-core jar: not an OpenSearch distribution")


def java_release(dist: Path) -> int:
    """The Java release the distribution's own modules are built for (its descriptors' java.version)."""
    releases: list[int] = []
    for descriptor in (dist / "modules").glob("*/plugin-descriptor.properties"):
        for line in descriptor.read_text(encoding="utf-8").splitlines():
            if line.startswith("java.version="):
                value = line.split("=", 1)[1].strip().removeprefix("1.")
                if value.isdigit():
                    releases.append(int(value))
    # 11 at least: the sources use List.copyOf (Java 10) and nothing newer than 11.
    return max([11, *releases])


def find_javac(version: str, release: int) -> tuple[Path, int]:
    """A `javac` that can compile for `release`: the JDK that runs `version` when it has one, else the newest
    JDK found that does (javac --release N builds for N on any newer JDK)."""
    from indexer.node import java as node

    try:
        preferred: Path | None = node.find_java(version)[0]
    except NodeError:
        preferred = None
    seen: list[str] = []
    fitting: list[tuple[int, Path]] = []
    for home in node.java_candidates():
        major = node.java_major(home)
        javac = home / "bin" / "javac"
        if major is None:
            continue
        if not javac.is_file():
            seen.append(f"Java {major} at {home} (no javac)")
            continue
        seen.append(f"JDK {major} at {home}")
        if major >= release:
            if preferred is not None and home.resolve() == preferred.resolve():
                return javac, major
            fitting.append((major, javac))
    if fitting:
        major, javac = max(fitting, key=lambda f: f[0])
        return javac, major
    raise NodeError(
        f"building the lawindex plugin for OpenSearch {version} needs a JDK {release}+ (javac); found: "
        + (", ".join(seen) or "no Java"),
        hint=f"install a JDK {release}+ under /usr/lib/jvm or point JAVA_HOME at one",
    )


def _digest(root: Path, lucene: int, release: int, dist: Path) -> str:
    digest = hashlib.sha256()
    parts: list[bytes] = [BUILD_LAYOUT.encode(), str(lucene).encode(), str(release).encode()]
    for path in _source_files(root, lucene):
        parts += [str(path.relative_to(root)).encode(), path.read_bytes()]
    parts.append(_descriptor_template(root).encode())
    for name, path in embedder_files():
        parts += [name.encode(), path.read_bytes()]
    # The jars compiled against: the same version from another zip must not reuse a build.
    parts += [jar.name.encode() for jar in sorted((dist / "lib").glob("*.jar"))]
    for part in parts:
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def zip_name(version: str) -> str:
    """`lawindex-<version>.zip`: the file name of the plugin built for OpenSearch `version`."""
    return f"{NAME}-{version}.zip"


def check_version(version: str) -> None:
    """BadInput when `version` is not an OpenSearch version (major.minor.patch); NodeError when the plugin has
    no build for its major (the sources cover the Lucene of OpenSearch 2.x and 3.x only)."""
    found = _VERSION.fullmatch(version)
    if found is None:
        raise BadInput(f"not an OpenSearch version: {version!r}", hint="a version is major.minor.patch, e.g. 3.6.0")
    major = int(found.group(1))
    if major not in OPENSEARCH_MAJORS:
        known = " and ".join(f"{m}.x" for m in OPENSEARCH_MAJORS)
        raise NodeError(
            f"the lawindex plugin has no build for OpenSearch {version} (it is built for OpenSearch {known})",
            hint="use a pinned version (node/versions.env), or run that cluster without the plugin (the window path)",
        )


def build(version: str, out: Path | None = None, cache_dir: Path | str | None = None) -> Path:
    """The plugin zip for OpenSearch `version` (built once per version and source digest, then cached); with
    `out`, copied into that folder. A version that is none, whose major the plugin has no build for, whose
    distribution cannot be had, or whose Lucene the sources do not cover raises (BadInput, NodeError) and
    leaves no zip."""
    from indexer.node import java as node

    check_version(version)
    cache = Path(cache_dir) if cache_dir else node.default_cache_dir()
    dist = distribution.home(version, cache)
    lucene = lucene_major(dist)
    if lucene not in LUCENE_MAJORS:
        raise NodeError(
            f"the lawindex plugin has no build for OpenSearch {version} (Lucene {lucene}; "
            f"plugin/src has Lucene {', '.join(map(str, LUCENE_MAJORS))})",
            hint="use a pinned version (node/versions.env)",
        )
    root = sources()
    release = java_release(dist)
    folder = cache / "plugins" / NAME / f"{version}-{_digest(root, lucene, release, dist)}"
    built = folder / zip_name(version)
    with distribution.locked(cache / "plugins" / NAME / f"{version}.lock"):
        if not built.is_file():
            _compile(version, root, dist, lucene, release, folder)
    if out is None:
        return built
    out.mkdir(parents=True, exist_ok=True)
    target = out / built.name
    partial = target.with_name(target.name + ".part")
    shutil.copyfile(built, partial)
    partial.replace(target)
    return target


def _compile(version: str, root: Path, dist: Path, lucene: int, release: int, folder: Path) -> None:
    javac, major = find_javac(version, release)
    began = time.monotonic()
    _say(f"building the lawindex plugin for OpenSearch {version} (Lucene {lucene}, Java {release}) with {javac} ...")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".building.") as scratch:
        classes = Path(scratch) / "classes"
        classes.mkdir()
        command = [
            str(javac), "--release", str(release), "-encoding", "UTF-8", "-nowarn",
            "-cp", str(dist / "lib" / "*"), "-d", str(classes),
            *(str(p) for p in _source_files(root, lucene)),
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=JAVAC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise NodeError(f"javac did not finish in {JAVAC_TIMEOUT_S:.0f} s building the lawindex plugin") from None
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise NodeError(f"the lawindex plugin does not compile for OpenSearch {version}:\n{tail}")
        staged = Path(scratch) / "zip"
        staged.mkdir()
        jar = staged / f"{NAME}-{version}.jar"
        _write_jar(jar, classes, version)
        descriptor = _descriptor_template(root)
        for key, value in (("version", version), ("java.version", str(release)), ("opensearch.version", version)):
            descriptor = descriptor.replace("${" + key + "}", value)
        zipped = staged / zip_name(version)
        with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as out:
            out.writestr("plugin-descriptor.properties", descriptor)
            out.write(jar, jar.name)
        built = Path(scratch) / "built"
        built.mkdir()
        zipped.replace(built / zipped.name)
        shutil.rmtree(folder, ignore_errors=True)
        built.rename(folder)
    _say(f"built {folder / zip_name(version)} in {time.monotonic() - began:.1f} s (javac of Java {major})")


def embedder_files() -> list[tuple[str, Path]]:
    """The files the plugin's embedder reads from its jar (org/lawindex/wordllama/...), taken from the installed
    `wordllama` wheel (MIT): WordLlama's tokenizer.json (1.8 MB) and its l2_supercat 256-d weights (16 MB of
    float16), the same files indexer.retrieval.embedding loads, so that the node embeds a question bit for bit
    as lawindex's Python does."""
    import importlib.util

    # Found, not imported: wordllama's import configures the root logger (see indexer.retrieval.embedding).
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise NodeError("the wordllama package is not installed", hint="pip install wordllama")
    folder = Path(spec.origin).resolve().parent
    tokenizer, weights = "l2_supercat_tokenizer_config.json", "l2_supercat_256.safetensors"
    files = [
        (f"org/lawindex/wordllama/{tokenizer}", folder / "tokenizers" / tokenizer),
        (f"org/lawindex/wordllama/{weights}", folder / "weights" / weights),
    ]
    missing = [str(path) for _, path in files if not path.is_file()]
    if missing:
        raise NodeError(
            f"the wordllama wheel lacks {', '.join(missing)}", hint="pip install --force-reinstall wordllama"
        )
    return files


def _write_jar(jar: Path, classes: Path, version: str) -> None:
    manifest = f"Manifest-Version: 1.0\nImplementation-Title: {NAME}\nImplementation-Version: {version}\n\n"
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", manifest)
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
        for name, path in embedder_files():
            out.write(path, name)


def install_line(zipped: Path) -> str:
    """The command an operator runs in their OpenSearch home to install `zipped`."""
    return f"bin/opensearch-plugin install --batch {zipped.resolve().as_uri()}"


# --- installing ----------------------------------------------------------------------------------


def home_version(home: Path) -> str | None:
    """The OpenSearch version of an OpenSearch home, from its lib/opensearch-<version>.jar (None if none)."""
    for jar in (home / "lib").glob("opensearch-*.jar"):
        found = re.fullmatch(r"opensearch-(\d+\.\d+\.\d+)\.jar", jar.name)
        if found:
            return found.group(1)
    return None


def zip_version(zipped: Path) -> str | None:
    """The `opensearch.version` a plugin zip's descriptor names (None when it names none); NodeError when
    the file is not a plugin zip."""
    try:
        with zipfile.ZipFile(zipped) as archive:
            text = archive.read("plugin-descriptor.properties").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise NodeError(f"{zipped} is not an OpenSearch plugin zip: {error}") from None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "opensearch.version":
            return value.strip()
    return None


def check_fits(home: Path, zips: Sequence[Path]) -> None:
    """NodeError, before anything is installed, when a zip is built for another OpenSearch version than the
    home's (OpenSearch would refuse it too, after unpacking it)."""
    running = home_version(home)
    for zipped in zips:
        built_for = zip_version(zipped)
        if running is not None and built_for is not None and built_for != running:
            raise NodeError(
                f"{zipped.name} is built for OpenSearch {built_for}, but {home} is OpenSearch {running}: "
                "nothing was installed",
                hint=f"build the plugin for that node: lawindex plugin build --version {running}",
            )


def install(home: Path, zips: Sequence[Path], java_home: Path) -> None:
    """Install plugin zips into an OpenSearch home with its own `bin/opensearch-plugin install --batch`, in
    one run (one JVM). A zip built for another version is refused before the run (`check_fits`); a failure
    raises NodeError naming the plugin; what that run installed is removed."""
    if not zips:
        return
    check_fits(home, zips)
    run_installer(home, zips, java_home)


def run_installer(home: Path, zips: Sequence[Path], java_home: Path) -> None:
    """`bin/opensearch-plugin install --batch` of `zips` in `home`; on a failure (OpenSearch's own refusal
    included), every plugin folder the run added is removed and NodeError says what OpenSearch said."""
    before = {p.name for p in (home / "plugins").iterdir()} if (home / "plugins").is_dir() else set()
    command = [str(home / "bin" / "opensearch-plugin"), "install", "--batch", *(z.resolve().as_uri() for z in zips)]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "JAVA_HOME": str(java_home),
        "OPENSEARCH_JAVA_HOME": str(java_home), "OPENSEARCH_PATH_CONF": str(home / "config"), "HOME": str(home),
    }  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=INSTALL_TIMEOUT_S)
        failed = done.returncode != 0
        said = (done.stderr or done.stdout).strip()
    except subprocess.TimeoutExpired:
        failed, said = True, f"no answer in {INSTALL_TIMEOUT_S:.0f} s"
    if failed:
        for added in (home / "plugins").iterdir():
            if added.name not in before:
                shutil.rmtree(added, ignore_errors=True)
        names = ", ".join(z.name for z in zips)
        raise NodeError(f"installing {names} into {home} failed: {said[-500:]}")


def node_plugins(version: str, cache: Path) -> list[Path]:
    """The plugin zips every node lawindex starts gets, for `version`: the lawindex plugin."""
    return [build(version, cache_dir=cache)]


def node_home(version: str, cache: Path, java_home: Path) -> Path:
    """The distribution of `version` with `node_plugins` installed: made once per set of zips (cached beside
    the distribution, hard-linked from it), what each node's home is then made from."""
    dist = distribution.home(version, cache)
    zips = node_plugins(version, cache)
    digest = hashlib.sha256(distribution.LAYOUT.encode())
    for zipped in zips:
        digest.update(zipped.name.encode() + b"\0" + hashlib.sha256(zipped.read_bytes()).digest())
    target = cache / "dist" / f"opensearch-{version}+plugins-{digest.hexdigest()[:12]}"
    stamp = target / ".lawindex-complete"
    with distribution.locked(cache / "dist" / f"opensearch-{version}+plugins.lock"):
        if stamp.is_file():
            return target
        began = time.monotonic()
        staging = target.with_name(f".{target.name}.installing")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(dist, staging, symlinks=True, copy_function=_link_or_copy,
                        ignore=shutil.ignore_patterns("config", ".lawindex-complete"))  # fmt: skip
        shutil.copytree(dist / "config", staging / "config", symlinks=True)
        (staging / "plugins").mkdir(exist_ok=True)
        try:
            install(staging, zips, java_home)
        except NodeError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        stamp.write_text(distribution.LAYOUT + "\n")
        _say(f"installed {', '.join(z.name for z in zips)} into {target} in {time.monotonic() - began:.1f} s")
    return target


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def installed_plugins(home: Path) -> list[str]:
    """The plugins installed in an OpenSearch home (its plugins/ folders)."""
    folder = home / "plugins"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


# --- asking a cluster ----------------------------------------------------------------------------


def installed(client: Any) -> bool:
    """Whether every node of the cluster has the lawindex plugin (indexer.opensearch.plugins)."""
    from indexer.opensearch.plugins import every_node_has

    return every_node_has(client, NAME)
