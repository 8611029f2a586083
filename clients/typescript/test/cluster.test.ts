// The package's ClusterClient (src/cluster.ts) asks the cluster itself, no `lawindex serve` in the path: by
// words, its ids and order are held to the spec's own bm25() run in this same process over the same corpus
// files. Run by tests/integration/test_ts_client.py (the environment of test/plugin.test.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { ClusterClient, NotFound, lawindexQuery } from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run through tests/integration/test_ts_client.py)`);
  return value;
}

interface Law {
  id: string;
  kind: string;
  law: string;
}
type Bm25 = (laws: Law[], question: string, limit?: number) => Law[];

const corpora = required("LAWINDEX_CORPORA");
const questions = JSON.parse(readFileSync(required("LAWINDEX_QUESTIONS"), "utf8")) as Record<string, string[]>;
const cluster = new ClusterClient(required("OPENSEARCH_URL"), { namespace: required("LAWINDEX_NAMESPACE") });
let bm25: Bm25;

function lawsOf(state: string): Law[] {
  return readFileSync(join(corpora, `${state}.jsonl`), "utf8")
    .replace(/^\uFEFF/, "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Law);
}

before(async () => {
  process.env.LAWINDEX_CORPUS ??= join(corpora, `${Object.keys(questions)[0]}.jsonl`);
  const spec = (await import(pathToFileURL(join(required("LAWINDEX_SPEC_DIR"), "retrieve.ts")).href)) as { bm25: Bm25 };
  bm25 = spec.bm25;
});

describe("ClusterClient by words returns the spec's bm25() laws, in order", () => {
  for (const state of Object.keys(questions)) {
    test(state, async () => {
      const laws = lawsOf(state);
      let exact = 0;
      for (const question of questions[state]!) {
        const answer = await cluster.ask(state, question);
        const expected = bm25(laws, question);
        assert.deepEqual(answer.hits.map((hit) => hit.id), expected.map((law) => law.id), `${state}: ${JSON.stringify(question)}`);
        assert.deepEqual(answer.hits.map((hit) => [hit.kind, hit.law]), expected.map((law) => [law.kind, law.law]));
        assert.equal(answer.by, "words");
        exact += 1;
      }
      for (const question of questions[state]!.slice(0, 10)) {
        assert.deepEqual((await cluster.retrieve(state, question, { limit: 3 })).map((hit) => hit.id), bm25(laws, question, 3).map((law) => law.id));
      }
      console.log(`cluster client by words, ${state}: ${exact} of ${questions[state]!.length} exact`);
    });
  }
});

describe("ClusterClient's refusals", () => {
  test("a state that is not loaded is NotFound", async () => {
    await assert.rejects(cluster.ask("GU", "speed limit"), NotFound);
  });
  test("the fusion's parameters are for hybrid only", () => {
    assert.throws(() => lawindexQuery("q", { by: "meaning", rrfK: 60 }), /rrf_k: only hybrid takes it, not by meaning/);
    assert.deepEqual(lawindexQuery("q", { by: "hybrid", rrfK: 30, wordsWeight: 1, meaningWeight: 0.5 }).query, {
      lawindex: { question: "q", by: "hybrid", rrf_k: 30, words_weight: 1, meaning_weight: 0.5 },
    });
    assert.deepEqual(lawindexQuery("q").query, { lawindex: { question: "q" } });
  });
});
