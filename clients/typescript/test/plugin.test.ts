// The lawindex plugin's query as any TypeScript program sends it: Node's own `fetch`, straight to
// OpenSearch, with no lawindex code (not this client, not `lawindex serve`) in the path. Its ids and order
// are held to the spec's own bm25() run in this same process over the same corpus files.
//
// Run by tests/integration/test_ts_client.py, which loads the corpora (on the plugin path: the node has
// the plugin), extracts the spec's TypeScript and writes the questions. The environment it sets:
//   OPENSEARCH_URL      the node
//   LAWINDEX_NAMESPACE  the corpora's namespace: a state's laws are served under `<namespace>-<state>`
//   LAWINDEX_SPEC_DIR   a folder holding the spec's retrieve.ts and corpus.ts
//   LAWINDEX_CORPORA    the folder of <STATE>.jsonl files that were loaded
//   LAWINDEX_QUESTIONS  a JSON file: { "<STATE>": ["question", ...] }
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run through tests/integration/test_ts_client.py)`);
  return value;
}

interface Law {
  id: string;
}
type Bm25 = (laws: Law[], question: string, limit?: number) => Law[];

const opensearch = required("OPENSEARCH_URL").replace(/\/+$/, "");
const namespace = required("LAWINDEX_NAMESPACE");
const corpora = required("LAWINDEX_CORPORA");
const questions = JSON.parse(readFileSync(required("LAWINDEX_QUESTIONS"), "utf8")) as Record<string, string[]>;
let bm25: Bm25;

// The laws of a state's file, read as the spec's corpus.js reads them.
function lawsOf(state: string): Law[] {
  return readFileSync(join(corpora, `${state}.jsonl`), "utf8")
    .replace(/^\uFEFF/, "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Law);
}

// The ids of the plugin's query, best first: one POST, as curl would send it.
async function pluginIds(state: string, question: string, size: number): Promise<string[]> {
  const response = await fetch(`${opensearch}/${namespace}-${state.toLowerCase()}/_search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ size, _source: ["id"], query: { lawindex: { question } } }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, `${state}: ${JSON.stringify(question)}: ${text.slice(0, 500)}`);
  const body = JSON.parse(text) as { hits: { hits: { _source: { id: string } }[] } };
  return body.hits.hits.map((hit) => hit._source.id);
}

before(async () => {
  // The spec's module reads LAWINDEX_CORPUS when imported (its LAWS, for its main()); bm25 takes the laws
  // it is given, so one import serves every state.
  process.env.LAWINDEX_CORPUS ??= join(corpora, `${Object.keys(questions)[0]}.jsonl`);
  const spec = (await import(pathToFileURL(join(required("LAWINDEX_SPEC_DIR"), "retrieve.ts")).href)) as { bm25: Bm25 };
  bm25 = spec.bm25;
});

describe("the raw lawindex query through fetch returns the spec's bm25() ids, in order", () => {
  for (const state of Object.keys(questions)) {
    test(state, async () => {
      const laws = lawsOf(state);
      const asked = questions[state]!;
      assert.ok(asked.length > 0);
      let exact = 0;
      for (const question of asked) {
        assert.deepEqual(await pluginIds(state, question, 8), bm25(laws, question).map((law) => law.id), `${state}: ${JSON.stringify(question)}`);
        exact += 1;
      }
      // Another size, on a few: the spec's third argument.
      for (const question of asked.slice(0, 10)) {
        assert.deepEqual(await pluginIds(state, question, 3), bm25(laws, question, 3).map((law) => law.id));
      }
      console.log(`plugin query via fetch, ${state}: ${exact} of ${asked.length} exact`);
    });
  }
});
