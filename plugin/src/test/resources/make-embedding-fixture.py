"""Writes the embedder's fixture: texts, and what lawindex's Python embedder (indexer.retrieval.embedding, the
reference) makes of each, for the plugin's Java tokenizer and embedder to be held against (EmbedderTest).

Each line is JSON: ["text", token count, sha256 of the ids as int32 LE, sha256 of the vector as float32 LE]
(the text JSON-escaped, so a lone surrogate is a `\\ud800` escape, as a request would carry it), or
{"fsum": [doubles as hex], "sum": hex} for math.fsum itself. The texts come from a fixed generator: words,
whitespace of every kind, the tokenizer's added tokens and their pieces, code points of many scripts, emoji,
controls, non-characters, lone surrogates; lengths from 0 to 100,000 characters.

The Python tokenizer refuses a str holding a lone surrogate; the plugin reads each as U+FFFD (as `lawindex
serve` does), so the reference for a text is the embedding of the text as JSON decodes it with each lone
surrogate replaced.

Run: python3 make-embedding-fixture.py --count 600 --short > embedding-fixture.jsonl (the committed one);
EmbedderTest runs it with --count 30000 into target/ for the long check.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))  # the repository's indexer package

import numpy as np

from indexer.retrieval.embedding import default_embedder

WORDS = [
    "school",
    "bus",
    "stop",
    "law",
    "driver",
    "pass",
    "children",
    "vehicle",
    "permit",
    "fine",
    "court",
    "appeal",
    "the",
    "of",
    "and",
    "a",
    "to",
    "in",
    "is",
    "for",
    "shall",
    "may",
    "must",
    "not",
    "license",
    "tax",
    "property",
    "landlord",
    "tenant",
    "deposit",
    "rent",
    "wage",
    "employer",
    "overtime",
    "minimum",
    "don't",
    "it's",
    "U.S.",
    "e-mail",
    "911",
    "$100",
    "50%",
    "C++",
    "naïve",
    "café",
    "Straße",
    "résumé",
    "façade",
]
SPACES = [" ", "  ", "   ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2581", "\u2581\u2581", "\u200b", "\u2028"]
ADDED = ["<s>", "</s>", "<unk>", "<s", "s>", "</", "<unk", "<<s>>", "</s></s>", "<s><unk>"]
RANGES = [
    (0x00, 0x1F),
    (0x21, 0x7E),
    (0x7F, 0x9F),
    (0xA0, 0xFF),
    (0x100, 0x24F),
    (0x300, 0x36F),
    (0x370, 0x3FF),
    (0x400, 0x4FF),
    (0x590, 0x5FF),
    (0x600, 0x6FF),
    (0x900, 0x97F),
    (0xE00, 0xE7F),
    (0x1100, 0x11FF),
    (0x3040, 0x30FF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
    (0xD800, 0xDFFF),
    (0xE000, 0xF8FF),
    (0xFFF0, 0xFFFF),
    (0x1F300, 0x1FAFF),
    (0x10000, 0x10FFFF),
]


def piece(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        word = rng.choice(WORDS)
        return word.upper() if rng.random() < 0.1 else word.capitalize() if rng.random() < 0.2 else word
    if kind < 0.65:
        return rng.choice(SPACES)
    if kind < 0.70:
        return rng.choice(ADDED)
    if kind < 0.73:
        return "\U0001f469\u200d\U0001f4bb" if rng.random() < 0.5 else "\U0001f1fa\U0001f1f8"
    low, high = rng.choice(RANGES)
    return "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 6)))


def text(rng: random.Random, index: int, short: bool) -> str:
    if short:
        return "".join(piece(rng) for _ in range(int(rng.lognormvariate(1.5, 0.8))))
    if index % 10_000 == 7:  # a 100,000-character question, of one run or of everything
        unit = rng.choice(["a", "\u2581", " ", "é", "\U0001f600", "ab ", "law "])
        if rng.random() < 0.5:
            return (unit * 100_000)[:100_000]
        out: list[str] = []
        length = 0  # kept as it grows: summing the pieces at every step was quadratic (29 of the 40 s)
        while length < 100_000:
            out.append(piece(rng))
            length += len(out[-1])
        return "".join(out)[:100_000]
    length = int(rng.lognormvariate(2.0, 1.0)) if index % 50 else rng.randint(300, 3000)
    return "".join(piece(rng) for _ in range(length))


def bits(value: float) -> str:
    return value.hex()


_LONE = re.compile("[\ud800-\udfff]")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--short", action="store_true", help="short texts only (the committed fixture)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = default_embedder()
    out = sys.stdout
    texts = [json.dumps(text(rng, index, args.short)) for index in range(args.count)]
    for start in range(0, len(texts), 512):
        batch = texts[start : start + 512]
        decoded = [_LONE.sub("\ufffd", json.loads(one)) for one in batch]
        ids = embedder.tokens(decoded)  # type: ignore[attr-defined]
        vectors = embedder.embed(decoded)
        for one, tokens, vector in zip(batch, ids, vectors, strict=True):
            id_digest = hashlib.sha256(np.asarray(tokens, dtype="<i4").tobytes()).hexdigest()
            vector_digest = hashlib.sha256(np.asarray(vector, dtype="<f4").tobytes()).hexdigest()
            out.write(f'[{one}, {len(tokens)}, "{id_digest}", "{vector_digest}"]\n')
    for _ in range(max(50, args.count // 20)):  # fsum on sums whose rounding is hard: cancellations, ties
        count = rng.randint(1, 80)
        values = [rng.choice([1.0, -1.0]) * math.ldexp(rng.random(), rng.randint(-60, 60)) for _ in range(count)]
        if rng.random() < 0.3:
            values += [math.ldexp(1.0, -53), 1.0, math.ldexp(1.0, -106)]
        if rng.random() < 0.3:
            values += [-v for v in values[: len(values) // 2]]
        rng.shuffle(values)
        out.write(json.dumps({"fsum": [bits(v) for v in values], "sum": bits(math.fsum(values))}) + "\n")


if __name__ == "__main__":
    main()
