// ClusterClient by meaning and hybrid (docs/fusion.md's `{"lawindex": {"question", "by": "meaning" | "hybrid", ...}}`),
// held to the reference engine's answers (indexer.retrieval.meaning, written by the Python test that runs this
// file: tests/integration/test_ts_cluster_meaning.py, where the plugin answers by meaning):
//   LAWINDEX_EXPECTED  a JSON file: [{ state, question, by, rrf_k?, ids: [...], scores: [...] }, ...]
// Ids and order must be equal; a score is the engine's float32 `_score` of the reference's float64 score, raised
// where the plugin must keep a row above the next (equal floats; plugin/.../MeaningRanking.java).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { ClusterClient, type Way } from "../src/index.js";

/** A positive float32's bits, as an integer: one apart, one ulp apart. */
function bits(value: number): number {
  return new Uint32Array(new Float32Array([value]).buffer)[0]!;
}

/** Each `_score` is the float32 nearest the reference's float64 score, except where the plugin raised it to stay
 * above the row after it (the collector breaks equal floats by document id, not corpus order): then it is that
 * row's float or the next float up; for the last hit, the row after it is not returned, so a few ulps up. Both
 * are compared as float32: the node writes a `_score` as the float32's shortest decimal, which JSON.parse reads
 * as the double nearest that decimal, not as the float32's own value. */
function assertScores(actual: number[], expected: number[], where: string): void {
  assert.equal(actual.length, expected.length, where);
  const got = actual.map(Math.fround);
  for (let i = 0; i < got.length; i++) {
    const score = got[i]!;
    const nearest = Math.fround(expected[i]!);
    if (score === nearest) continue;
    const next = got[i + 1];
    const belowIt = next !== undefined ? score === next || bits(score) === bits(next) + 1 : bits(score) - bits(nearest) <= 64;
    assert.ok(score > nearest && belowIt, `${where}: hit ${i + 1} scored ${score}, the reference ${expected[i]} (${nearest} as float32)`);
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run through its Python test)`);
  return value;
}

interface Expected {
  state: string;
  question: string;
  by: Way;
  rrf_k?: number;
  words_weight?: number;
  meaning_weight?: number;
  ids: string[];
  scores: number[];
}

const cluster = new ClusterClient(required("OPENSEARCH_URL"), { namespace: required("LAWINDEX_NAMESPACE") });
const expected = JSON.parse(readFileSync(required("LAWINDEX_EXPECTED"), "utf8")) as Expected[];

for (const way of ["meaning", "hybrid"] as const) {
  test(`ClusterClient by ${way} returns the reference engine's rows, in order`, async () => {
    const asked = expected.filter((one) => one.by === way);
    assert.ok(asked.length > 0);
    for (const one of asked) {
      const answer = await cluster.ask(one.state, one.question, {
        by: way,
        ...(one.rrf_k !== undefined ? { rrfK: one.rrf_k } : {}),
        ...(one.words_weight !== undefined ? { wordsWeight: one.words_weight } : {}),
        ...(one.meaning_weight !== undefined ? { meaningWeight: one.meaning_weight } : {}),
      });
      const where = `${one.state} by ${way}: ${JSON.stringify(one.question)}`;
      assert.deepEqual(answer.hits.map((hit) => hit.id), one.ids, where);
      assertScores(answer.hits.map((hit) => hit.score), one.scores, where);
    }
    console.log(`cluster client by ${way}: ${asked.length} exact`);
  });
}
