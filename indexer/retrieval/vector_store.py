"""Vectors kept on disk by the digest of the text they were made from, so that a law whose text did not change
is not embedded again.

A reload of 50 states whose files changed in one state, or in one law, used to embed all of that state's
laws again (360 ms per 1,000 laws, before the embedder's own speed-ups); a load with `--force`, or one after a
change of lawindex that leaves the vectors alone, embedded every state. Here each state's rows are looked up
first by the SHA-256 of their text (indexer.retrieval.embedding.row_text) and only the others are embedded.

One file per embedder and state: `<folder>/<model@version digest>/<STATE>.vectors`, written whole (to a
temporary file, then renamed over the old one: a reader sees the old file or the new one, never half of one;
two loads of a state that race each write a whole file and the last rename stays). Its layout:

    lawindex-vectors 1\\n
    {"identity": "<model>@<version>", "dimension": 256, "rows": n, "sha256": "<of what follows>"}\\n
    n digests (32 bytes each: SHA-256 of a row's text, UTF-8), then n vectors (dimension float32s each,
    little-endian)

What is read is checked before it is used: the magic line, the embedder's identity and dimension, the size,
and the SHA-256 of the digests and vectors; a file that fails any of them is not used (the rows are embedded
and the file written again). And the embedder is asked again for a sample of the rows found (SAMPLE of them,
spread over the file): a kept vector that differs from what this embedder makes of its text, to the bit,
throws the file away (every row is embedded, and `last` says why).

A file keeps the rows of the state's last load and, up to as many again, rows of the loads before it that
are not in the last (a state loaded A, B, A, B reuses both); nothing else grows it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from indexer.retrieval.embedding import Embedder, Vectors, identity

MAGIC = b"lawindex-vectors 1\n"
DIGEST = 32
SAMPLE = 8  # kept rows embedded again, as a check, each time a file is used
EMBED_AT_ONCE = 4096  # rows embedded at once (their vectors: 4 MB), each slice written where it belongs


def text_digest(text: str) -> bytes:
    """SHA-256 of a row's text (a lone surrogate, which UTF-8 cannot carry, passed through as its code unit)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


@dataclass
class Reuse:
    """What the store did for one state: rows found and checked, rows embedded, and why a file was not used."""

    found: int = 0
    embedded: int = 0
    refused: str | None = None


@dataclass
class VectorStore:
    """The folder of kept vectors (see the module's docstring); `vectors` is the one entry point."""

    folder: Path
    last: dict[str, Reuse] = field(default_factory=dict)  # per state, what its last `vectors` call did

    def vectors(self, embedder: Embedder, state: str, texts: Sequence[str]) -> Vectors:
        """Every text's vector, in order, the bytes `embedder.embed(texts)` makes: the kept ones read back
        (checked), the others embedded; then the state's file written with them."""
        digests = [text_digest(text) for text in texts]
        path = self._path(embedder, state)
        kept, refused = self._read(path, embedder)
        reuse = Reuse(refused=refused)
        out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
        missing: list[int] = []
        found: list[int] = []
        if kept is not None:
            places, stored = kept
            for row, digest in enumerate(digests):
                place = places.get(digest)
                if place is None:
                    missing.append(row)
                else:
                    out[row] = stored[place]
                    found.append(row)
            sample = found[:: max(1, len(found) // SAMPLE)][:SAMPLE]
            if sample and embedder.embed([texts[row] for row in sample]).tobytes() != out[sample].tobytes():
                reuse.refused = f"{path.name}: a kept vector is not what {identity(embedder)} makes of its text"
                missing, found, kept = list(range(len(texts))), [], None
        else:
            missing = list(range(len(texts)))
        # In slices, each written into `out` as it is made: a state's vectors are not held twice.
        for start in range(0, len(missing), EMBED_AT_ONCE):
            rows = missing[start : start + EMBED_AT_ONCE]
            out[rows] = embedder.embed([texts[row] for row in rows])
        reuse.found, reuse.embedded = len(found), len(missing)
        self.last[state] = reuse
        if missing:
            with contextlib.suppress(OSError):  # a store that cannot be written only costs the next load time
                self._write(path, embedder, digests, out, kept)
        return out

    def _path(self, embedder: Embedder, state: str) -> Path:
        made_by = hashlib.sha256(identity(embedder).encode()).hexdigest()[:16]
        return self.folder / made_by / f"{state}.vectors"

    def _read(self, path: Path, embedder: Embedder) -> tuple[tuple[dict[bytes, int], Vectors] | None, str | None]:
        """The file's rows (digest to place, and the vectors), or None and why it is not used (None: no file)."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None, None
        except OSError as error:
            return None, f"{path}: {error.strerror}"
        try:
            if not raw.startswith(MAGIC):
                raise ValueError("not a lawindex vectors file")
            end = raw.index(b"\n", len(MAGIC))
            header = json.loads(raw[len(MAGIC) : end])
            body = memoryview(raw)[end + 1 :]
            rows, dimension = int(header["rows"]), int(header["dimension"])
            if header["identity"] != identity(embedder) or dimension != embedder.dimension:
                raise ValueError(f"made by {header['identity']}, {dimension} dimensions")
            if len(body) != rows * (DIGEST + 4 * dimension):
                raise ValueError("its size is not its rows'")
            if hashlib.sha256(body).hexdigest() != header["sha256"]:
                raise ValueError("its checksum does not match")
        except (ValueError, KeyError, TypeError) as error:
            return None, f"{path.name}: {error}"
        digests = bytes(body[: rows * DIGEST])
        # A view of the file's bytes, not a copy (little-endian machines; a big-endian one converts).
        little = np.frombuffer(body[rows * DIGEST :], dtype="<f4").reshape(rows, dimension)
        stored: Vectors = little.astype(np.float32, copy=False)
        places = {digests[place * DIGEST : (place + 1) * DIGEST]: place for place in range(rows)}
        return (places, stored), None

    def _write(
        self,
        path: Path,
        embedder: Embedder,
        digests: Sequence[bytes],
        vectors: Vectors,
        kept: tuple[dict[bytes, int], Vectors] | None,
    ) -> None:
        """The state's rows, then up to as many earlier rows not among them, as the state's new file. Written
        piece by piece, the checksum taken over the same pieces: no copy of the whole file is made in memory
        (a 51,781-law state's file is 54 MB; built whole it was copied five times over)."""
        rows = dict(zip(digests, range(len(digests)), strict=True))  # the last place of a repeated text
        places = list(rows.values())
        earlier: list[tuple[bytes, int]] = []
        if kept is not None:
            earlier = [(digest, place) for digest, place in kept[0].items() if digest not in rows][: len(rows)]
        body_digests = b"".join(rows) + b"".join(digest for digest, _ in earlier)
        # Every text once, in order: the state's own vectors as they are (no copy) unless a text repeats.
        mine = vectors if len(places) == len(vectors) else vectors[places]
        pieces = [memoryview(body_digests), np.ascontiguousarray(mine, dtype="<f4").data.cast("B")]
        if earlier and kept is not None:
            older = np.ascontiguousarray(kept[1][[place for _, place in earlier]], dtype="<f4")
            pieces.append(older.data.cast("B"))
        checksum = hashlib.sha256()
        for piece in pieces:
            checksum.update(piece)
        header = {
            "identity": identity(embedder),
            "dimension": embedder.dimension,
            "rows": len(places) + len(earlier),
            "sha256": checksum.hexdigest(),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n")
                for piece in pieces:
                    out.write(piece)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
