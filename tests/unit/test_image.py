"""The image's file system, as `lawindex opensearch image` streams it into `docker import` (no engine needed)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from indexer.node import image


def _rootfs(path: Path) -> Path:
    """A root file system tarball as debootstrap's leaves it: ./etc/passwd and ./etc/group among others."""
    tarball = path / "rootfs.tar"
    with tarfile.open(tarball, "w") as out:
        for name, text in (("./etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"), ("./etc/group", "root:x:0:\n"),
                           ("./bin/sh", "#!\n")):  # fmt: skip
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return tarball


def test_the_image_tree_has_the_distribution_the_jdk_the_user_and_the_entrypoint(tmp_path: Path) -> None:
    dist = tmp_path / "opensearch-2.19.9"
    (dist / "bin").mkdir(parents=True)
    (dist / "bin" / "opensearch").write_text("#!/bin/sh\n")
    (dist / "config").mkdir()
    (dist / "config" / "opensearch.yml").write_text("cluster.name: from-the-zip\n")
    (dist / "config" / "jvm.options").write_text("-Xms1g\n")
    (dist / ".lawindex-complete").write_text("1\n")
    # Debian's JDK: the home is reached through a link, and files inside link elsewhere (some nowhere).
    jdk = tmp_path / "jvm" / "java-17-openjdk-amd64"
    (jdk / "bin").mkdir(parents=True)
    (jdk / "bin" / "java").write_text("java\n")
    (tmp_path / "etc-java").mkdir()
    (tmp_path / "etc-java" / "java.security").write_text("security\n")
    (jdk / "conf").mkdir()
    (jdk / "conf" / "java.security").symlink_to(tmp_path / "etc-java" / "java.security")
    (jdk / "conf" / "dangling").symlink_to(tmp_path / "nowhere")
    (jdk / "src.zip").write_text("sources\n")
    link = tmp_path / "jvm" / "java-1.17.0-openjdk-amd64"
    link.symlink_to(jdk)

    stream = io.BytesIO()
    image.write_image_tar(stream, _rootfs(tmp_path), dist, link)
    stream.seek(0)
    with tarfile.open(fileobj=stream) as tar:
        members = {m.name.removeprefix("./"): m for m in tar.getmembers()}

        def text(name: str) -> str:
            extracted = tar.extractfile(members[name])
            assert extracted is not None
            return extracted.read().decode()

        assert (
            text("etc/passwd").splitlines()[-1] == "opensearch:x:1000:1000:OpenSearch:/usr/share/opensearch:/bin/bash"
        )
        assert text("etc/group").splitlines()[-1] == "opensearch:x:1000:"
        home = "usr/share/opensearch"
        assert members[f"{home}/bin/opensearch"].uid == 1000
        assert members[f"{home}/data"].isdir() and members[f"{home}/data"].uid == 1000
        assert "network.host: 0.0.0.0" in text(f"{home}/config/opensearch.yml")
        assert text(f"{home}/config/jvm.options") == "-Xms1g\n"
        assert f"{home}/.lawindex-complete" not in members
        assert members[f"{home}/jdk"].isdir()
        assert text(f"{home}/jdk/bin/java") == "java\n"
        assert members[f"{home}/jdk/conf/java.security"].isreg()
        assert text(f"{home}/jdk/conf/java.security") == "security\n"
        assert f"{home}/jdk/conf/dangling" not in members
        assert f"{home}/jdk/src.zip" not in members
        entrypoint = members[f"{home}/opensearch-docker-entrypoint.sh"]
        assert entrypoint.mode == 0o755
        assert text(f"{home}/opensearch-docker-entrypoint.sh") == image.ENTRYPOINT
