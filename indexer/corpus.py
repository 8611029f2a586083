"""The `Law` model and the reader of `corpora/<STATE>.jsonl`.

Every error names the file, the line and the field. The order of the lines is the corpus order: it
breaks ties between equal scores, as the spec's stable sort does.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError, field_validator

from indexer.errors import BadInput, CorpusError

# USPS codes: the 50 states, DC, and the territories. An index name is only ever made from one of these.
STATES = frozenset(
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND "
    "OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI UM".split()
)


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


@dataclass(frozen=True)
class Corpus:
    """One state's laws in corpus order, and the hash of the file they came from."""

    state: str
    path: Path
    laws: tuple[Law, ...]
    sha256: str = field(repr=False)


def read_corpus(path: Path) -> Corpus:
    """The laws of one `<STATE>.jsonl` file, or a CorpusError naming file, line and field."""
    name = str(path)
    state = path.stem.upper()
    if path.suffix != ".jsonl" or path.stem != state or state not in STATES:
        raise CorpusError(name, 0, None, "the file name is not a state code: expected <STATE>.jsonl, like TX.jsonl")
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    laws: list[Law] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise CorpusError(name, number, None, f"not UTF-8 (byte {error.start + 1})") from None
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise CorpusError(name, number, None, f"not JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(row, dict):
            raise CorpusError(name, number, None, "a line must be one JSON object")
        try:
            law = Law.model_validate(row)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or None
            raise CorpusError(name, number, where, first["msg"].lower()) from None
        if law.id in seen:
            raise CorpusError(name, number, "id", f"duplicate id {law.id!r} (first on line {seen[law.id]})")
        seen[law.id] = number
        laws.append(law)
    if not laws:
        raise CorpusError(name, 0, None, "the file has no laws")
    return Corpus(state, path, tuple(laws), hashlib.sha256(data).hexdigest())


def read_corpora(directory: Path, states: list[str] | None = None) -> list[Corpus]:
    """Every `<STATE>.jsonl` under `directory` (or only `states`), sorted by state; all checked first."""
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
    return [read_corpus(path) for path in paths]
