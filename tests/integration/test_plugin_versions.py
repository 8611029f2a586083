"""A lawindex plugin zip only ever goes into the OpenSearch it was built for: a zip built for 2.19.6 offered to
a 3.6.0 home is refused with one clear line and leaves no plugin folder behind (by lawindex's check, and by
OpenSearch's own installer when that check is bypassed); a version the plugin has no build for is refused by
`lawindex plugin build` with its exit code, before anything is downloaded, and writes no zip.

Real distributions (the cache's 3.6.0 and 2.19.6), the real `javac` build and the distribution's own
`bin/opensearch-plugin`; no node is started.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.errors import BadInput, NodeError
from indexer.node import java, plugin
from tests.integration.plugin_support import node_home
from tests.integration.support import lawindex

pytestmark = pytest.mark.integration

NEW, OLD = "3.6.0", "2.19.6"


def _left_in(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "plugins").iterdir())


def test_a_zip_for_another_version_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    old_zip = plugin.build(OLD, out=tmp_path / "zips")
    assert plugin.zip_version(old_zip) == "~2.19.0"  # one zip for the 2.19 line
    home = node_home(NEW, tmp_path)
    assert plugin.home_version(home) == NEW
    java_home = java.find_java(NEW)[0]

    with pytest.raises(NodeError) as refused:
        plugin.install(home, [old_zip], java_home)
    said = str(refused.value)
    assert "built for OpenSearch ~2.19.0" in said and f"is OpenSearch {NEW}" in said, said
    assert "\n" not in said
    assert refused.value.hint == f"build the plugin for that node: lawindex plugin build --version {NEW}"
    assert refused.value.exit_code == 6
    assert _left_in(home) == []

    # Past lawindex's own check, OpenSearch's installer refuses it too, after unpacking: its leftovers go.
    with pytest.raises(NodeError) as by_opensearch:
        plugin.run_installer(home, [old_zip], java_home)
    # (OpenSearch's own words end in its stack trace; the zip and the home are named before it.)
    assert "lawindex-2.19.zip" in str(by_opensearch.value) and NEW in str(by_opensearch.value), by_opensearch.value
    assert _left_in(home) == []

    # The same home takes the zip built for it: the refusals left it whole.
    plugin.install(home, [plugin.build(NEW)], java_home)
    assert _left_in(home) == ["lawindex"]
    assert (home / "plugins" / "lawindex" / "plugin-descriptor.properties").is_file()


def test_a_version_with_no_build_is_refused_before_any_download(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, stderr = lawindex("plugin", "build", "--version", "1.3.20", "-o", str(out))
    assert code == 6, (code, stdout, stderr)
    assert "no build for OpenSearch 1.3.20" in stderr, stderr
    assert "downloading" not in stderr, stderr
    assert stdout == ""
    assert not out.exists() or not any(out.iterdir())

    code, stdout, stderr = lawindex("plugin", "build", "--version", "3.6", "-o", str(out))
    assert code == 2, (code, stdout, stderr)
    assert "not an OpenSearch version: '3.6'" in stderr, stderr
    assert stdout == ""

    with pytest.raises(NodeError, match=r"no build for OpenSearch 4\.0\.0: outside .* \(2\.11\.0 to 3\.9\.x\)"):
        plugin.check_version("4.0.0")
    with pytest.raises(BadInput):
        plugin.check_version("3.6.0-SNAPSHOT")
    plugin.check_version(NEW)
    plugin.check_version(OLD)
