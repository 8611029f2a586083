// The client against a real `lawindex serve` (started here) over a real OpenSearch, held to the spec's own
// bm25() run in this same process over the same corpus files: the same ids, in the same order.
//
// Run by tests/integration/test_ts_client.py, which loads the corpora, extracts the spec's TypeScript and
// writes the questions. The environment it sets:
//   LAWINDEX_COMMAND    JSON array: the argv of `lawindex` (e.g. ["/venv/bin/python", "-c", "..."])
//   LAWINDEX_SERVE_PORT the port to serve on
//   OPENSEARCH_URL, LAWINDEX_NAMESPACE   where the corpora are loaded
//   LAWINDEX_SPEC_DIR   a folder holding the spec's retrieve.ts and corpus.ts
//   LAWINDEX_CORPORA    the folder of <STATE>.jsonl files that were loaded
//   LAWINDEX_QUESTIONS  a JSON file: { "<STATE>": ["question", ...] }
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import {
  BadRequest,
  ConnectionFailed,
  LawindexClient,
  NotFound,
  NotImplemented,
  RETRIEVED_LAWS,
  isQuestionError,
  type Answer,
  type Law,
  type QuestionError,
} from "../src/index.ts";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set (run through tests/integration/test_ts_client.py)`);
  return value;
}

const corpora = required("LAWINDEX_CORPORA");
const questions = JSON.parse(readFileSync(required("LAWINDEX_QUESTIONS"), "utf8")) as Record<string, string[]>;
const port = Number(required("LAWINDEX_SERVE_PORT"));
const url = `http://127.0.0.1:${port}`;
const client = new LawindexClient(url, { timeoutMs: 60_000 });

// The laws of a state's file, read as the spec's corpus.js reads them.
function lawsOf(state: string): (Law & { family?: string })[] {
  return readFileSync(join(corpora, `${state}.jsonl`), "utf8")
    .replace(/^\uFEFF/, "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Law);
}

type Bm25 = (laws: Law[], question: string, limit?: number) => Law[];
let bm25: Bm25;
let server: ChildProcess;
let serverLog = "";

async function ready(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`lawindex serve exited ${server.exitCode}: ${serverLog}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`lawindex serve was not ready in 60 s: ${serverLog}`);
}

before(async () => {
  // The spec's module reads LAWINDEX_CORPUS when imported (its LAWS, for its main()); bm25 takes the laws
  // it is given, so one import serves every state.
  process.env.LAWINDEX_CORPUS ??= join(corpora, `${Object.keys(questions)[0]}.jsonl`);
  const spec = (await import(pathToFileURL(join(required("LAWINDEX_SPEC_DIR"), "retrieve.ts")).href)) as { bm25: Bm25 };
  bm25 = spec.bm25;
  const [command, ...args] = JSON.parse(required("LAWINDEX_COMMAND")) as string[];
  server = spawn(command!, [...args, "serve", "--port", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  server.stderr!.on("data", (chunk: Buffer) => (serverLog += chunk.toString()));
  await ready();
});

after(async () => {
  if (server.exitCode !== null) return;
  const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
  server.kill("SIGTERM");
  assert.equal(await exited, 0, `lawindex serve did not exit 0 on SIGTERM: ${serverLog}`);
});

describe("retrieve() returns the spec's bm25() ids, in order", () => {
  for (const state of Object.keys(questions)) {
    test(state, async () => {
      const laws = lawsOf(state);
      const asked = questions[state]!;
      assert.ok(asked.length > 0);
      for (const question of asked) {
        const expected = bm25(laws, question).map((law) => law.id);
        const got = (await client.retrieve(state, question)).map((hit) => hit.id);
        assert.deepEqual(got, expected, `${state}: ${JSON.stringify(question)}`);
      }
      // Another limit, on a few: the spec's third argument.
      for (const question of asked.slice(0, 10)) {
        assert.deepEqual(
          (await client.retrieve(state, question, { limit: 3 })).map((hit) => hit.id),
          bm25(laws, question, 3).map((law) => law.id),
        );
      }
    });
  }
});

test("askMany answers in order, a failed question in its place", async () => {
  const [state] = Object.keys(questions) as [string];
  const laws = lawsOf(state);
  const asked = [...questions[state]!.slice(0, 5), "x".repeat(2001), ""];
  const answers = await client.askMany(state, asked);
  assert.equal(answers.length, asked.length);
  answers.forEach((answer, number) => {
    const question = asked[number]!;
    if (question.length > 2000) {
      const failed = answer as QuestionError;
      assert.equal(failed.status, 400);
      assert.equal(failed.error, "question: 2001 characters, more than the 2000 accepted");
      return;
    }
    assert.ok("hits" in answer);
    assert.deepEqual(
      answer.hits.map((hit) => hit.id),
      bm25(laws, question, RETRIEVED_LAWS).map((law) => law.id),
    );
  });
});

test("askMany answers a lone surrogate as ask() does, and fails one question in its place", async () => {
  const [state] = Object.keys(questions) as [string];
  // JSON.stringify writes a lone surrogate as `\ud800`; a GET's URLSearchParams makes it U+FFFD. Before, the
  // batch was a 500 (the answer could not be encoded) and askMany threw a bare LawindexError.
  const asked = ["school\ud800bus", "fire hydrant", "a".repeat(2001), "\udc00 headlights \ud83d"];
  const answers = await client.askMany(state, asked);
  assert.equal(answers.length, asked.length);
  for (const number of [0, 1, 3]) {
    const answer = answers[number]!;
    assert.ok(!isQuestionError(answer), JSON.stringify(answer));
    assert.deepEqual(answer, await client.ask(state, asked[number]!));
    assert.equal(answer.question, asked[number]!.replace(/[\ud800-\udfff]/gu, "\ufffd"));
  }
  const failed = answers[2]!;
  assert.ok(isQuestionError(failed));
  assert.equal(failed.status, 400);
});

test("law() fetches a law whose id a URL path would normalise away", async () => {
  const odd = process.env.LAWINDEX_ODD_IDS;
  assert.ok(odd, "LAWINDEX_ODD_IDS is not set (run through tests/integration/test_ts_client.py)");
  const [state, file] = odd.split("=") as [string, string];
  const laws = readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Law);
  assert.ok(laws.some((law) => law.id === ".."));
  for (const law of laws) assert.deepEqual(await client.law(state, law.id), law);
});

test("law() is the corpus line; family() the family's process rows in corpus order", async () => {
  for (const state of Object.keys(questions)) {
    const laws = lawsOf(state);
    for (const law of [laws[0]!, laws[laws.length - 1]!]) assert.deepEqual(await client.law(state, law.id), law);
    for (const key of new Set(laws.flatMap((law) => (law.family ? [law.family] : [])))) {
      const rows = laws.filter((law) => law.kind === "process" && law.family === key);
      assert.deepEqual(await client.family(state, key), rows);
    }
  }
});

test("refusals are typed errors carrying the service's message", async () => {
  await assert.rejects(client.retrieve("ZZ", "fire hydrant"), (error: unknown) => {
    assert.ok(error instanceof BadRequest);
    assert.equal(error.status, 400);
    assert.equal(error.message, "not a state code: 'ZZ'");
    assert.equal(error.hint, "use a USPS code such as TX, MD or DC");
    return true;
  });
  await assert.rejects(client.retrieve("TX", "a".repeat(2001)), BadRequest);
  await assert.rejects(client.retrieve("TX", "fire", { limit: 0 }), /^BadRequest: limit: must be an integer from 1 to 100, not 0$/);
  await assert.rejects(client.retrieve("WY", "fire hydrant"), (error: unknown) => {
    assert.ok(error instanceof NotFound);
    assert.match(error.message, /^no index for WY: nothing is loaded under /);
    return true;
  });
  const [state] = Object.keys(questions) as [string];
  await assert.rejects(client.law(state, "NO-SUCH-LAW"), (error: unknown) => {
    assert.ok(error instanceof NotFound);
    assert.equal(error.message, `${state} has no law 'NO-SUCH-LAW'`);
    return true;
  });
  await assert.rejects(client.family(state, "no-such-family"), NotFound);
  await assert.rejects(new LawindexClient("http://127.0.0.1:9").retrieve("TX", "x"), ConnectionFailed);
});

// By meaning and hybrid the service answers what the in-process reference engine answers (`lawindex ask
// --engine reference --by ...`), ids, order and ranks; on a node without the k-NN plugin (the 2.19.x min
// distributions take none: docs/meaning.md) every such question is a NotImplemented naming it, by design.
test("by meaning and hybrid: the reference engine's answers, or NotImplemented without k-NN", async () => {
  const [command, ...args] = JSON.parse(required("LAWINDEX_COMMAND")) as string[];
  const [state] = Object.keys(questions) as [string];
  const asked = questions[state]!.slice(0, 6);
  const plugins = await (await fetch(`${required("OPENSEARCH_URL")}/_cat/plugins?h=component`)).text();
  const withoutKnn = !plugins.split("\n").includes("opensearch-knn");
  // The default pin's local node always has it: `lawindex opensearch start` installs it.
  if ((process.env.LAWINDEX_OPENSEARCH_VERSION ?? "3.6.0") === "3.6.0") assert.ok(!withoutKnn, "no k-NN on 3.6.0");
  for (const by of ["meaning", "hybrid"] as const) {
    const reference = spawnSync(
      command!,
      [...args, "ask", state, "--from", "-", "--json", "--by", by, "--engine", "reference", "--corpora", corpora],
      { input: asked.join("\n") + "\n", encoding: "utf8" },
    );
    assert.equal(reference.status, 0, reference.stderr);
    const expected = reference.stdout.trim().split("\n").map((line) => JSON.parse(line) as Answer);
    for (const [number, question] of asked.entries()) {
      if (withoutKnn) {
        await assert.rejects(client.ask(state, question, { by }), (error: unknown) => {
          assert.ok(error instanceof NotImplemented);
          assert.equal(error.status, 501);
          assert.match(error.message, /has no k-NN plugin \(opensearch-knn\)/);
          return true;
        });
        continue;
      }
      const got = await client.ask(state, question, { by });
      assert.equal(got.by, by);
      assert.deepEqual(
        got.hits.map((hit) => [hit.id, hit.ranks, hit.cosine]),
        expected[number]!.hits.map((hit) => [hit.id, hit.ranks, hit.cosine]),
        `${state} by ${by}: ${JSON.stringify(question)}`,
      );
    }
  }
});
