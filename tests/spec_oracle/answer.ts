// The spec's own bm25 over a whole file of questions, as `lawindex ask STATE --from FILE --json` reads it:
// one question a line (LAWINDEX_QUESTIONS), line ends (LF or CRLF) dropped, blank lines skipped. Prints
// one JSON line a question, {"question", "ids"}: the laws the spec returns, best first. The benchmark
// (benchmarks/reference.py) times this whole process against lawindex's, on the same files.
import { readFileSync } from "node:fs";
import { LAWS } from "./corpus.js";
import { bm25 } from "./retrieve.js";

const path = process.env.LAWINDEX_QUESTIONS;
if (path === undefined) throw new Error("LAWINDEX_QUESTIONS is not set");
const out: string[] = [];
for (const raw of readFileSync(path, "utf8").split("\n")) {
  const question = raw.replace(/\r$/, "");
  if (question.trim() === "") continue;
  const ids = bm25(LAWS, question).map((law) => law.id);
  out.push(JSON.stringify({ question, ids }));
}
process.stdout.write(out.join("\n") + "\n");
