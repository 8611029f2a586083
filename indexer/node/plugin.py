"""The lawindex plugin for OpenSearch (`plugin/`, Java): built here for a node's version, installed into nodes.

The plugin gives OpenSearch the spec's BM25 (the `lawindex_bm25` similarity) and its retrieval (the
`lawindex` query), so that any client gets the spec's laws in the spec's order in one request. A plugin's
descriptor names the OpenSearch it runs on: from 2.13 a range (`dependencies={"opensearch": "~2.19.0"}`,
OpenSearch #11441; the caret form is reported broken on 3.x, #18787, so the tilde is used), so one zip,
`lawindex-2.19.zip`, serves every patch release of a line; before 2.13 one exact version, `lawindex-2.11.1.zip`.
`build` compiles `plugin/` with `javac` against `org.opensearch:opensearch` of the line's first release (or of
the exact version) and the OpenSearch and Lucene jars its pom names, fetched from Maven Central (indexer.node.maven,
each checked against a published digest): no distribution is downloaded. No Gradle, no Maven: a JDK is all it
takes. `_pack` is the one place that says what goes into the zip. Lucene 9 (OpenSearch 2.x) and Lucene 10
(3.x) differ in two classes (Weight#scorer, the Scorer constructor); each has its own `src/lucene<N>/`
beside the shared sources.

`node_home` is the distribution with every plugin a node gets installed once (cached), which each node's
home is then hard-linked from, each zip unpacked as `bin/opensearch-plugin` lays it out (indexer.node.knn's
`install_zip`, no JVM); `install` runs the distribution's own `bin/opensearch-plugin install --batch` for a list
of zips, for an operator's home.

Long: one build, read top to bottom (what to compile against, the cache key, javac, the jar with the embedder's
tokenizer and table, the zip and its descriptor), then the install that takes the zip it made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import BadInput, NodeError
from indexer.node import distribution, knn
from indexer.opensearch.cluster import versions

NAME = "lawindex"
# Bumped when what `build` makes from the same sources changes (the zip's layout, the descriptor's fields).
BUILD_LAYOUT = "1"
# Lucene majors with a shim folder under plugin/src/ (src/lucene9, src/lucene10).
LUCENE_MAJORS = (9, 10)
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


def java_release(version: str) -> int:
    """The Java release OpenSearch `version`'s own modules are built for: 11 on 2.x, 21 on 3.x."""
    return 21 if int(version.split(".")[0]) >= 3 else 11


def find_javac(version: str, release: int) -> tuple[Path, int]:
    """A `javac` that can compile for `release`: the JDK that runs `version` when it has one, else the newest
    JDK found that does (javac --release N builds for N on any newer JDK)."""
    from indexer.node import java

    try:
        preferred: Path | None = java.find_java(version)[0]
    except NodeError:
        preferred = None
    seen: list[str] = []
    fitting: list[tuple[int, Path]] = []
    for home in java.java_candidates():
        major = java.java_major(home)
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


def _digest(
    root: Path, lucene: int, release: int, classpath: Sequence[Path], requirement: str, *, embedder: bool = True
) -> str:
    """The build's cache key: its sources, descriptor, the jars compiled against and (`embedder`) the embedder's
    files; without them, the key of the compiled classes alone, which need no wordllama (`compiled`)."""
    digest = hashlib.sha256()
    parts: list[bytes] = [BUILD_LAYOUT.encode(), str(lucene).encode(), str(release).encode(), requirement.encode()]
    for path in _source_files(root, lucene):
        parts += [str(path.relative_to(root)).encode(), path.read_bytes()]
    parts.append(_descriptor_template(root).encode())
    for name, path in jar_resources(root) if embedder else ():
        parts += [name.encode(), path.read_bytes()]
    parts += [jar.name.encode() for jar in classpath]  # the jars compiled against
    for part in parts:
        digest.update(part)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Target:
    """What one zip is built for: the OpenSearch it compiles against and the descriptor's requirement."""

    compile_against: str  # 2.19.0 for the 2.19 line; the version itself before 2.13
    requirement: str  # ~2.19.0, or 2.11.1 (exact)
    name: str  # lawindex-2.19.zip, lawindex-2.11.1.zip

    @property
    def ranged(self) -> bool:
        return self.requirement.startswith("~")


def target(version: str) -> Target:
    """The zip that serves OpenSearch `version`: its line's (`~M.m.0`) from 2.13, else the version's own."""
    if versions.takes_descriptor_range(version):
        first = f"{versions.line(version)}.0"
        return Target(first, f"~{first}", f"{NAME}-{versions.line(version)}.zip")
    return Target(version, version, f"{NAME}-{version}.zip")


def zip_name(version: str) -> str:
    """The file name of the plugin zip that serves OpenSearch `version`: `lawindex-2.19.zip` for a line
    (2.13 on), `lawindex-2.11.1.zip` for one version (before)."""
    return target(version).name


def check_version(version: str) -> None:
    """BadInput when `version` is not an OpenSearch version (major.minor.patch); NodeError, naming the range,
    when it is outside the versions lawindex supports (indexer.opensearch.cluster.versions)."""
    if _VERSION.fullmatch(version) is None:
        raise BadInput(f"not an OpenSearch version: {version!r}", hint="a version is major.minor.patch, e.g. 3.6.0")
    why = versions.unsupported(version)
    if why is not None:
        raise NodeError(
            f"the lawindex plugin has no build for OpenSearch {version}: {why.split(' is ', 1)[1]}",
            hint=f"use OpenSearch {versions.RANGE}, or run that cluster without the plugin (the window path)",
        )


def build(version: str, out: Path | None = None, cache_dir: Path | str | None = None, root: Path | None = None) -> Path:
    """The plugin zip that serves OpenSearch `version` (its line's from 2.13, else its own; built once per
    source digest, then cached), compiled against Maven Central's jars: no distribution is downloaded. With
    `out`, copied into that folder. `root`: another copy of plugin/ to build (another build of the plugin, as
    tests/integration/test_plugin_wire.py makes one). A version that is none or outside the supported range, or
    whose jars cannot be had, raises (BadInput, NodeError) and leaves no zip."""
    from indexer.cache import default_cache_dir

    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    aim, root, classpath, lucene, release = _plan(version, cache, root)
    folder = cache / "plugins" / NAME / f"{aim.name[:-4]}-{_digest(root, lucene, release, classpath, aim.requirement)}"
    built = folder / aim.name
    with distribution.locked(cache / "plugins" / NAME / f"{aim.name[:-4]}.lock"):
        if not built.is_file():
            _pack_build(aim, root, compiled(version, cache, root), release, folder)
    if out is None:
        return built
    out.mkdir(parents=True, exist_ok=True)
    target_path = out / built.name
    partial = target_path.with_name(target_path.name + ".part")
    shutil.copyfile(built, partial)
    partial.replace(target_path)
    return target_path


def _plan(version: str, cache: Path, root: Path | None = None) -> tuple[Target, Path, list[Path], int, int]:
    """What a build of the plugin for `version` takes: its target, the sources (`root`, else `sources()`), the
    classpath (fetched), the Lucene major and the Java release."""
    from indexer.node import maven

    check_version(version)
    aim = target(version)
    classpath = maven.compile_classpath(aim.compile_against, cache)
    lucene = maven.lucene_major(classpath)
    if lucene not in LUCENE_MAJORS:
        raise NodeError(
            f"the lawindex plugin has no build for OpenSearch {version} (Lucene {lucene}; "
            f"plugin/src has Lucene {', '.join(map(str, LUCENE_MAJORS))})",
            hint=f"use OpenSearch {versions.RANGE}",
        )
    return aim, root or sources(), classpath, lucene, java_release(version)


def compiled(version: str, cache: Path, root: Path | None = None) -> Path:
    """The plugin's classes for `version` (from `root`, else `sources()`), compiled once per source digest
    (javac; no wordllama needed, so scripts/demo compiles them while pip installs, `python3 -m indexer.node.fetch`)."""
    aim, root, classpath, lucene, release = _plan(version, cache, root)
    key = _digest(root, lucene, release, classpath, aim.requirement, embedder=False)
    folder = cache / "plugins" / NAME / f"classes-{aim.name[:-4]}-{key}"
    waiting = distribution.saying("waiting for another lawindex process that compiles the lawindex plugin ...")
    with distribution.locked(cache / "plugins" / NAME / f"classes-{aim.name[:-4]}.lock", waiting):
        if not (folder / ".lawindex-complete").is_file():
            _compile(version, aim, root, classpath, lucene, release, folder)
    return folder


def _compile(
    version: str, aim: Target, root: Path, classpath: Sequence[Path], lucene: int, release: int, folder: Path
) -> None:
    javac, major = find_javac(version, release)
    began = time.monotonic()
    _say(
        f"compiling the lawindex plugin for OpenSearch {aim.requirement} (against {aim.compile_against}'s jars, "
        f"Lucene {lucene}, Java {release}) with {javac} ..."
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".compiling.") as scratch:
        classes = Path(scratch) / "classes"
        classes.mkdir()
        # javac's own JVM compiling with C1 alone: the same classes in half the time and CPU (4.4 -> 2.2 s for
        # the plugin's 29 files here), since javac is done before C2's work would pay off.
        command = [
            str(javac), "-J-XX:TieredStopAtLevel=1", "--release", str(release), "-encoding", "UTF-8", "-nowarn",
            "-cp", os.pathsep.join(str(j) for j in classpath), "-d", str(classes),
            *(str(p) for p in _source_files(root, lucene)),
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=JAVAC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise NodeError(f"javac did not finish in {JAVAC_TIMEOUT_S:.0f} s building the lawindex plugin") from None
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
            raise NodeError(f"the lawindex plugin does not compile for OpenSearch {version}:\n{tail}")
        (classes / ".lawindex-complete").write_text(BUILD_LAYOUT + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        classes.rename(folder)
    _say(f"compiled the lawindex plugin in {time.monotonic() - began:.1f} s (javac of Java {major})")


def _pack_build(aim: Target, root: Path, classes: Path, release: int, folder: Path) -> None:
    """The zip in `folder`: the jar of `classes` and the embedder's files, and the descriptor."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".building.") as scratch:
        staged = Path(scratch) / "zip"
        staged.mkdir()
        jar = staged / f"{aim.name[:-4]}.jar"
        _write_jar(jar, classes, aim.compile_against, jar_resources(root))
        zipped = staged / aim.name
        _pack(zipped, descriptor(root, aim, release), [(jar, jar.name)])
        built = Path(scratch) / "built"
        built.mkdir()
        zipped.replace(built / zipped.name)
        shutil.rmtree(folder, ignore_errors=True)
        built.rename(folder)
    _say(f"built {folder / aim.name}")


def descriptor(root: Path, aim: Target, release: int) -> str:
    """The zip's plugin-descriptor.properties: the template with its values, and the OpenSearch it runs on as
    a range (`dependencies`) or one version (`opensearch.version`); OpenSearch refuses a descriptor with both."""
    text = _descriptor_template(root)
    for key, value in (("version", aim.compile_against), ("java.version", str(release))):
        text = text.replace("${" + key + "}", value)
    if aim.ranged:
        wanted = json.dumps({"opensearch": aim.requirement})
        return text.replace("opensearch.version=${opensearch.version}", f"dependencies={wanted}")
    return text.replace("${opensearch.version}", aim.requirement)


def _pack(zipped: Path, descriptor_text: str, files: Sequence[tuple[Path, str]]) -> None:
    """Write the plugin zip: its descriptor at the top, then `files` as (file, name in the zip). The one place
    where what a plugin zip holds is decided: a resource the plugin needs (a model file) is one more entry of
    `files`, at the top level, where OpenSearch puts it in the plugin's folder."""
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("plugin-descriptor.properties", descriptor_text)
        for path, name in files:
            out.write(path, name, compress_type=_compression(path))


def embedder_files() -> list[tuple[str, Path]]:
    """The files the plugin's embedder reads from its jar (org/lawindex/..., Embedder.TOKENIZER and WEIGHTS): the
    installed `wordllama` wheel's tokenizer.json (1.8 MB, MIT) and lawindex's own table
    (models/lawindex-road-256.safetensors, 16 MB of float16), the same files indexer.retrieval.embedding loads,
    so that the node embeds a question bit for bit as lawindex's Python does."""
    from indexer.retrieval.model_files import shipped_table, wordllama_files

    try:
        tokenizer, table = wordllama_files()[0], shipped_table()
    except FileNotFoundError as missing:
        raise NodeError(str(missing), hint="pip install --force-reinstall lawindex wordllama") from None
    if not tokenizer.is_file():
        raise NodeError(f"the wordllama wheel lacks {tokenizer}", hint="pip install --force-reinstall wordllama")
    return [(f"org/lawindex/wordllama/{tokenizer.name}", tokenizer), (f"org/lawindex/models/{table.name}", table)]


def contract(root: Path) -> Path:
    """contract/request.json, the one rule set of a question: the repository's, next to plugin/, or the wheel's
    copy (packaged in the _data folder of indexer.retrieval, where indexer.retrieval.request reads it too)."""
    places = (
        root.parent / "contract" / "request.json",
        root.parents[2] / "retrieval" / "_data" / "contract" / "request.json",
    )
    for place in places:
        if place.is_file():
            return place
    raise NodeError(
        "contract/request.json (the rule set of a question the plugin checks requests by) not found in "
        + ", ".join(map(str, places))
    )


def jar_resources(root: Path) -> list[tuple[str, Path]]:
    """What the plugin's jar carries besides its classes, as (name in the jar, file): the embedder's files and
    the contract the query builder reads (plugin/pom.xml puts it at the same name for the unit tests)."""
    return [*embedder_files(), ("org/lawindex/contract/request.json", contract(root))]


def _write_jar(jar: Path, classes: Path, version: str, resources: Sequence[tuple[str, Path]]) -> None:
    manifest = f"Manifest-Version: 1.0\nImplementation-Title: {NAME}\nImplementation-Version: {version}\n\n"
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", manifest)
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
        for name, path in resources:
            out.write(path, name, compress_type=_compression(path))


def _compression(path: Path) -> int:
    """How a file goes into the jar or the zip: deflated, but a jar (deflated already) or the embedder's table
    (float16 deflates by 7 %) stored as it is, off the first start's critical path (0.9 s of CPU)."""
    return zipfile.ZIP_STORED if path.suffix in (".jar", ".safetensors") else zipfile.ZIP_DEFLATED


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
    """The OpenSearch a plugin zip's descriptor asks for: `2.11.1` (its `opensearch.version`) or `~2.19.0` (its
    `dependencies`); None when it names none. NodeError when the file is not a plugin zip."""
    try:
        with zipfile.ZipFile(zipped) as archive:
            text = archive.read("plugin-descriptor.properties").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise NodeError(f"{zipped} is not an OpenSearch plugin zip: {error}") from None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "opensearch.version":
            return value.strip()
        if key.strip() == "dependencies":
            with contextlib.suppress(ValueError, AttributeError):
                return str(json.loads(value).get("opensearch"))
    return None


def check_fits(home: Path, zips: Sequence[Path]) -> None:
    """NodeError, before anything is installed, when a zip is built for another OpenSearch version than the
    home's (OpenSearch would refuse it too, after unpacking it)."""
    running = home_version(home)
    for zipped in zips:
        built_for = zip_version(zipped)
        if running is not None and built_for is not None and not versions.matches_range(running, built_for):
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


def node_home(version: str, cache: Path, java_home: Path, zips: Sequence[Path] | None = None) -> Path:
    """The distribution of `version` with `node_plugins` installed (or `zips`): made once per set of zips
    (cached beside the distribution, hard-linked from it), what each node's home is then made from. On a first
    start the plugin is built (its jars fetched, javac) while the distribution downloads and unpacks, not after."""
    distribution.check_supported(version)  # said as the distribution says it, before the build beside it
    fetched: dict[str, Any] = {}

    def fetch() -> None:
        try:
            fetched["home"] = distribution.home(version, cache)
        except BaseException as error:  # raised below, in the caller's thread
            fetched["error"] = error

    # A daemon: a build that fails (or ^C) is said at once, not after the download (its .part is redone next time).
    beside = threading.Thread(target=fetch, name="distribution", daemon=True)
    beside.start()
    zips = node_plugins(version, cache) if zips is None else list(zips)
    beside.join()
    if "error" in fetched:
        raise fetched["error"]
    dist: Path = fetched["home"]
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
            # Unpacked as bin/opensearch-plugin lays a zip of jars out, without its JVM (15 s of a first start on a
            # loaded 2-core machine); the version check is check_fits', and the node checks each descriptor again.
            check_fits(staging, zips)
            for zipped in zips:
                knn.install_zip(staging, zipped)
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
    """Whether every node of the cluster has the lawindex plugin (indexer.opensearch.cluster.plugins)."""
    from indexer.opensearch.cluster.plugins import every_node_has

    return every_node_has(client, NAME)
