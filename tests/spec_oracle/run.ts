// Asks the spec's own bm25 every question of a file (LAWINDEX_QUESTIONS, one JSON string a line) and
// prints, one JSON line a question, the words and the ids it returns.
import { readFileSync } from "node:fs";
import { LAWS } from "./corpus.js";
import { bm25, words } from "./retrieve.js";

const path = process.env.LAWINDEX_QUESTIONS;
if (path === undefined) throw new Error("LAWINDEX_QUESTIONS is not set");
for (const line of readFileSync(path, "utf8").split("\n")) {
  if (line === "") continue;
  const question = JSON.parse(line) as string;
  const ids = bm25(LAWS, question).map((law) => law.id);
  process.stdout.write(JSON.stringify({ words: words(question), ids }) + "\n");
}
