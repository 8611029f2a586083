// The spec's `corpus.js`, which the chapter does not show: the laws of one JSONL file, named by the
// environment (LAWINDEX_CORPUS), in line order. Only what retrieve.ts reads of a law is typed.
import { readFileSync } from "node:fs";

export interface Law {
  id: string;
  kind: string;
  law: string;
  question: string;
  concept: string;
}

const path = process.env.LAWINDEX_CORPUS;
if (path === undefined) throw new Error("LAWINDEX_CORPUS is not set");

export const LAWS: Law[] = readFileSync(path, "utf8")
  .replace(/^\uFEFF/, "")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as Law);
