"""Which Java runs which OpenSearch: the Java majors a version runs on, the JDKs found, the one chosen.

Apart from indexer.node.node so that indexer.node.plugin (which compiles with a fitting javac) and the node
code that runs OpenSearch (launch, cluster, image) both use it without importing each other. Where lawindex
keeps what it downloads and builds is indexer/cache.py's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from indexer.errors import NodeError

JVM_DIR = Path("/usr/lib/jvm")


def java_range(version: str) -> tuple[int, int | None]:
    """The Java majors an OpenSearch version runs on: (lowest, highest or None for no bound)."""
    major = int(version.split(".")[0])
    if major >= 3:
        return 21, None
    # 2.19 supports Java 11 to 23 (it ships JDK 23); its bin/opensearch turns the security manager on,
    # which Java 24 removed, so 2.19 does not start on Temurin 25.
    return 11, 23


def java_major(java_home: Path) -> int | None:
    """The major version of a JDK, read from its `release` file, else from `java -version`."""
    release = java_home / "release"
    text = ""
    if release.is_file():
        text = release.read_text(encoding="utf-8", errors="replace")
    else:
        java = java_home / "bin" / "java"
        if not java.is_file():
            return None
        try:
            done = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = done.stderr
    found = re.search(r'version\s*[=\s]\s*"(\d+)(?:\.(\d+))?', text, re.IGNORECASE)
    if not found:
        found = re.search(r'JAVA_VERSION="(\d+)(?:\.(\d+))?', text)
    if not found:
        return None
    first = int(found.group(1))
    # Java 8 and older call themselves 1.x.
    return int(found.group(2) or 0) if first == 1 else first


def java_candidates() -> list[Path]:
    """JDK homes in the order they are tried: JAVA_HOME, then every JDK under /usr/lib/jvm, then PATH."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    if JVM_DIR.is_dir():
        homes.extend(sorted(p for p in JVM_DIR.iterdir() if (p / "bin" / "java").is_file()))
    on_path = shutil.which("java")
    if on_path:
        homes.append(Path(on_path).resolve().parent.parent)
    unique: list[Path] = []
    for home in homes:
        if home.resolve() not in {u.resolve() for u in unique}:
            unique.append(home)
    return unique


def find_java(version: str, candidates: list[Path] | None = None) -> tuple[Path, int]:
    """The JDK home (and its major) to run `version` with: JAVA_HOME when it fits, else the newest that fits."""
    low, high = java_range(version)
    seen: list[str] = []
    fitting: list[tuple[int, Path]] = []
    for index, home in enumerate(java_candidates() if candidates is None else candidates):
        major = java_major(home)
        if major is None:
            seen.append(f"{home} (no Java)")
            continue
        seen.append(f"Java {major} at {home}")
        if major >= low and (high is None or major <= high):
            if index == 0 and candidates is None and os.environ.get("JAVA_HOME"):
                return home, major
            fitting.append((major, home))
    if fitting:
        major, home = max(fitting, key=lambda f: f[0])
        return home, major
    need = f"Java {low} or newer" if high is None else f"Java {low} to {high}"
    raise NodeError(
        f"OpenSearch {version} needs {need}; found: {', '.join(seen) or 'no Java'}",
        hint=f"install a JDK {low}+ under /usr/lib/jvm or point JAVA_HOME at one",
    )
