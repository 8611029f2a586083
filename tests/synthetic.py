"""Generated corpora and questions for the tests and the benchmarks (nothing in `indexer` uses them):
deterministic per seed.

Shaped like the real thing where the ranking is sensitive to it: Texas-size files (6,000 laws), lengths
whose tail matters to Lucene (about a quarter of the laws run past 40 ranked words, some past 100,
where one-byte lengths round down), a Zipf-like vocabulary (a few words in many laws, most in few),
plurals, exact duplicates (ties that only corpus order breaks) and the agency's process rows in
families of five that share their family's question. Questions are drawn from the laws' own questions
and words, then typed as on a phone: a letter off, two words run together, a plural, an unknown word.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from indexer.opensearch.verify import typo
from indexer.retrieval.corpus import STATES, Corpus, Law, read_corpora
from indexer.retrieval.words import STOP, ranked

# Words of road law, most frequent first: they head the Zipf ranking, so "vehicle" and "driver" are in
# many laws and "hydrant" in few, as in the real files.
_ROAD = (  # noqa: SIM905 -- 120 words read better as prose than as a list literal
    "vehicle driver road highway lane traffic speed stop sign signal park parking feet limit mile hour "
    "license permit school bus child passenger seat belt light headlight night turn right left yield "
    "pedestrian crosswalk intersection railroad crossing fire hydrant station emergency police officer "
    "insurance registration plate title owner accident report alcohol blood test penalty fine court "
    "curfew learner minor adult supervision hold month test road skill vision knowledge written exam "
    "helmet motorcycle bicycle truck trailer weight width height load tow mirror horn brake tire window "
    "tint phone text device hand free zone construction work flagger shoulder median curb sidewalk "
    "driveway alley bridge tunnel ramp merge pass overtake follow distance signal lamp beam dim bright "
    "fog rain snow ice chain"
).split()
_ROAD_UNIQUE = tuple(dict.fromkeys(_ROAD))
_KINDS = ("statute", "regulation", "handbook")
_SYLLABLES = tuple(c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ee", "ar", "er"))
_PROCESS_QUESTIONS = (
    "How long do I have to hold my permit before I can take the road test?",
    "How do I renew my license online?",
    "What documents do I need to bring to get a license?",
    "How do I replace a lost title?",
    "How do I register a vehicle bought from another state?",
)


def _made_up_words(rng: random.Random, count: int) -> list[str]:
    made: dict[str, None] = {}
    while len(made) < count:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in STOP and word not in made:
            made[word] = None
    return list(made)


class _Lexicon:
    """A Zipf-ranked vocabulary: the road words first, then made-up ones; weight of rank r is 1/r^1.07."""

    def __init__(self, rng: random.Random, size: int) -> None:
        self.words = list(_ROAD_UNIQUE) + _made_up_words(rng, max(0, size - len(_ROAD_UNIQUE)))
        self.cum_weights = list(itertools.accumulate(1.0 / (rank**1.07) for rank in range(1, len(self.words) + 1)))

    def draw(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


_STOPS = sorted(STOP)


def _text(rng: random.Random, lexicon: _Lexicon, meaningful: int) -> str:
    """A law-like sentence with `meaningful` ranked words, stopwords between them, some plurals."""
    out: list[str] = []
    for word in lexicon.draw(rng, meaningful):
        while rng.random() < 0.45:
            out.append(rng.choice(_STOPS))
        # A plural the plural rule strips back to the word ("hydrants" -> "hydrant"); never on words
        # ending in "s", whose plural would not strip back.
        out.append(word + "s" if len(word) >= 3 and not word.endswith("s") and rng.random() < 0.12 else word)
        if rng.random() < 0.04:
            out.append(str(rng.choice((15, 20, 30, 50, 100, 500, 1000))))
    text = " ".join(out)
    return text[:1].upper() + text[1:] + "."


def _length(rng: random.Random) -> int:
    # Log-normal: a median of about 22 ranked words in the law's text; with the question and concept
    # added, about a quarter of the laws run past 40, and the far tail past 100.
    return max(1, min(400, round(rng.lognormvariate(3.1, 0.6))))


def generate_corpus(state: str, n_laws: int, seed: int) -> list[Law]:
    """`n_laws` laws for `state` in corpus order, the same for the same arguments: about 3% process rows
    in families of five, about 2% exact duplicates of an earlier law (ties), lengths with a long tail."""
    rng = random.Random(f"lawindex/{state}/{seed}")
    lexicon = _Lexicon(rng, size=max(400, n_laws * 2))
    laws: list[Law] = []
    families = 0
    while len(laws) < n_laws:
        roll = rng.random()
        if roll < 0.006 and n_laws - len(laws) >= 5:  # 0.6% of draws, 5 rows each: about 3% of rows
            # A family of five rows of the agency's own pages, all carrying the family's question.
            families += 1
            question = rng.choice(_PROCESS_QUESTIONS)
            family = f"{state.lower()}-family-{families}"
            for member in range(1, 6):
                laws.append(
                    Law(
                        id=f"{state}-P{families:03d}-{member}",
                        kind="process",
                        law=_text(rng, lexicon, rng.randint(8, 30)),
                        question=question,
                        concept=f"process-{family}",
                        family=family,
                    )
                )
            continue
        number = len(laws) + 1
        ranked_laws = [law for law in laws[-200:] if ranked(law)]
        if ranked_laws and roll > 0.98:
            twin = rng.choice(ranked_laws)  # the same words: an exact tie, broken by corpus order only
            laws.append(twin.model_copy(update={"id": f"{state}-S{number:05d}"}))
            continue
        topic = lexicon.draw(rng, 3)
        concept = "-".join(dict.fromkeys(w for w in topic if w.isalpha())) or "general"
        laws.append(
            Law(
                id=f"{state}-S{number:05d}",
                kind=rng.choice(_KINDS),
                law=_text(rng, lexicon, _length(rng)),
                question=f"What is the rule about {topic[0]} and {topic[1]}s near a {topic[2]}?",
                concept=concept,
            )
        )
    return laws[:n_laws]


def generate_corpora(n_states: int, total_laws: int, seed: int) -> dict[str, list[Law]]:
    """`n_states` states' corpora (the first codes in sorted order) sharing about `total_laws` laws,
    unevenly, as real states do (the first is the largest); keyed by state, in state order."""
    if not 1 <= n_states <= len(STATES):
        raise ValueError(f"n_states must be 1..{len(STATES)}")
    rng = random.Random(f"lawindex/corpora/{seed}")
    states = sorted(STATES)[:n_states]
    weights = [1.0 / (place + 1) ** 0.8 * rng.uniform(0.7, 1.3) for place in range(n_states)]
    total = sum(weights)
    sizes = [max(10, round(total_laws * weight / total)) for weight in weights]
    return {state: generate_corpus(state, size, seed) for state, size in zip(states, sizes, strict=True)}


def generate_questions(laws: Sequence[Law], n: int, seed: int) -> list[str]:
    """`n` questions drawn from `laws` (their questions and words) with a phone's mistakes: typos, two
    words run together, plurals, unknown words, stopwords; the same list for the same arguments."""
    rng = random.Random(f"lawindex/questions/{seed}")
    pool = [law for law in laws if ranked(law)] or list(laws)
    if not pool:
        return [""] * n
    questions: list[str] = []
    for _ in range(n):
        law = rng.choice(pool)
        source = law.question if rng.random() < 0.4 else law.law
        tokens = [t for t in source.lower().replace("?", " ").replace(".", " ").split() if t]
        if len(tokens) > 4:
            start = rng.randrange(len(tokens) - 3)
            tokens = tokens[start : start + rng.randint(3, 9)]
        mutated: list[str] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            roll = rng.random()
            if roll < 0.12 and len(token) >= 5:
                mutated.append(typo(rng, token))
            elif roll < 0.20 and i + 1 < len(tokens):
                mutated.append(token + tokens[i + 1])  # "fire hydrant" typed as "firehydrant"
                i += 1
            elif roll < 0.28 and not token.endswith("s"):
                mutated.append(token + "s")
            else:
                mutated.append(token)
            i += 1
        if rng.random() < 0.1:
            mutated.append("".join(rng.choice("qxzjkv") for _ in range(rng.randint(4, 8))))  # unknown
        if rng.random() < 0.3:
            mutated.insert(0, rng.choice(("how far", "can i", "do i need to", "what is the", "where should")))
        questions.append(" ".join(mutated))
    return questions


def corpus_of(state: str, laws: Sequence[Law], path: Path | None = None) -> Corpus:
    """A Corpus made in memory (a generated one), hashed from its laws as a file would be."""
    digest = hashlib.sha256(
        "\n".join(json.dumps(law.model_dump(exclude_none=True), sort_keys=True) for law in laws).encode()
    ).hexdigest()
    return Corpus(state, path or Path(f"{state}.jsonl"), tuple(laws), digest)


def write_corpus(path: Path, laws: Sequence[Law]) -> None:
    """`laws` as a corpus file, one JSON object a line."""
    path.write_text("".join(law.model_dump_json(exclude_none=True) + "\n" for law in laws), encoding="utf-8")


def write_corpora(directory: Path, states: int, laws: int, seed: int) -> list[Corpus]:
    """`generate_corpora(states, laws, seed)` as `<STATE>.jsonl` files under `directory` (made if need
    be), read back as a load reads them."""
    directory.mkdir(parents=True, exist_ok=True)
    for state, generated in generate_corpora(states, laws, seed).items():
        write_corpus(directory / f"{state}.jsonl", generated)
    return read_corpora(directory)


# ---------------------------------------------------------------------------------------------------
# Corpora whose answer turns on the last bit of the spec's arithmetic.


@dataclass(frozen=True)
class LastBit:
    """A corpus built so that its answers depend on the spec's float64 arithmetic to the last bit, and
    the questions that show it: `why` says what an engine gets wrong if it computes otherwise."""

    name: str
    laws: list[Law]
    questions: list[str]
    why: str


def _fixed_length_corpus(state: str, size: int, average: int, chosen: dict[int, tuple[list[str], int]]) -> list[Law]:
    """`size` ranked laws (and three process rows ahead of them) whose lengths sum to exactly
    `average * size`: law i of `chosen` has the words listed (in that order, repeats counted) and the
    length given, the rest only filler words ("k17": in no question, one edit from none of their words).
    Every law's concept is its first filler ("k0"), which counts in its length as the spec counts it."""
    rest = size - len(chosen)
    spare = average * size - sum(length for _, length in chosen.values())
    if rest <= 0 or spare < rest:
        raise ValueError("the chosen laws leave no room for the others")
    laws = [
        Law(
            id=f"{state}-P{member}",
            kind="process",
            law=" ".join(w for ws, _ in chosen.values() for w in ws),
            question="How do I renew my license online?",
            concept="process-renewal",
            family="renewal",
        )
        for member in range(1, 4)
    ]  # fmt: skip  -- process rows with every chosen word: counted in neither N nor df, as in the spec
    filled = 0
    for i in range(size):
        if i in chosen:
            words, length = chosen[i]
        else:
            words, filled = [], filled + 1
            length = spare // rest + (1 if filled <= spare % rest else 0)
        fillers = [f"k{(i * 7 + j) % 997 + 1}" for j in range(length - 1 - len(words))]
        if len(fillers) != length - 1 - len(words) or length - 1 < len(words):
            raise ValueError(f"law {i}: {len(words)} words do not fit in {length}")
        laws.append(Law(id=f"{state}-S{i + 1:04d}", kind="statute", law=" ".join(words + fillers),
                        question="", concept="k0"))  # fmt: skip
    return laws


def last_bit_corpora(state: str = "TX") -> list[LastBit]:
    """Corpora of 1,000 ranked laws averaging exactly 30 words, each with answers decided in the last bit.

    Found by search over N, df, tf and length (every (N, df) is cheap to try): with a word of df 51, a law
    with it twice in 74 words and one with it three times in 116 score the same in real numbers
    (tf · (10 + 116) = 3 · 84 = 2 · 126) and bit for bit with V8's logarithm, so corpus order puts the
    first one first; with glibc's logarithm the tf-3 law scores an ulp higher. At df 191 glibc's log breaks
    the same tie the other way, and there the tf-3 law comes first in the corpus. The third corpus has two
    laws whose three term scores are the same three numbers in the other order (three words of equal df,
    tf 1, 2, 3 against 3, 2, 1, at one length): float addition is not associative, so which law wins
    depends on the order the spec adds a question's words in (its `asked`: question order, each
    expansion in vocabulary order), and the questions ask them in every order, and as one run-together
    word whose expansion comes out in vocabulary order, not in the order typed.
    """
    out = []
    for name, df, first, second in (("df51", 51, (2, 74), (3, 116)), ("df191", 191, (3, 116), (2, 74))):
        chosen = {100: (["zorvak"] * first[0], first[1]), 700: (["zorvak"] * second[0], second[1])}
        others = [i for i in range(200, 1000, 3) if i != 700][: df - 2]  # tf 1 at 80 words: ranked lower
        chosen.update({i: (["zorvak"], 80) for i in others})
        out.append(LastBit(
            name, _fixed_length_corpus(state, 1000, 30, chosen), ["zorvak", "what about zorvaks", "zorvaak"],
            f"tf {first[0]} at {first[1]} words and tf {second[0]} at {second[1]} tie bit for bit with V8's "
            f"logarithm (df {df}): corpus order; glibc's breaks the tie the other way",
        ))  # fmt: skip
    words = ["quintel", "mavrex", "dorbik"]
    df, length = 41, 30  # (s1 + s2) + s3 > (s3 + s2) + s1 there, by an ulp (found by search)
    chosen = {100: (words[:1] + words[1:2] * 2 + words[2:] * 3, length)}
    chosen[600] = (words[:1] * 3 + words[1:2] * 2 + words[2:], length)
    spots = iter(range(200, 1000, 4))
    for word in words:
        for _ in range(df - 2):
            spot = next(spots)
            while spot == 600:
                spot = next(spots)
            chosen[spot] = ([word], 80)
    orders = [" ".join(p) for p in itertools.permutations(words)]
    out.append(LastBit(
        "sum-order", _fixed_length_corpus(state, 1000, 30, chosen), [*orders, "dorbikmavrexquintel"],
        "the same three term scores added in another order: the spec adds them in its `asked` order",
    ))  # fmt: skip
    return out


# ---------------------------------------------------------------------------------------------------
# A state with a million-word vocabulary (issue 19): most of a very large vocabulary is words that one
# law alone uses (names, places, codes, the misspellings of the source), a few words are in most laws.

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_WORD_CHARACTERS = _LETTERS * 12 + "0123456789"  # a digit about one character in 30


def _rare_words(rng: random.Random, count: int) -> list[str]:
    """`count` distinct made-up words of 3-16 letters (mostly 6-10, as a large English vocabulary's), none
    a stopword and none that the plural rule would cut (a final "s" would be stripped)."""
    made: dict[str, None] = {}
    while len(made) < count:
        wanted = count - len(made)
        lengths = [max(3, min(16, round(rng.gauss(8.0, 2.2)))) for _ in range(wanted)]
        characters = "".join(rng.choices(_WORD_CHARACTERS, k=sum(lengths)))
        start = 0
        for length in lengths:
            word = characters[start : start + length]
            start += length
            if word.endswith("s"):
                word = word[:-1] + "e"
            if word not in STOP:
                made[word] = None
    return list(made)[:count]


def generate_wide_corpus(state: str, n_laws: int, distinct_words: int, seed: int) -> list[Law]:
    """`n_laws` laws for `state` whose vocabulary has about `distinct_words` words, the same for the same
    arguments: generate_corpus's laws (Zipf-ranked road words, process rows, ties), each with its share of
    rare words appended to its text, a few of them used again by a later law (df 2-5)."""
    laws = generate_corpus(state, n_laws, seed)
    rng = random.Random(f"lawindex/wide/{state}/{seed}")
    ranked_places = [place for place, law in enumerate(laws) if ranked(law)]
    rare = _rare_words(rng, distinct_words)
    # Each law's share of the rare words: about the same for every law, give or take a quarter.
    shares = list(itertools.accumulate(max(0.1, rng.gauss(1.0, 0.25)) for _ in ranked_places))
    ends = [round(len(rare) * share / shares[-1]) for share in shares] if shares else []
    taken = 0
    for place, end in zip(ranked_places, ends, strict=True):
        own = rare[taken:end]
        again = [rare[rng.randrange(taken)] for _ in range(rng.randint(0, 3))] if taken else []
        taken = end
        law = laws[place]
        laws[place] = law.model_copy(update={"law": f"{law.law} {' '.join(own + again)}"})
    return laws
