// A state of a user's own vectors asked with the question's own vector (docs/meaning.md, "Your own vectors"), by
// ClusterClient (the plugin's query, no lawindex in the path) and LawindexClient (lawindex serve), held to the
// reference engine's answers, written by the Python test that runs this file (tests/integration/test_own_vectors.py):
//   LAWINDEX_EXPECTED  a JSON file: [{ state, question, by, vector, ids: [...], scores: [...] }, ...]
//   LAWINDEX_SERVE     the URL of a `lawindex serve` of the same namespace
// Ids and order equal on both; serve's scores are the reference's float64s, to the bit.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { BadRequest, ClusterClient, LawindexClient, type Way, isQuestionError } from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run through its Python test)`);
  return value;
}

interface Expected {
  state: string;
  question: string;
  by: Exclude<Way, "words">;
  vector: number[];
  ids: string[];
  scores: number[];
}

const cluster = new ClusterClient(required("OPENSEARCH_URL"), { namespace: required("LAWINDEX_NAMESPACE") });
const service = new LawindexClient(required("LAWINDEX_SERVE"), { timeoutMs: 60_000 });
const expected = JSON.parse(readFileSync(required("LAWINDEX_EXPECTED"), "utf8")) as Expected[];

test("ClusterClient with the question's own vector returns the reference engine's rows, in order", async () => {
  assert.ok(expected.length > 0);
  for (const one of expected) {
    const hits = await cluster.retrieve(one.state, one.question, { by: one.by, vector: one.vector, limit: one.ids.length });
    assert.deepEqual(hits.map((hit) => hit.id), one.ids, `${one.state} ${one.by} ${one.question}`);
  }
  console.log(`cluster: ${expected.length} exact`);
});

test("LawindexClient with the question's own vector returns the reference engine's rows and scores", async () => {
  for (const one of expected) {
    const answer = await service.ask(one.state, one.question, { by: one.by, vector: one.vector, limit: one.ids.length });
    assert.deepEqual(answer.hits.map((hit) => hit.id), one.ids, `${one.state} ${one.by} ${one.question}`);
    assert.deepEqual(answer.hits.map((hit) => hit.score), one.scores, `${one.state} ${one.by} ${one.question}`);
  }
  const first = expected[0]!;
  const batch = await service.askMany(first.state, [first.question, first.question], { by: first.by, vector: first.vector, limit: first.ids.length });
  for (const answer of batch) {
    assert.ok(!isQuestionError(answer));
    assert.deepEqual(answer.hits.map((hit) => hit.id), first.ids);
  }
  console.log(`serve: ${expected.length + 2} exact`);
});

test("a question without its vector, or of another length, is refused by the cluster and by serve", async () => {
  const first = expected[0]!;
  await assert.rejects(cluster.ask(first.state, first.question, { by: "meaning" }), (error: unknown) =>
    error instanceof BadRequest && /vector: .* were made by external/.test(error.message));
  await assert.rejects(service.ask(first.state, first.question, { by: "meaning", vector: first.vector.slice(1) }),
    (error: unknown) => error instanceof BadRequest && error.message.includes(`vector: ${first.vector.length - 1} numbers`));
});
