// ClusterClient by meaning and hybrid (docs/fusion.md's `{"lawindex": {"question", "by": "meaning" | "hybrid", ...}}`),
// held to the reference engine's answers (indexer.retrieval.meaning, written by the Python test that runs this
// file: tests/integration/pending_ts_cluster_meaning.py, enabled when the plugin answers by meaning):
//   LAWINDEX_EXPECTED  a JSON file: [{ state, question, by, rrf_k?, ids: [...], scores: [...] }, ...]
// Ids and order must be equal; a score is the engine's float32 `_score` of the reference's float64 score.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { ClusterClient, type Way } from "../src/index.js";

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
      const answer = await cluster.ask(one.state, one.question, { by: way, ...(one.rrf_k !== undefined ? { rrfK: one.rrf_k } : {}) });
      const where = `${one.state} by ${way}: ${JSON.stringify(one.question)}`;
      assert.deepEqual(answer.hits.map((hit) => hit.id), one.ids, where);
      assert.deepEqual(answer.hits.map((hit) => hit.score), one.scores.map((score) => Math.fround(score)), where);
    }
    console.log(`cluster client by ${way}: ${asked.length} exact`);
  });
}
