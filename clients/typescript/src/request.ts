// A question's parameters checked before it is sent, by the one rule set every path reads (contract/request.json,
// as src/contract.ts): a parameter the way does not take is refused, never ignored, and every refusal is a
// BadRequest with the message serve and the CLI give (a number written as String(number) writes it).
import { CONTRACT } from "./contract.js";
import { BadRequest } from "./index.js";

/** The ways a question reaches rows: words (the spec's BM25, the default), meaning, hybrid. */
export type Way = (typeof CONTRACT.ways)[number];
export const WAYS: readonly Way[] = CONTRACT.ways;

/** How many laws a question is answered from, as the spec's RETRIEVED_LAWS, and the fusion's defaults. */
export const RETRIEVED_LAWS: number = CONTRACT.parameters.limit.default;
export const RRF_K: number = CONTRACT.parameters.rrf_k.default;
export const WORDS_WEIGHT: number = CONTRACT.parameters.words_weight.default;
export const MEANING_WEIGHT: number = CONTRACT.parameters.meaning_weight.default;

/** A question's parameters as the client's options name them. */
export interface Asked {
  limit?: number;
  by?: string;
  rrfK?: number;
  wordsWeight?: number;
  meaningWeight?: number;
  /** By meaning or hybrid only: the question's own vector, from the embedder that made the state's own vectors. */
  vector?: readonly number[];
}

type Kind = keyof typeof CONTRACT.messages;
type Fusion = "rrf_k" | "words_weight" | "meaning_weight";
const FUSION: readonly (readonly [Fusion, "rrfK" | "wordsWeight" | "meaningWeight"])[] = [
  ["rrf_k", "rrfK"],
  ["words_weight", "wordsWeight"],
  ["meaning_weight", "meaningWeight"],
];

function refusal(kind: Kind, fields: Record<string, unknown> = {}): BadRequest {
  const text = CONTRACT.messages[kind].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in fields ? String(fields[name]) : whole,
  );
  return new BadRequest(text, 400, null);
}

function integer(name: "limit" | "rrf_k", value: unknown): void {
  const rule = CONTRACT.parameters[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < rule.min || value > rule.max) {
    throw refusal("integer", { name, min: rule.min, max: rule.max, value });
  }
}

function weight(name: "words_weight" | "meaning_weight", value: unknown): number {
  const rule = CONTRACT.parameters[name];
  if (typeof value !== "number" || !(value === 0 || (value >= rule.min && value <= rule.max))) {
    throw refusal("weight", { name, min: rule.min, max: rule.max, value });
  }
  return value;
}

/** The way asked (words when absent); BadRequest with the contract's message for a question or a parameter that
 * every path refuses: a way that is none, a parameter its way does not take, a value out of its range. */
export function checkAsked(question: string, asked: Asked): Way {
  const by = asked.by ?? CONTRACT.default_way;
  if (!(WAYS as readonly string[]).includes(by)) throw refusal("way", { value: by });
  const way = by as Way;
  for (const [name, option] of FUSION) {
    const takers: readonly string[] = CONTRACT.parameters[name].ways;
    if (asked[option] !== undefined && !takers.includes(way)) {
      throw refusal("not_for_way", { name, way, ways: takers.join(", ") });
    }
  }
  const takers: readonly string[] = CONTRACT.parameters.vector.ways;
  if (asked.vector !== undefined && !takers.includes(way)) {
    throw refusal("not_for_way", { name: "vector", way, ways: takers.join(", ") });
  }
  if (way === "hybrid") {
    if (asked.rrfK !== undefined) integer("rrf_k", asked.rrfK);
    const words = asked.wordsWeight === undefined ? WORDS_WEIGHT : weight("words_weight", asked.wordsWeight);
    const meaning = asked.meaningWeight === undefined ? MEANING_WEIGHT : weight("meaning_weight", asked.meaningWeight);
    if (words === 0 && meaning === 0) throw refusal("weights_both_zero");
  }
  if (asked.vector !== undefined) checkVector(asked.vector);
  const characters = [...question].length; // code points, as Python's len() counts them
  const most = CONTRACT.parameters.question.max_chars;
  if (characters > most) throw refusal("question_too_long", { value: characters, max: most });
  if (asked.limit !== undefined) integer("limit", asked.limit);
  return way;
}

/** A question's own vector checked by the contract's rules (as lawindex's request.checked_vector): an array of
 * min_length to max_length numbers, each finite and within max_abs (so no square overflows), the largest at least
 * min_largest; BadRequest with the contract's message otherwise. */
export function checkVector(vector: unknown): void {
  const rule = CONTRACT.parameters.vector;
  if (!Array.isArray(vector)) throw refusal("vector_type");
  if (vector.length < rule.min_length || vector.length > rule.max_length) {
    throw refusal("vector_length", { value: vector.length, min: rule.min_length, max: rule.max_length });
  }
  let largest = 0;
  for (let index = 0; index < vector.length; index++) {
    const value: unknown = vector[index];
    if (typeof value !== "number") throw refusal("vector_number", { index });
    if (!(value >= -rule.max_abs && value <= rule.max_abs)) throw refusal("vector_range", { index, value, max: rule.max_abs });
    largest = Math.max(largest, Math.abs(value));
  }
  if (largest < rule.min_largest) throw refusal("vector_zero", { min: rule.min_largest });
}

/** False for a question with nothing to embed (no [a-z0-9] after lowercasing, the spec's alphabet): it is near no row, by
 * meaning and hybrid, on every path (docs/meaning.md). */
export function hasMeaning(question: string): boolean {
  return /[a-z0-9]/.test(question.toLowerCase());
}
