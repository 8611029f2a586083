"""A file a user hands lawindex, read within bounds: the one reader of corpora, `ask --from`, eval's judged
questions, qrels and earlier runs, and `verify --from`.

What any of them may be:

- a regular file (or a symlink to one). A FIFO, a device, a directory or a socket is refused before a byte
  is read: the file is opened without blocking (a FIFO nobody writes to hung `lawindex eval` at `open`) and
  refused by what `fstat` says it is, so a file swapped for a FIFO between a look and the open is caught too;
- at most the reader's bound in bytes, refused by its size before it is read, and read no further than its
  size and one byte: `lawindex eval /dev/zero` grew to 22 GB and was killed by the kernel after 53 s;
- for text, UTF-8 (a byte-order mark at the start is taken off, as an editor on Windows writes one), lines
  ending in LF or CRLF, each at most the reader's bound on a line, refused naming the file and the line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from indexer.errors import CorpusError

BOM = b"\xef\xbb\xbf"


def read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, read once; a CorpusError (file, line 0) for anything else: not a
    regular file, more than `max_bytes`, or changed while it was read."""
    name = str(path)
    with _opened(path, max_bytes) as (descriptor, before):
        chunks: list[bytes] = []
        left = before.st_size + 1  # a file growing under the reader is caught by its size, not read without end
        try:
            while left > 0:
                chunk = os.read(descriptor, left)
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            after = os.fstat(descriptor)
        except OSError as error:
            raise CorpusError(name, 0, None, f"cannot be read: {error.strerror or error}") from None
    raw = b"".join(chunks)
    # A file rewritten in place while it was read can stop at a line end and read as a shorter, valid file.
    if (before.st_size, before.st_mtime_ns) != (after.st_size, after.st_mtime_ns) or len(raw) != after.st_size:
        raise CorpusError(name, 0, None, "changed while it was read; write the new file beside it and rename it over")
    return raw


def text_lines(path: Path, max_bytes: int, max_line: int) -> list[tuple[int, str]]:
    """The lines of the UTF-8 text file at `path`, numbered from 1, without their line ends (blank ones kept);
    a CorpusError naming the file, and the line where there is one, for what read_file refuses, a line of more
    than `max_line` bytes, or bytes that are not UTF-8."""
    raw = read_file(path, max_bytes)
    raw = raw.removeprefix(BOM)
    lines = []
    # Split on LF alone: str.splitlines also splits on U+2028, U+0085 and others, which JSON holds in strings.
    for number, line in enumerate(raw.split(b"\n"), 1):
        if len(line) > max_line:
            raise CorpusError(
                str(path), number, None, f"the line has {len(line):,} bytes, more than the {max_line:,} accepted"
            )
        try:
            lines.append((number, line.removesuffix(b"\r").decode("utf-8")))
        except UnicodeDecodeError as error:
            raise CorpusError(
                str(path), number, None, f"not UTF-8: byte {error.start + 1} of the line is 0x{line[error.start]:02x}"
            ) from None
    if lines and lines[-1] == (len(lines), ""):
        lines.pop()  # the end of the last line, not a line
    return lines


@contextmanager
def binary_stream(path: Path, max_bytes: int) -> Iterator[BinaryIO]:
    """The regular file at `path` open for reading in binary, for a reader that takes it a line at a time; what
    read_file refuses before reading is refused here too."""
    with _opened(path, max_bytes) as (descriptor, _):
        os.set_blocking(descriptor, True)
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            yield handle


@contextmanager
def _opened(path: Path, max_bytes: int) -> Iterator[tuple[int, os.stat_result]]:
    """A descriptor of the regular file at `path` and its status, or a CorpusError before a byte is read."""
    name = str(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise CorpusError(name, 0, None, f"cannot be read: {error.strerror or error}") from None
    try:
        try:
            status = os.fstat(descriptor)
        except OSError as error:
            raise CorpusError(name, 0, None, f"cannot be read: {error.strerror or error}") from None
        kind = not_regular(status.st_mode)
        if kind is not None:
            raise CorpusError(name, 0, None, f"cannot be read: not a regular file ({kind})")
        if status.st_size > max_bytes:
            raise CorpusError(
                name, 0, None, f"the file has {status.st_size:,} bytes, more than the {max_bytes:,} accepted"
            )
        yield descriptor, status
    finally:
        os.close(descriptor)


def not_regular(mode: int) -> str | None:
    """What a file that is not a regular one is (`a FIFO`), or None for a regular file."""
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a file"
