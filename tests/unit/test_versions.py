"""The supported range and what differs inside it: which versions are refused, the swap's guard on each side
of 2.12 (must_exist; before it, the alias's single write index), the plugin's descriptor on each side of 2.13
(one version; a tilde range) and the zip against Amazon OpenSearch Service's published rules for custom plugins.
No node: the versions' behaviour on real nodes is scripts/matrix's (docs/versions.md)."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from indexer.errors import BadInput, NodeError
from indexer.node import plugin
from indexer.opensearch.cluster import versions
from indexer.opensearch.cluster.schema import ALIAS_FILTER
from indexer.opensearch.write import generations


@pytest.mark.parametrize("version", ["2.11.0", "2.11.1", "2.19.6", "3.0.0", "3.9.0", "3.9.7"])
def test_versions_inside_the_range(version: str) -> None:
    assert versions.unsupported(version) is None


@pytest.mark.parametrize("version", ["2.10.0", "1.3.20", "3.10.0", "4.0.0"])
def test_versions_outside_the_range_are_refused_naming_it(version: str) -> None:
    said = versions.unsupported(version)
    assert said == f"OpenSearch {version} is outside the versions lawindex supports (2.11.0 to 3.9.x)"
    with pytest.raises(NodeError, match=re.escape("(2.11.0 to 3.9.x)")):
        plugin.check_version(version)


def test_a_malformed_version_is_bad_input() -> None:
    with pytest.raises(BadInput):
        plugin.check_version("3.6")


def test_the_swap_uses_must_exist_from_2_12() -> None:
    actions = generations.swap_actions("lawindex-tx", "new", "new-filling", ["old"], "2.12.0")
    assert actions == [
        {"remove": {"index": "old", "alias": "lawindex-tx", "must_exist": True}},
        {"add": {"index": "new", "alias": "lawindex-tx", "filter": ALIAS_FILTER}},
        {"remove": {"index": "new", "alias": "new-filling", "must_exist": True}},
    ]


def test_before_2_12_the_swap_makes_the_new_index_the_one_write_index() -> None:
    # 2.11 answers `[remove] unknown field [must_exist]` (400): the field must not be sent at all.
    actions = generations.swap_actions("lawindex-tx", "new", "new-filling", ["old"], "2.11.1")
    assert "must_exist" not in repr(actions)
    assert actions == [
        {"remove": {"index": "old", "alias": "lawindex-tx"}},
        {"add": {"index": "new", "alias": "lawindex-tx", "is_write_index": True, "filter": ALIAS_FILTER}},
        {"remove": {"index": "new", "alias": "new-filling"}},
    ]


@pytest.mark.parametrize(
    ("version", "compile_against", "requirement", "name"),
    [
        ("2.11.1", "2.11.1", "2.11.1", "lawindex-2.11.1.zip"),
        ("2.12.0", "2.12.0", "2.12.0", "lawindex-2.12.0.zip"),
        ("2.13.0", "2.13.0", "~2.13.0", "lawindex-2.13.zip"),
        ("2.19.6", "2.19.0", "~2.19.0", "lawindex-2.19.zip"),
        ("3.3.2", "3.3.0", "~3.3.0", "lawindex-3.3.zip"),
    ],
)
def test_one_zip_per_line_from_2_13(version: str, compile_against: str, requirement: str, name: str) -> None:
    aim = plugin.target(version)
    assert (aim.compile_against, aim.requirement, aim.name) == (compile_against, requirement, name)


@pytest.mark.parametrize(
    ("running", "wanted", "fits"),
    [
        ("2.19.1", "~2.19.0", True), ("2.19.6", "~2.19.0", True), ("2.20.0", "~2.19.0", False),
        ("2.18.0", "~2.19.0", False), ("2.11.1", "2.11.1", True), ("2.11.0", "2.11.1", False),
        ("2.11.1", "=2.11.1", True),
    ],
)  # fmt: skip
def test_a_descriptor_range_is_read_as_opensearch_reads_it(running: str, wanted: str, fits: bool) -> None:
    assert versions.matches_range(running, wanted) is fits


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def test_the_descriptor_names_a_range_or_one_version_never_both() -> None:
    root = plugin.sources()
    ranged = _properties(plugin.descriptor(root, plugin.target("2.19.6"), 11))
    assert ranged["dependencies"] == '{"opensearch": "~2.19.0"}'
    assert "opensearch.version" not in ranged  # OpenSearch refuses a descriptor with both (PluginInfo)
    exact = _properties(plugin.descriptor(root, plugin.target("2.11.1"), 11))
    assert exact["opensearch.version"] == "2.11.1" and "dependencies" not in exact
    assert "${" not in repr(ranged) + repr(exact)


# Amazon OpenSearch Service, "Managing custom plugins" (docs.aws.amazon.com/opensearch-service/latest/
# developerguide/custom-plugins.html) and "Importing and managing packages" (custom-packages.html), as read on
# 2026-12-02: a custom plugin extends org.opensearch.plugins.Plugin and is packed in a .zip (package type
# ZIP-PLUGIN); the extensions it may implement are AnalysisPlugin, SearchPlugin, MapperPlugin, ScriptPlugin and
# SearchPipelinePlugin; domains take them from OpenSearch 2.15; at most 20 plugins are associated with a domain
# (every kind counted). The plugin zip itself must be one OpenSearch's installer takes: the descriptor at the top.
AWS_KINDS = {"AnalysisPlugin", "SearchPlugin", "MapperPlugin", "ScriptPlugin", "SearchPipelinePlugin"}
AWS_FIRST_VERSION = "2.15.0"


def test_the_zip_meets_amazon_opensearch_services_rules_for_custom_plugins(tmp_path: Path) -> None:
    root = plugin.sources()
    aim = plugin.target(AWS_FIRST_VERSION)
    jar = tmp_path / "lawindex-2.15.jar"
    with zipfile.ZipFile(jar, "w") as out:
        out.writestr("org/lawindex/LawindexPlugin.class", b"\xca\xfe\xba\xbe")
    zipped = tmp_path / aim.name
    plugin._pack(zipped, plugin.descriptor(root, aim, 11), [(jar, jar.name)])

    assert zipped.suffix == ".zip"
    with zipfile.ZipFile(zipped) as archive:
        names = archive.namelist()
        properties = _properties(archive.read("plugin-descriptor.properties").decode())
    assert names[0] == "plugin-descriptor.properties" and all("/" not in n for n in names)  # no folder inside
    assert properties["name"] == "lawindex" and properties["has.native.controller"] == "false"
    assert properties["extended.plugins"] == ""  # it extends no other plugin the domain would need to carry
    # The descriptor's class extends Plugin and implements only extension kinds the service allows.
    source = (root / "src/main/java" / (properties["classname"].replace(".", "/") + ".java")).read_text()
    declared = re.search(r"class\s+\w+\s+extends\s+(\w+)\s+implements\s+([\w\s,]+)\{", source)
    assert declared is not None
    assert declared.group(1) == "Plugin"
    kinds = {k.strip() for k in declared.group(2).split(",")}
    assert kinds and kinds <= AWS_KINDS, kinds
    # 2.15 and later are ranged: one zip serves the domain's line through its patch releases.
    assert versions.matches_range(AWS_FIRST_VERSION, properties["dependencies"].split('"')[3])


@pytest.mark.parametrize("version", ["2.10.0", "3.10.0"])
def test_a_node_outside_the_range_is_refused_before_anything_is_downloaded(tmp_path: Path, version: str) -> None:
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-c", "from indexer.cli import main; main()", "opensearch", "start", "--version", version,
         "--port", "9459", "--cache-dir", str(cache)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 6, done
    assert f"OpenSearch {version} is outside the versions lawindex supports (2.11.0 to 3.9.x)" in done.stderr
    assert "downloading" not in done.stderr
    assert not list(cache.rglob("*.zip")) and not list(cache.rglob("*.jar"))
