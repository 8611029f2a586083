"""`lawindex/opensearch:<version>`: an OpenSearch image built with no registry.

One `docker import` of one tarball (one layer: with the vfs storage driver every layer is a full copy):
a Debian bookworm root file system made by `debootstrap --variant=minbase` (plus curl, for
healthchecks, as the official image has it) and cached; the JDK that fits the version, copied from
this machine (`indexer.node.java.find_java`) into `/usr/share/opensearch/jdk` where `bin/opensearch` looks
for a bundled one; the same distribution zip `lawindex opensearch start` runs, with the same modules
added (`indexer.node.distribution`); a user `opensearch` of uid 1000 owning `/usr/share/opensearch`; and an
entrypoint of lawindex's own that keeps the official image's contract (see ENTRYPOINT below).

The image carries the label `lawindex.content`, a digest of everything that went in: with nothing
changed, a second build finds the image and returns at once.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from indexer.cache import default_cache_dir
from indexer.errors import NodeError
from indexer.node import containers, distribution, knn, plugin
from indexer.node.java import find_java
from indexer.node.pins import default_version, local_image

SUITE = "bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HOME = "usr/share/opensearch"
UID = 1000
CONTENT_LABEL = "lawindex.content"
# The Debian root file system alone, as an image: what the service's Dockerfile builds FROM where no
# registry answers (docker-compose.yml's LAWINDEX_BASE_IMAGE), the same base the OpenSearch image has.
BASE_IMAGE = f"lawindex/debian:{SUITE}"
# Bumped whenever what goes into the image changes in a way the digest below cannot see.
IMAGE_LAYOUT = "1"
# Not needed to run a server, and a third of a JDK's size.
JDK_SKIP = {"src.zip", "jmods", "demo", "man", "sample", "include"}

OPENSEARCH_YML = """\
# lawindex/opensearch: as the official image, listening on every interface inside the container.
cluster.name: docker-cluster
network.host: 0.0.0.0
"""

# The official image's contract (opensearch-project/opensearch-build's docker entrypoint), written anew:
# settings from `key.name=value` environment variables (at least two dotted lowercase words, or
# `processors`), DISABLE_SECURITY_PLUGIN / DISABLE_INSTALL_DEMO_CONFIG for the security plugin,
# OPENSEARCH_JAVA_OPTS (read by bin/opensearch itself), never root, any other command run as given.
ENTRYPOINT = r"""#!/bin/bash
# lawindex/opensearch's entrypoint: the official OpenSearch image's environment contract.
set -e
export OPENSEARCH_HOME=/usr/share/opensearch
export OPENSEARCH_PATH_CONF="${OPENSEARCH_PATH_CONF:-$OPENSEARCH_HOME/config}"
# OpenSearch reads its cgroup's limits from /proc/self/cgroup, whose paths Docker hides: look at the root.
export OPENSEARCH_JAVA_OPTS="-Dopensearch.cgroups.hierarchy.override=/ $OPENSEARCH_JAVA_OPTS"
cd "$OPENSEARCH_HOME"

if [ $# -eq 0 ] || [ "${1:0:1}" = "-" ]; then
  set -- opensearch "$@"
fi
if [ "$1" != "opensearch" ]; then
  exec "$@"
fi
shift

if [ "$(id -u)" = "0" ]; then
  echo "OpenSearch cannot run as root; start the container as another user (this image's is opensearch, uid 1000)" >&2
  exit 1
fi
umask 0002

security=false
[ -d plugins/opensearch-security ] && security=true
settings=()
while IFS= read -r -d '' entry; do
  key="${entry%%=*}"
  value="${entry#*=}"
  if [[ "$key" =~ ^[a-z0-9_]+\.[a-z0-9_]+ || "$key" == "processors" ]] && [ -n "$value" ]; then
    if [[ "$key" == plugins.security.* && "$security" == false ]]; then
      echo "no security plugin in this image: ignoring $key" >&2
      continue
    fi
    settings+=("-E$key=$value")
  fi
done < <(env -0)

if [ "$security" = true ]; then
  if [ "$DISABLE_SECURITY_PLUGIN" = "true" ]; then
    settings+=("-Eplugins.security.disabled=true")
  elif [ "$DISABLE_INSTALL_DEMO_CONFIG" != "true" ]; then
    bash plugins/opensearch-security/tools/install_demo_configuration.sh -y -i -s || exit 1
  fi
else
  echo "no security plugin in this image: security is off (DISABLE_SECURITY_PLUGIN has nothing to do)" >&2
fi

exec bin/opensearch "$@" "${settings[@]}"
"""


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def rootfs(cache: Path) -> tuple[Path, str]:
    """The cached Debian root file system tarball (made by debootstrap on first use) and its SHA-256."""
    folder = cache / "images"
    tarball = folder / f"{SUITE}-minbase.tar"
    digest_file = folder / f"{SUITE}-minbase.tar.sha256"
    with distribution.locked(folder / "rootfs.lock"):
        if tarball.is_file() and digest_file.is_file():
            return tarball, digest_file.read_text().strip()
        debootstrap = shutil.which("debootstrap") or (
            "/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").exists() else None
        )
        if debootstrap is None:
            raise NodeError("debootstrap is not installed; it makes the image's root file system",
                            hint="apt-get install debootstrap")  # fmt: skip
        if os.geteuid() != 0:
            raise NodeError("debootstrap must run as root to make the image's root file system",
                            hint="run lawindex opensearch image as root once (the result is cached)")  # fmt: skip
        mirror = os.environ.get("LAWINDEX_DEBIAN_MIRROR", DEFAULT_MIRROR)
        began = time.monotonic()
        _say(f"debootstrap --variant=minbase {SUITE} from {mirror} (once; cached in {folder}) ...")
        with tempfile.TemporaryDirectory(dir=folder, prefix="rootfs.") as scratch:
            target = Path(scratch) / "root"
            done = subprocess.run(
                [debootstrap, "--variant=minbase", "--include=curl,ca-certificates", SUITE, str(target), mirror],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).splitlines()[-5:])
                raise NodeError(f"debootstrap {SUITE} failed:\n{tail}")
            # Caches apt and debootstrap leave behind: not part of an image.
            for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
                for child in (target / leftover).glob("*"):
                    if child.is_file():
                        child.unlink()
            partial = tarball.with_suffix(".tar.part")
            done = subprocess.run(["tar", "--numeric-owner", "-C", str(target), "-cf", str(partial), "."],
                                  capture_output=True, text=True, check=False)  # fmt: skip
            if done.returncode != 0:
                raise NodeError(f"could not pack the root file system: {done.stderr.strip()}")
            partial.replace(tarball)
        digest = _sha256_file(tarball)
        digest_file.write_text(digest + "\n")
        _say(f"root file system ready in {time.monotonic() - began:.0f} s ({tarball.stat().st_size >> 20} MB)")
        return tarball, digest


def content_digest(rootfs_digest: str, dist: Path, zip_file: Path, java_home: Path, version: str) -> str:
    """A digest of everything the image is made of: same digest, same image."""
    digest = hashlib.sha256()
    release = java_home / "release"
    java_id = release.read_text(encoding="utf-8", errors="replace") if release.is_file() else ""
    zip_stat = zip_file.stat()
    for part in (
        IMAGE_LAYOUT, version, rootfs_digest, f"{zip_stat.st_size}:{int(zip_stat.st_mtime)}",
        distribution.LAYOUT, ",".join(distribution.modules_added(dist)), ",".join(knn.plugins_of(dist)), str(java_home),
        java_id,
        ENTRYPOINT, OPENSEARCH_YML, str(UID), dist.name,
    ):  # fmt: skip
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = UID
    info.uname = info.gname = "opensearch"
    return info


def _walk(source: Path, skip: set[str] | None = None) -> Iterator[tuple[Path, str]]:
    """Every path under `source` (directories first), as (path, relative name); `skip` names top-level entries."""
    for root, dirs, files in os.walk(source, followlinks=False):
        rel_root = os.path.relpath(root, source)
        if rel_root == "." and skip:
            dirs[:] = [d for d in dirs if d not in skip]
            files = [f for f in files if f not in skip]
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            path = Path(root) / name
            yield path, os.path.normpath(os.path.join(rel_root, name))


def _add_tree(out: tarfile.TarFile, source: Path, arcname: str, *, owner: bool, skip: set[str] | None = None,
              dereference: bool = False) -> None:  # fmt: skip
    """`source` into the tarball under `arcname`. With `dereference`, a symlink becomes what it points to
    (Debian's JDK links its config into /etc), and a dangling one is left out."""
    if dereference:
        # /usr/lib/jvm/java-1.17.0-openjdk-amd64 is itself a link to java-17-openjdk-amd64.
        source = source.resolve()
    top = out.gettarinfo(str(source), arcname)
    out.addfile(_owned(top) if owner else top)
    for path, rel in _walk(source, skip):
        name = f"{arcname}/{rel}"
        real = path
        if path.is_symlink() and dereference:
            if not path.exists():
                continue
            real = path.resolve()
        if real.is_dir() and path.is_symlink() and dereference:
            _add_tree(out, real, name, owner=owner, dereference=True)
            continue
        info = out.gettarinfo(str(real), name)
        if owner:
            _owned(info)
        if info.isreg():
            with real.open("rb") as handle:
                out.addfile(info, handle)
        else:
            out.addfile(info)


def _add_text(out: tarfile.TarFile, name: str, text: str, mode: int = 0o644, *, owner: bool = True) -> None:
    data = text.encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = int(time.time())
    if owner:
        _owned(info)
    out.addfile(info, io.BytesIO(data))


def _add_dir(out: tarfile.TarFile, name: str) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o775
    info.mtime = int(time.time())
    out.addfile(_owned(info))


def write_image_tar(stream: IO[bytes], base: Path, dist: Path, java_home: Path) -> None:
    """The image's whole file system as one tarball on `stream`."""
    with tarfile.open(base) as rootfs_tar, tarfile.open(fileobj=stream, mode="w|") as out:
        for member in rootfs_tar:
            name = member.name.removeprefix("./")
            if member.isreg() and name in ("etc/passwd", "etc/group"):
                extracted = rootfs_tar.extractfile(member)
                assert extracted is not None
                text = extracted.read().decode("utf-8")
                line = (f"opensearch:x:{UID}:{UID}:OpenSearch:/{HOME}:/bin/bash\n" if name == "etc/passwd"
                        else f"opensearch:x:{UID}:\n")  # fmt: skip
                data = (text if text.endswith("\n") else text + "\n") + line
                member.size = len(data.encode("utf-8"))
                out.addfile(member, io.BytesIO(data.encode("utf-8")))
            elif member.isreg():
                out.addfile(member, rootfs_tar.extractfile(member))
            else:
                out.addfile(member)
        _add_tree(out, dist, HOME, owner=True, skip={"config", "jdk", "data", ".lawindex-complete"})
        _add_tree(out, dist / "config", f"{HOME}/config", owner=True, skip={"opensearch.yml"})
        _add_text(out, f"{HOME}/config/opensearch.yml", OPENSEARCH_YML)
        _add_dir(out, f"{HOME}/data")
        _add_tree(out, java_home, f"{HOME}/jdk", owner=False, skip=JDK_SKIP, dereference=True)
        _add_text(out, f"{HOME}/opensearch-docker-entrypoint.sh", ENTRYPOINT, 0o755)


def build(version: str | None = None, cache_dir: Path | str | None = None) -> str:
    """Build `lawindex/opensearch:<version>` (or find it built from the same parts); its name."""
    version = version or default_version()
    problem = containers.engine_problem()
    if problem is not None:
        raise NodeError(f"no Docker engine answers: {problem}", hint="start dockerd (or set DOCKER_HOST), then retry")
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    began = time.monotonic()
    java_home, major = find_java(version)
    # The distribution with the plugins every node lawindex starts gets (indexer.node.plugin.node_plugins), and
    # k-NN where it can run (what --by meaning needs).
    dist = knn.home_with_knn(plugin.node_home(version, cache, java_home), version, cache)
    base, base_digest = rootfs(cache)
    name = local_image(version)
    digest = content_digest(base_digest, dist, cache / "dist" / f"opensearch-{version}.zip", java_home, version)
    if containers.image_label(name, CONTENT_LABEL) == digest:
        _say(f"{name} is up to date (content {digest}); checked in {time.monotonic() - began:.1f} s")
        return name
    _say(f"building {name}: Debian {SUITE}, Java {major} from {java_home}, OpenSearch {version} ...")
    changes = [
        f"USER {UID}:{UID}",
        f"WORKDIR /{HOME}",
        f"ENV OPENSEARCH_JAVA_HOME=/{HOME}/jdk",
        f"ENV PATH=/{HOME}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        "EXPOSE 9200 9300",
        f'ENTRYPOINT ["/{HOME}/opensearch-docker-entrypoint.sh"]',
        'CMD ["opensearch"]',
        f"LABEL {CONTENT_LABEL}={digest} org.opensearch.version={version}",
    ]
    said = containers.import_image(name, changes, write=lambda out: write_image_tar(out, base, dist, java_home))
    if said is not None:
        raise NodeError(f"docker import of {name} failed: {said}")
    _say(f"built {name} (content {digest}) in {time.monotonic() - began:.0f} s")
    return name


def base(cache_dir: Path | str | None = None) -> str:
    """`lawindex/debian:bookworm`, the cached root file system imported as it is (or found imported); its name.

    The Dockerfile of `lawindex serve` builds FROM `debian:bookworm-slim` where a registry answers; here
    none does, and this is the same Debian (minbase, with curl) the OpenSearch image is made of."""
    problem = containers.engine_problem()
    if problem is not None:
        raise NodeError(f"no Docker engine answers: {problem}", hint="start dockerd (or set DOCKER_HOST), then retry")
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    began = time.monotonic()
    tarball, digest = rootfs(cache)
    digest = digest[:16]
    if containers.image_label(BASE_IMAGE, CONTENT_LABEL) == digest:
        _say(f"{BASE_IMAGE} is up to date (content {digest}); checked in {time.monotonic() - began:.1f} s")
        return BASE_IMAGE
    changes = ["ENV LANG=C.UTF-8", 'CMD ["bash"]', f"LABEL {CONTENT_LABEL}={digest}"]
    said = containers.import_image(BASE_IMAGE, changes, tarball=str(tarball))
    if said is not None:
        raise NodeError(f"docker import of {BASE_IMAGE} failed: {said}")
    _say(f"imported {BASE_IMAGE} (content {digest}) in {time.monotonic() - began:.1f} s")
    return BASE_IMAGE
