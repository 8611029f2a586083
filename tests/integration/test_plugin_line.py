"""One lawindex plugin zip serves every patch release of its line (from 2.13, its descriptor names
`~M.m.0`): the same file, byte for byte, built once without a distribution, is taken by OpenSearch's own
installer in a 2.19.1 home and in a 2.19.6 home, and refused by lawindex's check and by OpenSearch's in a home
of another line. scripts/matrix starts nodes from such homes and asks them (docs/versions.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from indexer.errors import NodeError
from indexer.node import java, plugin
from tests.integration.plugin_support import node_home

pytestmark = pytest.mark.integration

FIRST, LAST, OTHER_LINE = "2.19.1", "2.19.6", "2.18.0"


def test_the_same_zip_installs_on_two_patch_releases_of_its_line(tmp_path: Path) -> None:
    zipped = plugin.build(LAST)
    assert zipped == plugin.build(FIRST)  # one build for the line
    assert zipped.name == "lawindex-2.19.zip" and plugin.zip_version(zipped) == "~2.19.0"
    digest = hashlib.sha256(zipped.read_bytes()).hexdigest()
    java_home = java.find_java(LAST)[0]
    for version in (FIRST, LAST):
        home = node_home(version, tmp_path)
        plugin.install(home, [zipped], java_home)  # OpenSearch's own installer checks the range
        assert (home / "plugins" / "lawindex" / "plugin-descriptor.properties").is_file()
    assert hashlib.sha256(zipped.read_bytes()).hexdigest() == digest

    other = node_home(OTHER_LINE, tmp_path)
    with pytest.raises(NodeError, match=r"built for OpenSearch ~2\.19\.0, but .* is OpenSearch 2\.18\.0"):
        plugin.install(other, [zipped], java_home)
    with pytest.raises(NodeError):
        plugin.run_installer(other, [zipped], java_home)  # OpenSearch refuses it too
    assert not (other / "plugins" / "lawindex").exists()
