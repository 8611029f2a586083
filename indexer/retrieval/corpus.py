"""The `Law` model and the reader of `corpora/<STATE>.jsonl`.

Every error names the file, the line and the field, and the whole file is refused: nothing downstream
runs on a file with one bad line. The order of the lines is the corpus order: it breaks ties between
equal scores, as the spec's stable sort does.

What a file may be:

- named `<STATE>.jsonl`, STATE an upper-case USPS code (`tx.jsonl` is refused: index names are made
  from the code, and two spellings of one state must not be two files);
- a regular file (or a symlink to one), of at most MAX_FILE_BYTES: a symlink to `/dev/zero` was read until
  a MemoryError, and a FIFO hung the load, before a file that is not a regular one was refused unread;
- UTF-8, with or without a byte-order mark at the start; lines ending in LF or CRLF; blank lines skipped;
- one JSON object a line, at most MAX_LINE_BYTES (1 MiB) a line: a law is a few hundred bytes, and a
  line of megabytes is a broken export, refused by its length before it is parsed (never a hang: a
  5 MB line is refused in microseconds, and a 1 MiB one parses in milliseconds);
- no NaN or Infinity (not JSON, though Python's parser takes them), no lone surrogate escapes
  (`"\ud800"`: not a character, cannot be indexed or printed as UTF-8);
- `id`, `kind`, `law` and `concept` non-empty strings, `concept` kebab-case (`parking-fire-hydrant`),
  `question` a string that may be empty (a law without a learner's question still has its text to be
  found by), `family` and `source` strings or absent; `id` unique in the file;
- `vector` (a user's own embedder's vector of the row, docs/meaning.md "Your own vectors") on every row or on
  none: an array of 1 to 4,096 finite numbers, each at most 1e150 in magnitude, not all (nearly) zero, the same
  length on every row (contract/request.json's rules for a question's vector, indexer.retrieval.request).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import orjson
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError, field_validator

from indexer.errors import BadInput, CorpusError
from indexer.retrieval.files import BOM as _BOM
from indexer.retrieval.files import read_file

# USPS codes: the 50 states, DC, and the territories. An index name is only ever made from one of these.
_CODES = (
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND "
    "OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI UM"
)
STATES = frozenset(_CODES.split())


def state_code(text: str) -> str:
    """`text` as a USPS code (upper-cased), or BadInput: index names are made from nothing else."""
    code = text.upper() if isinstance(text, str) else ""
    if code not in STATES or text.strip() != text:
        raise BadInput(
            f"not a state code: {text!r}",
            hint="use a USPS code such as TX, MD or DC",
        )
    return code


class Law(BaseModel):
    """One row of a state's corpus file."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: StrictStr
    kind: StrictStr
    law: StrictStr
    question: StrictStr
    concept: StrictStr
    family: StrictStr | None = None
    source: StrictStr | None = None

    @field_validator("id", "kind", "law", "concept")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("id")
    @classmethod
    def _id_fits(cls, value: str) -> str:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_ID_BYTES:
            raise ValueError(
                f"the id has {size:,} bytes (UTF-8), more than the {MAX_ID_BYTES:,} an id may have (OpenSearch "
                f"holds a document id of {MAX_ID_BYTES + 4} bytes at most: 'law:' and the id)"
            )
        return value

    @field_validator("kind", "concept", "family")
    @classmethod
    def _keyword_fits(cls, value: str | None) -> str | None:
        size = 0 if value is None else len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_TERM_BYTES:
            raise ValueError(f"has {size:,} bytes, more than the {MAX_TERM_BYTES:,} Lucene indexes as one term")
        return value

    @field_validator("law", "question")
    @classmethod
    def _words_fit(cls, value: str) -> str:
        # A word of the spec is a run of [a-z0-9], each one byte: only a text longer than the limit can hold
        # one too long, so the runs of the rest (nearly every law) are never looked at.
        if len(value) > MAX_TERM_BYTES:
            longest = max((len(run) for run in _RUN.findall(value.lower())), default=0)
            if longest > MAX_TERM_BYTES:
                raise ValueError(
                    f"holds a word of {longest:,} letters and digits in a row, more than the {MAX_TERM_BYTES:,} "
                    "bytes Lucene indexes as one term"
                )
        return value

    @field_validator("concept")
    @classmethod
    def _kebab_case(cls, value: str) -> str:
        if not _KEBAB.fullmatch(value):
            raise ValueError(f"must be kebab-case (lower-case words joined by '-'), got {value!r}")
        return value


_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_RUN = re.compile(r"[a-z0-9]+")
# Lucene refuses a term over 32,766 bytes (IndexWriter.MAX_TERM_LENGTH): a word of a law's text, or a
# keyword field's value. Refused here, naming the line, before anything is written; `load` failed on
# OpenSearch with a dump of the term's byte values.
MAX_TERM_BYTES = 32766
# OpenSearch refuses a document `_id` over 512 bytes; a law's is `law:` and its id (schema.law_id).
MAX_ID_BYTES = 512 - len("law:")

# A law is a few hundred bytes; Texas's longest is under 5 KB. A line past this is a broken export.
MAX_LINE_BYTES = 1 << 20
# A state of 50,000 laws is about 25 MB; Texas's 6,000 are 3 MB. A file ten times the largest state
# there could be is not a corpus, and reading it whole (the reader holds the file and its lines at once)
# would cost gigabytes before the first line is checked.
MAX_FILE_BYTES = 256 << 20


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


# One decoder for every line: `json.loads(line, parse_constant=...)` builds a decoder (and its scanner)
# per call, a third of reading Texas's 6,000 lines. `decode` is what `loads` calls: the same errors.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_loads = orjson.loads


def _surrogate_field(row: dict[str, object]) -> str | None:
    """The first field whose string holds a lone surrogate (from a `\\ud800` escape), or None."""
    for key, value in row.items():
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return key
    return None


@dataclass(frozen=True)
class Corpus:
    """One state's laws in corpus order, and the hash of the file they came from.

    A corpus read with `kept=False` was checked whole and put down: its `laws` are empty, `rows` says how many
    it has, and `with_laws` reads them again where they are needed (a load of 50 states holds the laws of the
    states under way, not of all 50: 360,000 laws held were 550 MB)."""

    state: str
    path: Path
    laws: tuple[Law, ...]
    sha256: str | None = field(repr=False)  # None when read without it (`fingerprint=False`)
    rows: int | None = field(default=None, repr=False)  # set where the laws were put down
    # Each row's own vector (its `vector` field, as given: float64, one row a law), where the file's rows carry
    # them; None where they do not (the embedder makes them).
    vectors: npt.NDArray[np.float64] | None = field(default=None, repr=False, compare=False)

    @property
    def size(self) -> int:
        """How many laws the corpus has, held or put down."""
        return len(self.laws) if self.rows is None else self.rows

    def with_laws(self) -> Corpus:
        """This corpus with its laws: itself, or, put down, its file read again: refused (CorpusError) where the
        file is no longer the one checked."""
        if self.rows is None:
            return self
        again = read_corpus(self.path)
        if again.sha256 != self.sha256:
            raise CorpusError(
                str(self.path), 0, None, "changed after it was checked (this load left it alone); load it again"
            )
        return again


def read_corpus(path: Path, *, fingerprint: bool = True) -> Corpus:
    """The laws of one `<STATE>.jsonl` file in line order, or a CorpusError naming file, line and field.

    `sha256` is of the file's bytes as they are on disk: the loader compares it to skip unchanged files.
    The reference engine, which needs none, reads without it (`fingerprint=False`): 10 ms for Texas.
    """
    return parse_corpus(path, read_bytes(path), fingerprint=fingerprint)


def read_bytes(path: Path) -> bytes:
    """The bytes of one `<STATE>.jsonl` file, read once; a CorpusError for a name that is not a state's, a
    file that is not a regular one, too large, or changed while it was read (indexer.retrieval.files)."""
    state = path.stem.upper()
    if path.suffix != ".jsonl" or path.stem != state or state not in STATES:
        raise CorpusError(
            str(path), 0, None, "the file name is not a state code: expected <STATE>.jsonl, like TX.jsonl"
        )
    return read_file(path, MAX_FILE_BYTES)


def law_lines(raw_file: bytes) -> Iterator[tuple[int, int, bytes]]:
    """Each line of a corpus file that holds a law (not blank): its number, where it starts in `raw_file`
    (bytes), and its bytes. The file's own BOM, before line 1, is not part of the line."""
    start = len(_BOM) if raw_file.startswith(_BOM) else 0
    for number, raw in enumerate(raw_file[start:].split(b"\n"), start=1):
        if raw.strip():
            yield number, start, raw
        start += len(raw) + 1


def law_of_line(raw: bytes) -> Law:
    """The law on one line of a file that `parse_corpus` took (the stored reference engine reads only the
    lines of the laws it returns: indexer.retrieval.stored), read as parse_corpus read it."""
    try:
        row = _loads(raw)
    except orjson.JSONDecodeError:
        row = _careful_row("", 0, raw)
    return Law.model_validate(row)


def parse_corpus(path: Path, raw_file: bytes, *, fingerprint: bool = True) -> Corpus:
    """The laws in `raw_file`, the bytes of `path` (read_bytes), as read_corpus gives them."""
    name = str(path)
    laws: list[Law] = []
    seen: dict[str, int] = {}
    own = _OwnVectors(name)
    for number, _, raw in law_lines(raw_file):
        if len(raw) > MAX_LINE_BYTES:
            raise CorpusError(
                name, number, None, f"the line has {len(raw):,} bytes, more than the {MAX_LINE_BYTES:,} a law may have"
            )
        try:
            # orjson first: four times faster than the json module, and it refuses whatever the careful
            # reading below refuses (bytes that are not UTF-8, NaN and Infinity, lone surrogate escapes,
            # a BOM); it refuses a little more too (integers past 64 bits, 1e400), so a line it refuses
            # is read again the careful way, which either takes it or says exactly what is wrong.
            row = _loads(raw)
        except orjson.JSONDecodeError:
            row = _careful_row(name, number, raw)
        if not isinstance(row, dict):
            raise CorpusError(name, number, None, f"a line must be one JSON object, not {type(row).__name__}")
        try:
            law = Law.model_validate(row)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or None
            problem = first["msg"].removeprefix("Value error, ")
            raise CorpusError(name, number, where, problem[:1].lower() + problem[1:]) from None
        if law.id in seen:
            raise CorpusError(name, number, "id", f"duplicate id {law.id!r} (first on line {seen[law.id]})")
        seen[law.id] = number
        own.add(number, row)
        laws.append(law)
    if not laws:
        raise CorpusError(name, 0, None, "the file has no laws")
    state = path.stem.upper()
    vectors = own.array()
    if not fingerprint:
        return Corpus(state, path, tuple(laws), None, vectors=vectors)
    import hashlib  # here: OpenSSL's library is loaded only when a file is hashed (5 ms)

    return Corpus(state, path, tuple(laws), hashlib.sha256(raw_file).hexdigest(), vectors=vectors)


# The field a row's own vector is in (docs/meaning.md).
VECTOR = "vector"


class _OwnVectors:
    """The rows' own vectors as a file is read: each checked by the contract's rules for a vector, all of one length,
    on every row or on none (CorpusError naming the file, the line and `vector` otherwise)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._rows: list[tuple[float, ...]] = []
        self._first: tuple[int, bool] | None = None  # the first row's line, and whether it carries one

    def add(self, number: int, row: dict[str, object]) -> None:
        from indexer.retrieval.request import checked_vector

        carries = row.get(VECTOR) is not None
        if self._first is None:
            self._first = (number, carries)
        first, first_carries = self._first
        if carries != first_carries:
            has = "carries a vector" if carries else "has no vector"
            other = "has none" if carries else "carries one"
            problem = f"this row {has} and line {first}'s {other}: every row carries its vector, or none does"
            raise CorpusError(self._name, number, VECTOR, problem)
        if not carries:
            return
        try:
            vector = checked_vector(row[VECTOR])
        except BadInput as error:
            raise CorpusError(self._name, number, VECTOR, error.message.removeprefix(f"{VECTOR}: ")) from None
        if self._rows and len(vector) != len(self._rows[0]):
            problem = (
                f"{len(vector)} numbers, and line {first}'s vector has {len(self._rows[0])}: every row's vector has"
            )
            raise CorpusError(self._name, number, VECTOR, f"{problem} the same length")
        self._rows.append(vector)

    def array(self) -> npt.NDArray[np.float64] | None:
        return np.array(self._rows, dtype=np.float64) if self._rows else None


def _careful_row(name: str, number: int, raw: bytes) -> object:
    """Line `number` of file `name`, parsed by the json module, or the CorpusError that says why it cannot be."""
    if raw.startswith(_BOM):
        # The file's own BOM, before line 1, is taken off; one here is another file's, pasted on.
        raise CorpusError(
            name,
            number,
            None,
            "the line starts with a UTF-8 byte-order mark (EF BB BF): files concatenated? remove it",
        )
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorpusError(
            name, number, None, f"not UTF-8: byte {error.start + 1} of the line is 0x{raw[error.start]:02x}"
        ) from None
    try:
        row = _DECODER.decode(line)
    except json.JSONDecodeError as error:
        raise CorpusError(name, number, None, f"not JSON: {error.msg} at column {error.colno}") from None
    except ValueError as error:  # NaN, Infinity, -Infinity
        raise CorpusError(name, number, _constant_field(line), f"not JSON: {error}") from None
    # A lone surrogate can only come from a `\u` escape: the line itself was valid UTF-8.
    surrogate = _surrogate_field(row) if isinstance(row, dict) and "\\u" in line else None
    if surrogate is not None:
        raise CorpusError(
            name, number, surrogate, "holds a lone surrogate escape (like \\ud800), which is not a character"
        )
    return row


def _constant_field(line: str) -> str | None:
    """The field of `line` (a JSON object but for NaN or Infinity) that holds NaN or Infinity, or None."""
    try:
        row = json.loads(line, parse_constant=lambda name: _Constant(name))
    except ValueError:
        return None
    if not isinstance(row, dict):
        return None
    for key, value in row.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(one, _Constant) for one in values):
            return str(key)
    return None


class _Constant(str):
    """NaN, Infinity or -Infinity where a line has one (found by _constant_field)."""


def read_corpora(
    directory: Path, states: list[str] | None = None, *, fingerprint: bool = True, kept: bool = True
) -> list[Corpus]:
    """Every `<STATE>.jsonl` under `directory` (or only `states`), sorted by state; all checked first.
    `fingerprint` as for read_corpus; `kept=False`: each checked and put down (Corpus.with_laws)."""
    if not directory.is_dir():
        raise BadInput(f"{directory}: not a directory")
    wanted = {state_code(state) for state in states} if states else None
    paths = sorted(directory.glob("*.jsonl"))
    if wanted is not None:
        missing = wanted - {path.stem.upper() for path in paths}
        if missing:
            raise BadInput(f"{directory}: no corpus file for {', '.join(sorted(missing))}")
        paths = [path for path in paths if path.stem.upper() in wanted]
    if not paths:
        raise BadInput(f"{directory}: no corpus files (<STATE>.jsonl)")
    if kept:
        return [read_corpus(path, fingerprint=fingerprint) for path in paths]
    return [_put_down(read_corpus(path)) for path in paths]


def _put_down(corpus: Corpus) -> Corpus:
    return Corpus(corpus.state, corpus.path, (), corpus.sha256, rows=len(corpus.laws))  # its vectors too
