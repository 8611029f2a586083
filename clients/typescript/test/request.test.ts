// The client's checks of a question (src/request.ts) against the cases every path is held to
// (test/request-cases.json: tests/unit/test_request.py holds lawindex's own checks to the same file), and
// src/contract.ts against contract/request.json. No cluster, no service: `npm run test:unit`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { BadRequest, CONTRACT, ClusterClient, LawindexClient, checkAsked, hasMeaning, lawindexQuery } from "../src/index.js";

interface Case {
  question: string | { repeat: string; times: number };
  given: { by?: string; limit?: number; rrf_k?: number; words_weight?: number; meaning_weight?: number; vector?: unknown };
  refused: string | null;
}

const here = new URL(".", import.meta.url);
const cases = JSON.parse(readFileSync(new URL("request-cases.json", here), "utf8")) as Case[];

function questionOf(one: Case): string {
  return typeof one.question === "string" ? one.question : one.question.repeat.repeat(one.question.times);
}

function asked(one: Case): Parameters<typeof checkAsked>[1] {
  const { by, limit, rrf_k: rrfK, words_weight: wordsWeight, meaning_weight: meaningWeight, vector } = one.given;
  return {
    ...(by !== undefined ? { by } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(rrfK !== undefined ? { rrfK } : {}),
    ...(wordsWeight !== undefined ? { wordsWeight } : {}),
    ...(meaningWeight !== undefined ? { meaningWeight } : {}),
    ...(vector !== undefined ? { vector: vector as number[] } : {}),
  };
}

test("src/contract.ts is contract/request.json", () => {
  const source = JSON.parse(readFileSync(new URL("../../../contract/request.json", here), "utf8")) as unknown;
  assert.deepEqual(CONTRACT, source);
});

test("each case is refused with the message every path gives, or accepted", () => {
  assert.ok(cases.length >= 20);
  for (const one of cases) {
    const question = questionOf(one);
    if (one.refused === null) {
      assert.doesNotThrow(() => checkAsked(question, asked(one)), JSON.stringify(one.given));
      continue;
    }
    assert.throws(
      () => checkAsked(question, asked(one)),
      (error: unknown) => error instanceof BadRequest && error.status === 400 && error.message === one.refused,
      `${JSON.stringify(one.given)}: ${one.refused}`,
    );
  }
});

test("the raw query and both clients refuse before any request", async () => {
  assert.throws(() => lawindexQuery("school bus", { by: "meaning", rrfK: 5 }), /^BadRequest: rrf_k: only hybrid takes it, not by meaning$/);
  // Nothing listens on the discard port: a request would be a ConnectionFailed, not a BadRequest.
  const service = new LawindexClient("http://127.0.0.1:9", { timeoutMs: 2000 });
  await assert.rejects(service.ask("TX", "school bus", { by: "hybrid", wordsWeight: 1e40 }), BadRequest);
  await assert.rejects(service.askMany("TX", ["school bus"], { by: "words", meaningWeight: 1 }), BadRequest);
  const cluster = new ClusterClient("http://127.0.0.1:9", { timeoutMs: 2000 });
  await assert.rejects(cluster.ask("TX", "school bus", { limit: 0 }), BadRequest);
});

test("a question with no letter or digit has nothing to embed", () => {
  for (const question of ["", " ", "   ", "\t\n", "?!", "...", "\u0000\u0007", "¿¡", "—", "\u200b", "🙂", "é", "日本", "٣", "ß"]) {
    assert.equal(hasMeaning(question), false, JSON.stringify(question));
  }
  for (const question of ["a", "5", " x ", "?a", "¿qué?", "İ", "\u212a", "Z9"]) assert.equal(hasMeaning(question), true, question);
});

test("a question's own vector: its length's edges, and the raw query carries it", () => {
  const edge = [...Array<number>(4095).fill(0), 1e-150];
  assert.doesNotThrow(() => checkAsked("q", { by: "meaning", vector: edge }));
  assert.throws(
    () => checkAsked("q", { by: "meaning", vector: Array<number>(4097).fill(0.5) }),
    (error: unknown) => error instanceof BadRequest && error.message === "vector: 4097 numbers, not from 1 to 4096",
  );
  assert.throws(() => checkAsked("q", { by: "meaning", vector: [1, Number.NaN] }), /vector\[1\] is NaN, not a finite number/);
  const body = lawindexQuery("q", { by: "hybrid", vector: [0.25, -1, 3e-7] }) as { query: { lawindex: { vector: number[] } } };
  assert.deepEqual(body.query.lawindex.vector, [0.25, -1, 3e-7]);
});
