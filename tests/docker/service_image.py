"""The `lawindex` service's image for docker-compose.yml, built once: by .ci/run in the background while the
unit and integration tests run (`python3 -m tests.docker.service_image NAME`, then LAWINDEX_SERVICE_IMAGE
names it), or by test_compose's fixture when nothing built it ahead.

Under the vfs storage driver its `docker build` took 167-193 s of the compose fixture's 265 s (CI, a loaded
2-core machine): built ahead, it is off the tests' path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexer.node import image

REPO = Path(__file__).resolve().parents[2]
# What the Dockerfile copies (.dockerignore lets nothing else in).
CONTEXT = (
    "Dockerfile", ".dockerignore", "pyproject.toml", "README.md",
    "indexer", "mappings", "pins", "plugin", "contract", "models",
)  # fmt: skip


def build(name: str) -> str:
    """`name` built by the Dockerfile FROM lawindex's Debian base (no registry here), with a wheelhouse made by
    this machine's pip in its context (this machine's containers may not reach PyPI themselves). Raises
    RuntimeError with pip's or docker's output when a step fails."""
    with tempfile.TemporaryDirectory(prefix="lawindex-service-image.") as scratch:
        context = Path(scratch)
        for part in CONTEXT:
            source = REPO / part
            if source.is_dir():
                shutil.copytree(source, context / part, ignore=shutil.ignore_patterns("__pycache__", "target"))
            else:
                shutil.copy2(source, context / part)
        began = time.monotonic()
        base = image.base()
        based = time.monotonic()
        wheels = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(context / "wheels"), str(context)],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        if wheels.returncode != 0:
            raise RuntimeError(f"pip wheel failed: {wheels.stderr}")
        wheeled = time.monotonic()
        built = subprocess.run(
            ["docker", "build", "-q", "--build-arg", f"BASE_IMAGE={base}", "-t", name, str(context)],
            capture_output=True, text=True, check=False, timeout=900,
        )  # fmt: skip
        if built.returncode != 0:
            raise RuntimeError(f"docker build failed: {built.stdout}{built.stderr}")
    print(
        f"timing: the lawindex service's image {name}: base {based - began:.0f} s, wheels {wheeled - based:.0f} s, "
        f"docker build {time.monotonic() - wheeled:.0f} s",
        flush=True,
    )
    return name


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m tests.docker.service_image NAME")
    try:
        build(sys.argv[1])
    except RuntimeError as error:
        sys.exit(str(error))
