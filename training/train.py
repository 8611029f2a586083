"""Steps 2 and 3, routes (b) and (c): fit the table so that the mean of a text's rows (normalised) ranks
passages for learner questions, starting from a given table (WordLlama's own, or step 1's).

Loss, over a batch of learner-question/passage pairs from training/data (training topics only;
common.DEV_TOPICS are kept out to measure on):
- contrastive (c): InfoNCE of each question against every passage of the batch (in-batch negatives), at
  temperature TAU; questions are sometimes typed worse on purpose (a letter dropped, doubled or swapped, two
  words run together), as learners type;
- teacher (b): the student's cosine matrix over the batch's texts made to match all-MiniLM-L6-v2's (KL of
  each row's softmax at TAU_T): the teacher's sense of which texts are near, in whatever space the table has;
- anchor: L2 of the change to the starting table (keeps the 32,000 rows that training never sees in place).

Usage: python3 train.py INIT OUT [--epochs N] [--teacher W] [--anchor W] [--lr X] [--seed S]
INIT: wordllama | a path to a table (.safetensors). Writes OUT (.safetensors, float16)."""

from __future__ import annotations

import argparse
import random
import sys
import time

import common
import jax
import jax.numpy as jnp
import numpy as np
from bench import read_table, write_table

TAU = 0.05
TAU_T = 0.05


def noisy(text: str, rng: random.Random) -> str:
    """The question as typed worse: one of a dropped, doubled or swapped letter, or two words run together."""
    words = text.split()
    if len(words) < 2 or rng.random() < 0.5:
        return text
    i = rng.randrange(len(words))
    w = words[i]
    kind = rng.randrange(4)
    if kind == 0 and len(w) > 3:
        j = rng.randrange(1, len(w))
        words[i] = w[:j] + w[j + 1:]
    elif kind == 1 and len(w) > 2:
        j = rng.randrange(len(w))
        words[i] = w[:j] + w[j] + w[j:]
    elif kind == 2 and len(w) > 3:
        j = rng.randrange(len(w) - 1)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    elif i + 1 < len(words):
        words[i:i + 2] = [words[i] + words[i + 1]]
    return " ".join(words)


def padded(ids: list[list[int]], length: int) -> tuple[np.ndarray, np.ndarray]:
    """Ids in a fixed shape (one compilation): truncated to `length` in training only."""
    ids = [one[:length] for one in ids]
    table = np.zeros((len(ids), length), dtype=np.int32)
    mask = np.zeros((len(ids), length), dtype=np.float32)
    for n, one in enumerate(ids):
        table[n, :len(one)] = one
        mask[n, :len(one)] = 1.0
    return table, mask


def student(matrix: jax.Array, ids: jax.Array, mask: jax.Array) -> jax.Array:
    summed = (matrix[ids] * mask[..., None]).sum(1)
    return summed / jnp.maximum(jnp.linalg.norm(summed, axis=-1, keepdims=True), 1e-9)


def loss_fn(matrix, start, q_ids, q_mask, p_ids, p_mask, targets, teacher_sims, weights):  # type: ignore[no-untyped-def]
    q = student(matrix, q_ids, q_mask)
    p = student(matrix, p_ids, p_mask)
    logits = q @ p.T / TAU
    contrastive = -jnp.mean(jax.nn.log_softmax(logits, axis=1)[jnp.arange(q.shape[0]), targets])
    every = jnp.concatenate([q, p])
    sims = every @ every.T
    eye = jnp.eye(every.shape[0]) * 1e4
    t = jax.nn.softmax(teacher_sims / TAU_T - eye, axis=1)
    s = jax.nn.log_softmax(sims / TAU_T - eye, axis=1)
    teacher = -jnp.mean(jnp.sum(t * s, axis=1))
    anchor = jnp.sum((matrix - start) ** 2) / matrix.shape[0]
    return contrastive + weights[0] * teacher + weights[1] * anchor


@jax.jit
def step_fn(matrix, m, v, step, lr, start, q_ids, q_mask, p_ids, p_mask, targets, teacher_sims, weights):  # type: ignore[no-untyped-def]
    """One Adam step on the whole table."""
    value, grad = jax.value_and_grad(loss_fn)(matrix, start, q_ids, q_mask, p_ids, p_mask, targets, teacher_sims,
                                              weights)
    m = 0.9 * m + 0.1 * grad
    v = 0.999 * v + 0.001 * grad * grad
    matrix = matrix - lr * (m / (1 - 0.9**step)) / (jnp.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return matrix, m, v, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("init")
    parser.add_argument("out")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--teacher", type=float, default=1.0)
    parser.add_argument("--anchor", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--all-topics", action="store_true", help="train on the dev topics too (the final table)")
    parser.add_argument("--rows", action="store_true", help="also pair corpora/ rows' questions with their laws")
    args = parser.parse_args()
    started = time.process_time()
    rng = random.Random(args.seed)
    embedder = common.wordllama()
    init = embedder._matrix if args.init == "wordllama" else read_table(args.init).astype(np.float32)
    scale = float(np.abs(init).std())
    start = jnp.asarray(init / scale)
    matrix = start
    items = common.traindata() + (common.traindata(dev=True) if args.all_topics else [])
    pairs = [(q, item["passage"]) for item in items for q in item["questions"]]
    if args.rows:
        pairs += [(r["question"], r["law"]) for r in common.corpus_rows() if not r["id"].startswith("OH-")]
    passages = sorted({p for _, p in pairs})
    import minilm

    def teach(texts: list[str]) -> np.ndarray:
        """The teacher's vectors of `texts`, cached on disk by text (out/teacher.npz)."""
        cache = common.OUT / "teacher.npz"
        kept: dict[str, np.ndarray] = {}
        if cache.exists():
            with np.load(cache) as held:
                kept = dict(zip(held["texts"].tolist(), held["vectors"], strict=True))
        missing = sorted(set(texts) - kept.keys())
        if missing:
            kept.update(zip(missing, minilm.encode(missing), strict=True))
            names = sorted(kept)
            np.savez(cache.with_suffix(".tmp.npz"), texts=np.array(names),
                     vectors=np.stack([kept[t] for t in names]))
            cache.with_suffix(".tmp.npz").replace(cache)
        return np.stack([kept[t] for t in texts])

    questions = sorted({q for q, _ in pairs})
    known = {t: n for n, t in enumerate(passages + questions)}
    taught = teach(passages + questions)  # a noisy question is taught its clean text's vector
    print(f"{len(pairs)} pairs, {len(passages)} passages; teacher {time.process_time() - started:.0f} s CPU",
          file=sys.stderr)
    m = jnp.zeros_like(matrix)
    v = jnp.zeros_like(matrix)
    step = 0
    weights = jnp.asarray([args.teacher, args.anchor], dtype=jnp.float32)
    for epoch in range(args.epochs):
        rng.shuffle(pairs)
        total = 0.0
        batches: list[list[tuple[str, str]]] = []
        open_batches: list[list[tuple[str, str]]] = []
        for pair in pairs:  # batches of distinct passages, each full (a passage twice would be its own negative)
            for batch in open_batches:
                if all(pair[1] != p for _, p in batch):
                    batch.append(pair)
                    break
            else:
                batch = [pair]
                open_batches.append(batch)
            if len(batch) == args.batch:
                open_batches.remove(batch)
                batches.append(batch)
        for chunk in batches:
            # one question per distinct passage in a batch: a passage twice would be its own negative
            seen: dict[str, int] = {}
            qs, clean, targets = [], [], []
            for q, p in chunk:
                if p in seen:
                    continue
                seen[p] = len(seen)
                clean.append(q)
                qs.append(noisy(q, rng) if rng.random() < args.noise else q)
                targets.append(seen[p])
            ps = list(seen)
            q_ids, q_mask = padded(embedder.tokens(qs), 48)
            p_ids, p_mask = padded(embedder.tokens(ps), 192)
            tv = taught[[known[t] for t in clean + ps]]
            step += 1
            matrix, m, v, value = step_fn(matrix, m, v, float(step), args.lr, start, q_ids, q_mask, p_ids, p_mask,
                                          np.array(targets), tv @ tv.T, weights)
            total += float(value)
        print(f"epoch {epoch + 1}: loss {total / max(1, len(batches)):.4f} "
              f"({time.process_time() - started:.0f} s CPU)", file=sys.stderr)
    table = common.scaled(np.asarray(matrix))
    print(write_table(args.out, table))


if __name__ == "__main__":
    main()
