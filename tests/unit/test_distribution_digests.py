"""Downloads are checked with whichever digest Maven Central publishes (sha512, sha256, sha1, md5): a zip with
only some of them starts; a zip with none is refused before it is downloaded, with a message that says the zip
is there and its digests are not, and how to go on ($LAWINDEX_ZIP_DIGEST); an absent zip says it is absent.
Digests here are computed by hashlib from the bytes published, never by the code under test."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from indexer.errors import NodeError
from indexer.node import distribution
from tests.unit.distributions import distribution_zip

VERSION = "3.8.9"


def _zip() -> bytes:
    return distribution_zip(VERSION, {"analysis-common": "21"})


def _publish(repo: Path, data: bytes, digests: dict[str, str]) -> Path:
    target = repo / distribution.ZIP_PATH.format(v=VERSION)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    for algorithm, value in digests.items():
        target.with_name(f"{target.name}.{algorithm}").write_text(value + "\n")
    return target


@pytest.mark.parametrize("algorithm", ["sha512", "sha256", "md5"])
def test_a_zip_without_its_sha1_is_checked_with_the_digest_that_exists(
    maven: Path, tmp_path: Path, algorithm: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _zip()
    _publish(maven, data, {algorithm: hashlib.new(algorithm, data).hexdigest()})
    home = distribution.home(VERSION, tmp_path / "cache")
    assert (home / "bin" / "opensearch").is_file()
    said = capsys.readouterr().err
    assert f"with its .{algorithm}" in said and ".sha1" in said, said


def test_a_wrong_digest_refuses_the_download(maven: Path, tmp_path: Path) -> None:
    _publish(maven, _zip(), {"sha1": "0" * 40, "sha512": "0" * 128})
    with pytest.raises(NodeError, match=r"sha512 [0-9a-f]{128} is not the published 0{128}"):
        distribution.home(VERSION, tmp_path / "cache")
    assert not (tmp_path / "cache" / "dist" / f"opensearch-{VERSION}.zip").exists()


def test_a_zip_with_no_digest_is_refused_before_it_is_downloaded(maven: Path, tmp_path: Path) -> None:
    _publish(maven, _zip(), {})
    with pytest.raises(distribution.NoDigest) as refused:
        distribution.home(VERSION, tmp_path / "cache")
    said = str(refused.value)
    assert f"OpenSearch {VERSION}'s distribution zip is on" in said, said
    assert ".sha512, .sha256, .sha1 and .md5 are all absent" in said, said
    assert distribution.USER_DIGEST in (refused.value.hint or "")
    assert refused.value.exit_code == 6
    assert not (tmp_path / "cache" / "dist" / f"opensearch-{VERSION}.zip").exists()


def test_a_digest_the_user_gives_checks_a_zip_that_has_none(
    maven: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _zip()
    _publish(maven, data, {})
    monkeypatch.setenv(distribution.USER_DIGEST, "sha256:" + "1" * 64)
    with pytest.raises(NodeError, match=r"is not \$LAWINDEX_ZIP_DIGEST's 1{64}"):
        distribution.home(VERSION, tmp_path / "cache")
    monkeypatch.setenv(distribution.USER_DIGEST, "sha256:" + hashlib.sha256(data).hexdigest())
    assert (distribution.home(VERSION, tmp_path / "cache") / "bin" / "opensearch").is_file()


def test_a_malformed_user_digest_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(distribution.USER_DIGEST, "sha3:abc")
    with pytest.raises(NodeError, match="is not a digest"):
        distribution.user_digest()


def test_an_absent_zip_says_so_and_names_the_versions_that_work(maven: Path, tmp_path: Path) -> None:
    with pytest.raises(distribution.NotPublished) as refused:
        distribution.home("3.9.0", tmp_path / "cache")
    assert "OpenSearch 3.9.0 has no distribution zip on" in str(refused.value)
    hint = refused.value.hint or ""
    working = distribution.working_versions()
    assert "2.19.6" in working and "3.6.0" in working
    assert all(v in hint for v in working), hint
    assert "lawindex plugin build --version 3.9.0" in hint
