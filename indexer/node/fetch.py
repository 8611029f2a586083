"""`python3 -m indexer.node.fetch [VERSION]`: what a first `lawindex opensearch start` waits for, made ahead.

For VERSION (the pinned 3.x by default), side by side: the distribution (downloaded, checked, unpacked)
and the lawindex plugin's compile jars, then its classes (javac). Standard library only, run from the source
tree (PYTHONPATH=.), so that scripts/demo runs it in the background while pip installs lawindex (issue 48.5);
the start then finds both in the cache, or waits for them, saying so. Exit 1 with the one line on a failure:
the start that follows does the same work and says the same."""

from __future__ import annotations

import sys
import threading

from indexer.errors import LawindexError
from indexer.node import distribution, plugin
from indexer.node.host import writable_cache
from indexer.node.pins import default_version


def main(argv: list[str]) -> int:
    version = argv[0] if argv else default_version()
    cache = writable_cache(None)
    failures: list[str] = []

    def distribution_home() -> None:
        try:
            distribution.home(version, cache)
        except LawindexError as error:
            failures.append(error.message)

    beside = threading.Thread(target=distribution_home, name="distribution")
    beside.start()
    try:
        plugin.compiled(version, cache)
    except LawindexError as error:
        failures.append(error.message)
    beside.join()
    for failure in failures:
        print(f"lawindex fetch: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
