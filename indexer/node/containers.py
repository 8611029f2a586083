"""Every Docker engine call lawindex makes, through the `docker` command (DOCKER_HOST honoured): the
engine's presence, images (inspect, pull, import), and the containers of local nodes (run, logs, remove).

The docker CLI negotiates the API version with the engine: a Docker 28 CLI drives Debian's 20.10
engine (API 1.41) as is, so nothing here pins an API version.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from typing import IO

PULL_TIMEOUT_S = 900.0


def docker_available() -> bool:
    """Whether a Docker engine answers (`docker info` succeeds), not merely whether the CLI exists."""
    return engine_problem() is None


def engine_problem() -> str | None:
    """Why no Docker engine can be used (None when one answers)."""
    if shutil.which("docker") is None:
        return "the docker command is not installed"
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=15, check=False)
    except subprocess.TimeoutExpired:
        return "docker info did not answer within 15 s"
    except OSError as error:
        return f"docker info could not run: {error}"
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return lines[-1].strip() if lines else f"docker info exited {done.returncode}"
    return None


def image_present(name: str) -> bool:
    """Whether the engine holds the image `name` (repository:tag) locally."""
    done = subprocess.run(["docker", "image", "inspect", name], capture_output=True, check=False)
    return done.returncode == 0


def image_label(name: str, label: str) -> str | None:
    """A label of a local image, or None when the image or the label is absent."""
    done = subprocess.run(
        ["docker", "image", "inspect", "-f", f'{{{{index .Config.Labels "{label}"}}}}', name],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    value = done.stdout.strip()
    return value if done.returncode == 0 and value and value != "<no value>" else None


def pull(name: str, timeout: float = PULL_TIMEOUT_S) -> str | None:
    """Pull `name`; None when it came, else why not (one line)."""
    try:
        done = subprocess.run(["docker", "pull", "-q", name], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"docker pull did not finish within {timeout:.0f} s"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"docker pull exited {done.returncode}"


def running(container: str) -> bool:
    """Whether the container exists and runs."""
    done = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.Running}}", container], capture_output=True, text=True, check=False
    )
    return done.returncode == 0 and done.stdout.strip() == "true"


def remove(container: str) -> None:
    """Remove the container (stopping it first), if there is one."""
    subprocess.run(["docker", "rm", "-f", "-v", container], capture_output=True, check=False)


# Both the official image and lawindex/opensearch run OpenSearch as uid 1000 (`USER 1000`).
IMAGE_UID = 1000


def image_user(name: str) -> tuple[int, int]:
    """The uid and gid the image runs its command as (`Config.User`, numeric), else IMAGE_UID's."""
    done = subprocess.run(
        ["docker", "image", "inspect", "-f", "{{.Config.User}}", name], capture_output=True, text=True, check=False
    )
    uid, _, gid = done.stdout.strip().partition(":")
    if done.returncode != 0 or not uid.isdigit():
        return IMAGE_UID, IMAGE_UID
    return int(uid), int(gid) if gid.isdigit() else int(uid)


def chown(image: str, folder: str, uid: int, gid: int) -> str | None:
    """Give `folder` (a host path) and all in it to uid:gid through the engine, for a caller that is not
    root; None when done, else why not (one line)."""
    done = subprocess.run(
        ["docker", "run", "--rm", "--user", "0:0", "--network", "none", "--entrypoint", "chown",
         "-v", f"{folder}:/lawindex-data", image, "-R", f"{uid}:{gid}", "/lawindex-data"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"docker run exited {done.returncode}"


def run_detached(name: str, image: str, publish: str, volume: str, env: list[str]) -> str | None:
    """Start a container `name` of `image` in the background, with port `publish` (host:port:port), the
    bind mount `volume` (host:container) and `env` (KEY=VALUE); None when it runs, else the engine's words."""
    command = ["docker", "run", "-d", "--name", name, "-p", publish, "-v", volume,
               *(part for pair in env for part in ("-e", pair)), image]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else done.stderr.strip()


def logs(container: str, lines: int) -> str:
    """The last `lines` lines a container printed (its stdout, then its stderr)."""
    done = subprocess.run(["docker", "logs", "--tail", str(lines), container],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout + done.stderr


def import_image(name: str, changes: list[str], tarball: str | None = None,
                 write: Callable[[IO[bytes]], None] | None = None) -> str | None:  # fmt: skip
    """`docker import` of a root file system as the image `name`, with Dockerfile `changes`: the file
    `tarball`, or the tar stream `write` writes; None when imported, else the engine's last line."""
    command = ["docker", "import", *(part for change in changes for part in ("-c", change)), tarball or "-", name]
    with tempfile.TemporaryFile() as errors:
        importer = subprocess.Popen(
            command, stdin=subprocess.PIPE if write else subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors
        )
        try:
            if write is not None:
                assert importer.stdin is not None
                write(importer.stdin)
                importer.stdin.close()
        except BrokenPipeError:
            pass
        finally:
            code = importer.wait()
        if code == 0:
            return None
        errors.seek(0)
        said = errors.read().decode("utf-8", errors="replace").strip().splitlines()
        return said[-1] if said else f"exit {code}"
