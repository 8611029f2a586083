"""The OpenSearch versions lawindex runs, pinned in `pins/versions.env` and nowhere else, and the names of
the images of a version (the official one, and the one `lawindex opensearch image` builds)."""

from __future__ import annotations

import os
from pathlib import Path

from indexer.errors import NodeError

OFFICIAL_IMAGE = "opensearchproject/opensearch"
LOCAL_IMAGE = "lawindex/opensearch"


def pins_dir() -> Path:
    """The directory holding versions.env: the repo's pins/, else the wheel's copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "pins", here / "_data" / "pins"):
        if (candidate / "versions.env").is_file():
            return candidate
    raise NodeError("pins/versions.env not found next to the indexer package; is lawindex installed whole?")


def read_pins(path: Path | None = None) -> dict[str, str]:
    """The KEY=VALUE lines of versions.env (comments and blank lines skipped, quotes stripped)."""
    text = (path or pins_dir() / "versions.env").read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        pins[key.strip()] = value.strip().strip("'\"")
    return pins


def pinned_versions(path: Path | None = None) -> list[str]:
    """The pinned OpenSearch versions, the default (3.x) first."""
    pins = read_pins(path)
    try:
        return [pins["OPENSEARCH_VERSION"], pins["OPENSEARCH_LEGACY_VERSION"]]
    except KeyError as missing:
        raise NodeError(f"pins/versions.env has no {missing.args[0]}") from None


def default_version() -> str:
    """The version `start` runs when none is asked for."""
    return pinned_versions()[0]


def official_image(version: str) -> str:
    """The official image of `version` ($LAWINDEX_OFFICIAL_IMAGE names another repository, for mirrors)."""
    return f"{os.environ.get('LAWINDEX_OFFICIAL_IMAGE', OFFICIAL_IMAGE)}:{version}"


def local_image(version: str) -> str:
    """The image `lawindex opensearch image` builds for `version` ($LAWINDEX_LOCAL_IMAGE names another repository)."""
    return f"{os.environ.get('LAWINDEX_LOCAL_IMAGE', LOCAL_IMAGE)}:{version}"
