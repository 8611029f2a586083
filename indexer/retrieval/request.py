"""A question as one value: its state, its text, its way, its limit and its fusion, checked once where it
enters (the CLI, serve's routes and batch body, eval) and handed whole to an engine: `engine.ask(request)`.

The rules are contract/request.json's, read at run time (a wheel packages it under _data, beside this), never
copied into code: which ways there are, which parameters each way takes, their ranges and defaults, and the
message each refusal gives. The plugin's query builder (Java) and the TypeScript client read the same file, so a
question refused on one path is refused on every path with the same words. A parameter a way does not take is
refused (`by=meaning&rrf_k=5`), never ignored: `Request.of` is told which parameters were given, not only their
values.

Numbers in a message are written as JavaScript's `String(number)` writes them (`1000000`, `0.000001`, `1e+40`),
so the TypeScript client's messages are the same characters without a formatter of its own.

Nothing to embed. A question whose lowercased text has no ASCII letter or digit (no match of the spec's
`[a-z0-9]`, the alphabet its words() reads) is near no row: by meaning and hybrid it reaches nothing
(`Request.embeddable`), as a question of stopwords reaches nothing by words. The plugin and the TypeScript client
apply the same rule (docs/meaning.md). Not Unicode's letters: which code points are letters changes with the
Unicode version, and Python, each JVM and each JavaScript engine carry their own; `[a-z0-9]` after lowercasing is
the same set everywhere (the lowercasings that give ASCII are held equal by tests/unit/test_words.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from indexer.errors import BadInput

# In a checkout the file is at the top of the repository; in a wheel it is packaged under _data, beside this.
_PLACES = (
    Path(__file__).resolve().parents[2] / "contract" / "request.json",
    Path(__file__).resolve().parent / "_data" / "contract" / "request.json",
)


@cache
def contract() -> dict[str, Any]:
    """contract/request.json, as read."""
    for place in _PLACES:
        if place.is_file():
            found: dict[str, Any] = json.loads(place.read_bytes())
            return found
    raise FileNotFoundError(f"contract/request.json is missing (looked in {', '.join(map(str, _PLACES))})")


def parameter(name: str) -> dict[str, Any]:
    """One parameter's rule: its type, range, default and the ways that take it."""
    rule: dict[str, Any] = contract()["parameters"][name]
    return rule


class Way(StrEnum):
    """The ways a question reaches rows (`--by`, `by=`), the contract's `ways` (a test holds them equal)."""

    words = "words"
    meaning = "meaning"
    hybrid = "hybrid"


DEFAULT_WAY = Way(contract()["default_way"])
MAX_QUESTION_CHARS: int = parameter("question")["max_chars"]
# How many laws a question is answered from (the spec's RETRIEVED_LAWS), and the most a question may ask for.
RETRIEVED_LAWS: int = parameter("limit")["default"]
MAX_LIMIT: int = parameter("limit")["max"]
# The weighted reciprocal-rank fusion of `--by hybrid` (indexer.retrieval.meaning; docs/fusion.md): a row's score
# is WORDS_WEIGHT/(RRF_K + words rank) + MEANING_WEIGHT/(RRF_K + meaning rank). Chosen on the tuning half of
# eval/handbook.jsonl only (eval/README.md, "Choosing the fusion"): a grid of k in {1, 2, 5, 10, 20, 30, 40, 60,
# 100} and meaning weights 0.5 to 8 (words 1), the best recall@8 (0.936; meaning alone 0.919, k = 60 with 1/1
# 0.783), ties broken by nDCG@8 (0.811); a finer grid shows a plateau of 0.936 over k 3..12 and weights 3..5,
# this in its middle. On the held-out half: recall@8 0.878 (meaning 0.867, words 0.767, p = 0.03 against words).
RRF_K: int = parameter("rrf_k")["default"]
RRF_K_MAX: int = parameter("rrf_k")["max"]
WORDS_WEIGHT: float = parameter("words_weight")["default"]
MEANING_WEIGHT: float = parameter("meaning_weight")["default"]
# A weight is 0 or within these (issue 44: a weight of 1e40 overflowed the fused score to Infinity).
WEIGHT_MIN: float = parameter("words_weight")["min"]
WEIGHT_MAX: float = parameter("words_weight")["max"]
# A question's (or a row's) own vector: its length, and the magnitudes that keep its norm the table's rule unchanged
# (no square overflows past VECTOR_MAX_ABS; the largest's square is a normal number from VECTOR_MIN_LARGEST).
VECTOR_MIN_LENGTH: int = parameter("vector")["min_length"]
VECTOR_MAX_LENGTH: int = parameter("vector")["max_length"]
VECTOR_MAX_ABS: float = parameter("vector")["max_abs"]
VECTOR_MIN_LARGEST: float = parameter("vector")["min_largest"]


def js_number(value: object) -> str:
    """`value` as JavaScript's `String(value)` writes a number: the shortest digits that read back as it (Python's
    repr's), in fixed notation for a decimal exponent from -7 to 20, else `d.ddde+x`; anything else as str()."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == 0:
        return "0"
    text = repr(abs(value))
    if "e" in text:
        mantissa, exponent_text = text.split("e")
        significand, exponent = mantissa.replace(".", "").rstrip("0"), int(exponent_text)
    else:
        whole, _, fraction = text.partition(".")
        significand = (whole + fraction).lstrip("0").rstrip("0")
        exponent = len(whole) - 1 if whole != "0" else -(len(fraction) - len(fraction.lstrip("0")) + 1)
    sign = "-" if value < 0 else ""
    n, k = exponent + 1, len(significand)  # ECMAScript's Number::toString: the point after the n-th digit
    if k <= n <= 21:
        return sign + significand + "0" * (n - k)
    if 0 < n <= 21:
        return sign + significand[:n] + "." + significand[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + significand
    body = significand if k == 1 else f"{significand[0]}.{significand[1:]}"
    return f"{sign}{body}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def refusal(kind: str, **fields: object) -> BadInput:
    """The contract's message `kind`, its fields filled in (numbers as `js_number` writes them)."""
    template: str = contract()["messages"][kind]
    filled = {
        name: js_number(value) if isinstance(value, int | float) else str(value) for name, value in fields.items()
    }
    return BadInput(template.format(**filled))


def _integer(name: str, value: object) -> int:
    rule = parameter(name)
    if isinstance(value, bool) or not isinstance(value, int) or not rule["min"] <= value <= rule["max"]:
        raise refusal("integer", name=name, min=rule["min"], max=rule["max"], value=value)
    return value


def _weight(name: str, value: object) -> float:
    rule = parameter(name)
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not (number == 0 or rule["min"] <= number <= rule["max"]):  # NaN is neither
        raise refusal("weight", name=name, min=rule["min"], max=rule["max"], value=value)
    return float(number)


def checked_vector(value: object) -> tuple[float, ...]:
    """`value` (a list or tuple of numbers) as a vector of float64s, or the contract's refusal: its length, each
    value a finite number within VECTOR_MAX_ABS, the largest magnitude at least VECTOR_MIN_LARGEST."""
    if not isinstance(value, list | tuple):
        raise refusal("vector_type")
    if not VECTOR_MIN_LENGTH <= len(value) <= VECTOR_MAX_LENGTH:
        raise refusal("vector_length", value=len(value), min=VECTOR_MIN_LENGTH, max=VECTOR_MAX_LENGTH)
    out: list[float] = []
    for index, number in enumerate(value):
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise refusal("vector_number", index=index)
        try:
            as_float = float(number)
        except OverflowError:  # an integer past float64's range
            as_float = math.inf
        if not -VECTOR_MAX_ABS <= as_float <= VECTOR_MAX_ABS:  # NaN is neither
            raise refusal("vector_range", index=index, value=number, max=VECTOR_MAX_ABS)
        out.append(as_float)
    if max(map(abs, out)) < VECTOR_MIN_LARGEST:
        raise refusal("vector_zero", min=VECTOR_MIN_LARGEST)
    return tuple(out)


@dataclass(frozen=True)
class Fusion:
    """The weighted reciprocal-rank fusion of a hybrid answer: its k and each way's weight, checked as built."""

    rrf_k: int = RRF_K
    words_weight: float = WORDS_WEIGHT
    meaning_weight: float = MEANING_WEIGHT

    def __post_init__(self) -> None:
        _integer("rrf_k", self.rrf_k)
        object.__setattr__(self, "words_weight", _weight("words_weight", self.words_weight))
        object.__setattr__(self, "meaning_weight", _weight("meaning_weight", self.meaning_weight))
        if self.words_weight == 0 and self.meaning_weight == 0:
            raise refusal("weights_both_zero")

    @classmethod
    def of(cls, given: Mapping[str, object]) -> Fusion:
        """The fusion of the parameters `given` (by name; a name absent or None takes its default)."""
        chosen: dict[str, Any] = {name: value for name, value in given.items() if name in FUSION and value is not None}
        return cls(**chosen)

    def score(self, words_rank: int | None, meaning_rank: int | None) -> float:
        """A row's fused score: the words part first, from 0.0, one division a part (as the plugin's
        `weight / (double) (k + rank)`, bit-equal); a way that did not reach the row adds nothing."""
        total = 0.0
        if words_rank is not None:
            total += self.words_weight / (self.rrf_k + words_rank)
        if meaning_rank is not None:
            total += self.meaning_weight / (self.rrf_k + meaning_rank)
        return total

    def fields(self) -> dict[str, Any]:
        """The Answer's fusion fields (`rrf_k`, `weights`)."""
        return {"rrf_k": self.rrf_k, "weights": (self.words_weight, self.meaning_weight)}

    def parameters(self) -> dict[str, Any]:
        """The fusion as the contract names its parameters (the plugin's query takes them so)."""
        return {"rrf_k": self.rrf_k, "words_weight": self.words_weight, "meaning_weight": self.meaning_weight}


# The contract's parameters that make the fusion (a test holds them equal to Fusion's fields), and its defaults.
FUSION = ("rrf_k", "words_weight", "meaning_weight")
DEFAULT_FUSION = Fusion()


def way_of(value: object) -> Way:
    """The way named `value`; the contract's refusal for any other."""
    try:
        return Way(value)  # type: ignore[arg-type]  # anything else is refused below
    except ValueError:
        raise refusal("way", value=value) from None


def check_taken(way: Way, given: Mapping[str, object]) -> None:
    """Nothing, or the contract's refusal of the first parameter `given` (not None) that `way` does not take."""
    parameters = contract()["parameters"]
    for name, value in given.items():
        if value is None or name not in parameters:
            continue
        takers: list[str] = parameters[name]["ways"]
        if way.value not in takers:
            raise refusal("not_for_way", name=name, way=way.value, ways=", ".join(takers))


@dataclass(frozen=True)
class Request:
    """One question to one state, as every engine takes it (`engine.ask(request)`); checked as built."""

    state: str
    question: str
    way: Way = DEFAULT_WAY
    limit: int = RETRIEVED_LAWS
    fusion: Fusion = DEFAULT_FUSION  # hybrid's only: another way keeps the default
    # The question's own vector (meaning and hybrid only): ranked by it, not by what an embedder makes of the text.
    vector: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.question, str):
            raise BadInput(f"question: must be text, not {self.question!r}")
        if len(self.question) > MAX_QUESTION_CHARS:
            error = refusal("question_too_long", value=len(self.question), max=MAX_QUESTION_CHARS)
            raise BadInput(error.message, hint="ask a shorter question; it is not cut for you")
        object.__setattr__(self, "way", way_of(self.way))
        _integer("limit", self.limit)
        if self.way is not Way.hybrid and self.fusion != DEFAULT_FUSION:
            changed = {
                name: value for name, value in self.fusion.parameters().items() if value != parameter(name)["default"]
            }
            check_taken(self.way, changed)
        if self.vector is not None:
            check_taken(self.way, {"vector": self.vector})
            object.__setattr__(self, "vector", checked_vector(self.vector))

    @classmethod
    def of(cls, state: str, question: str, given: Mapping[str, object] | None = None) -> Request:
        """The request of `question` to `state` with the parameters `given` by their contract names (`by`,
        `limit`, `rrf_k`, `words_weight`, `meaning_weight`, `vector`; None or absent: not given, its default), checked:
        BadInput with the contract's message for a value out of range or a parameter the way does not take."""
        given = given or {}
        way = DEFAULT_WAY if given.get("by") is None else way_of(given["by"])
        check_taken(way, given)
        limit = given.get("limit")
        return cls(
            state,
            question,
            way,
            RETRIEVED_LAWS if limit is None else limit,  # type: ignore[arg-type]  # checked as built
            Fusion.of(given) if way is Way.hybrid else DEFAULT_FUSION,
            None if given.get("vector") is None else checked_vector(given["vector"]),
        )

    def but(self, **changed: Any) -> Request:
        """This request with some fields changed (checked again)."""
        from dataclasses import replace

        return replace(self, **changed)

    @property
    def embeddable(self) -> bool:
        """False for a question with nothing to embed: no [a-z0-9] after lowercasing.
        Such a question is near no row, by meaning and hybrid, on every path. A question asked with its own vector
        is embeddable whatever its text: the vector is its meaning."""
        return self.vector is not None or has_meaning(self.question)

    def answer_fields(self) -> dict[str, Any]:
        """An Answer's way and fusion fields: `by`, and for hybrid `rrf_k` and `weights`."""
        return {"by": self.way.value, **(self.fusion.fields() if self.way is Way.hybrid else {})}


def has_meaning(question: str) -> bool:
    """True when `question`, lowercased, has an ASCII letter or digit (the spec's [a-z0-9]): something to embed."""
    return _EMBEDDABLE.search(question.lower()) is not None


_EMBEDDABLE = re.compile("[a-z0-9]")
