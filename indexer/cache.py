"""Where lawindex keeps what it downloads and builds (the nodes' distributions and data, the reference engine's
stored statistics, vectors): one folder for every layer, chosen here, so the service and the node agree on it
without one importing the other."""

from __future__ import annotations

import os
from pathlib import Path

ROOT_CACHE = Path("/var/cache/lawindex")


def default_cache_dir() -> Path:
    """$LAWINDEX_CACHE, else $XDG_CACHE_HOME/lawindex, else /var/cache/lawindex as root, else ~/.cache/lawindex."""
    if os.environ.get("LAWINDEX_CACHE"):
        return Path(os.environ["LAWINDEX_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "lawindex"
    if os.geteuid() == 0:
        return ROOT_CACHE
    return Path.home() / ".cache" / "lawindex"
