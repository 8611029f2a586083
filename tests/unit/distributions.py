"""A distribution zip as Maven Central serves one, for the tests of its download (test_node.py,
test_distribution_digests.py): the fixture that serves it is conftest.py's `maven`."""

from __future__ import annotations

import io
import zipfile


def distribution_zip(version: str, modules: dict[str, str]) -> bytes:
    """A distribution zip's shape: opensearch-V/bin/opensearch (executable) and module descriptors (module -> the
    Java version its descriptor names)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        script = zipfile.ZipInfo(f"opensearch-{version}/bin/opensearch")
        script.external_attr = 0o755 << 16
        archive.writestr(script, "#!/bin/sh\n")
        archive.writestr(f"opensearch-{version}/config/opensearch.yml", "")
        for name, java in modules.items():
            archive.writestr(
                f"opensearch-{version}/modules/{name}/plugin-descriptor.properties", f"java.version={java}\n"
            )
    return buffer.getvalue()
