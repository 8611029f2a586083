// A typed client of `lawindex serve`: the laws of a state that best answer a question, ranked exactly as
// the spec's bm25() ranks them, so a pipeline can call the service where it called bm25(laws, question)
// and not one answer changes. No dependency: Node 20's fetch.

import { type Way, RETRIEVED_LAWS, checkAsked } from "./request.js";

/** One asked word's part of one law's score; a hit's parts add up to its score. */
export interface ExplainPart {
  word: string;
  tf: number;
  df: number;
  idf: number;
  length: number;
  score: number;
}

/** Where each way ranked a hit (from 1) in its full ranking; a way that did not reach it is absent. */
export interface Ranks {
  words?: number;
  meaning?: number;
}

/** One law a question reached, with its exact score: BM25 by words, the cosine by meaning, RRF by hybrid. */
export interface Hit {
  id: string;
  kind: string;
  score: number;
  law: string;
  /** By meaning or hybrid only. */
  ranks?: Ranks;
  /** By meaning or hybrid only: the law's cosine with the question. */
  cosine?: number;
  explain?: ExplainPart[];
}

/** What `lawindex ask --json` prints for one question. */
export interface Answer {
  state: string;
  question: string;
  /** Absent for words (the default). */
  by?: Exclude<Way, "words">;
  /** By hybrid only: the k of the fusion. */
  rrf_k?: number;
  /** By hybrid only: each way's weight in the fusion (a part is weight / (rrf_k + rank)). */
  weights?: { words: number; meaning: number };
  /** words(question): the words that survived, in order. */
  words: string[];
  /** The corpus words they stand for (a typo, a compound), in scoring order. */
  terms: string[];
  /** The laws, best first. */
  hits: Hit[];
}

/** A row of a state's corpus file. */
export interface Law {
  id: string;
  kind: string;
  law: string;
  question: string;
  concept: string;
  family?: string;
  source?: string;
}

/** One loaded state, as `lawindex status --json` prints it. */
export interface StateStatus {
  state: string;
  alias: string;
  index: string;
  laws: number;
  ranked: number;
  process: number;
  documents: number;
  sha256: string;
  loaded_at: string;
}

/** A question of a batch that failed, in its place among the answers. */
export interface QuestionError {
  question: string;
  error: string;
  hint: string | null;
  status: number;
}

/** Whether an element of `askMany`'s result is a question that failed (else it is that question's Answer). */
export function isQuestionError(answered: Answer | QuestionError): answered is QuestionError {
  return "error" in answered && typeof answered.error === "string";
}

/** A refusal by the service: its status, and the CLI's own message and hint. */
export class LawindexError extends Error {
  override readonly name: string = "LawindexError";
  constructor(
    message: string,
    readonly status: number,
    readonly hint: string | null,
  ) {
    super(message);
  }
}

/** 400: not a state code, a question over 2,000 characters, a parameter out of range or not for its way (the
 * client refuses these itself, with the service's message, before any request: contract/request.json). */
export class BadRequest extends LawindexError {
  override readonly name = "BadRequest";
}

/** 404: no index for the state, or no such law or family. */
export class NotFound extends LawindexError {
  override readonly name = "NotFound";
}

/** 503: OpenSearch did not answer; try again after `retryAfter` seconds. */
export class Unavailable extends LawindexError {
  override readonly name = "Unavailable";
  constructor(
    message: string,
    status: number,
    hint: string | null,
    readonly retryAfter: number | null,
  ) {
    super(message, status, hint);
  }
}

/** 502 or 504: OpenSearch refused the request, or did not answer in time. */
export class UpstreamError extends LawindexError {
  override readonly name = "UpstreamError";
}

/** 501: by meaning or hybrid where the cluster has no k-NN plugin, or the state's index no vectors. */
export class NotImplemented extends LawindexError {
  override readonly name = "NotImplemented";
}

/** The service could not be reached at all (nothing listens, or the connection broke). */
export class ConnectionFailed extends LawindexError {
  override readonly name = "ConnectionFailed";
}

export interface ClientOptions {
  /** Milliseconds a request may take before it is abandoned (default 10,000). */
  timeoutMs?: number;
}

export interface AskOptions {
  /** How many laws at most, 1..100 (default RETRIEVED_LAWS). */
  limit?: number;
  /** Each word's part of each score. */
  explain?: boolean;
  /** words (default), meaning or hybrid. */
  by?: Way;
  /** The k of the fusion (by hybrid; the service's default, 5). */
  rrfK?: number;
  /** The words ranking's weight in the fusion (by hybrid; the service's default, 1). */
  wordsWeight?: number;
  /** The meaning ranking's weight in the fusion (by hybrid; the service's default, 4). */
  meaningWeight?: number;
  /** By meaning or hybrid: the question's own vector, from the embedder that made the state's own vectors
   * (docs/meaning.md); required for such a state, where lawindex cannot embed the question. */
  vector?: readonly number[];
}

/** A client of one `lawindex serve`, e.g. `new LawindexClient("http://127.0.0.1:8077")`. */
export class LawindexClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;

  constructor(baseUrl = "http://127.0.0.1:8077", options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The laws of `state` that best answer `question`, best first: the spec's bm25(laws, question, limit). */
  async retrieve(state: string, question: string, options: AskOptions = {}): Promise<Hit[]> {
    return (await this.ask(state, question, options)).hits;
  }

  /** The whole answer: the question's words, the terms they were expanded to, and the hits. */
  async ask(state: string, question: string, options: AskOptions = {}): Promise<Answer> {
    checkAsked(question, options);
    const query = new URLSearchParams({ q: question, limit: String(options.limit ?? RETRIEVED_LAWS) });
    if (options.explain) query.set("explain", "true");
    if (options.by !== undefined && options.by !== "words") query.set("by", options.by);
    if (options.rrfK !== undefined) query.set("rrf_k", String(options.rrfK));
    if (options.wordsWeight !== undefined) query.set("words_weight", String(options.wordsWeight));
    if (options.meaningWeight !== undefined) query.set("meaning_weight", String(options.meaningWeight));
    if (options.vector !== undefined) query.set("vector", JSON.stringify(options.vector));
    return this.request<Answer>(`/v1/states/${encodeURIComponent(state)}/ask?${query}`);
  }

  /**
   * Several questions in one request, answered in order: a question that fails is a QuestionError in its
   * place (`isQuestionError`), with the status it would have had alone, and the others are answered. Only a
   * refusal of the whole request throws (a bad state code or limit, over 1,000 questions, no service).
   */
  async askMany(
    state: string,
    questions: string[],
    options: AskOptions = {},
  ): Promise<(Answer | QuestionError)[]> {
    checkAsked("", options); // once for the batch: a question too long is an error in its place, as the service says
    const body = {
      questions,
      limit: options.limit ?? RETRIEVED_LAWS,
      explain: options.explain ?? false,
      ...(options.by !== undefined ? { by: options.by } : {}),
      ...(options.rrfK !== undefined ? { rrf_k: options.rrfK } : {}),
      ...(options.wordsWeight !== undefined ? { words_weight: options.wordsWeight } : {}),
      ...(options.meaningWeight !== undefined ? { meaning_weight: options.meaningWeight } : {}),
      ...(options.vector !== undefined ? { vector: options.vector } : {}),
    };
    const answered = await this.request<{ answers: (Answer | QuestionError)[] }>(
      `/v1/states/${encodeURIComponent(state)}/ask`,
      { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
    );
    return answered.answers;
  }

  /** The process rows of family `key`, in corpus order (a page row is reached by its family, never by words). */
  async family(state: string, key: string): Promise<Law[]> {
    const found = await this.request<{ laws: Law[] }>(
      `/v1/states/${encodeURIComponent(state)}/families/${encodeURIComponent(key)}`,
    );
    return found.laws;
  }

  /** One law by its id, any id: asked as `?id=`, since a URL's path loses a segment `..` or `.` (even as %2E). */
  async law(state: string, id: string): Promise<Law> {
    return this.request<Law>(`/v1/states/${encodeURIComponent(state)}/laws?${new URLSearchParams({ id })}`);
  }

  /** Every loaded state: alias, index, counts, corpus fingerprint, load time. */
  async states(): Promise<StateStatus[]> {
    return (await this.request<{ states: StateStatus[] }>("/v1/states")).states;
  }

  private async request<T>(path: string, init: RequestInit = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new ConnectionFailed(`lawindex serve did not answer at ${this.baseUrl}: ${cause}`, 0, "start it with `lawindex serve`");
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as T;
    let message = `lawindex serve answered ${response.status}`;
    let hint: string | null = null;
    try {
      const body = JSON.parse(text) as { error?: unknown; hint?: unknown };
      if (typeof body.error === "string") message = body.error;
      if (typeof body.hint === "string") hint = body.hint;
    } catch {
      // Not the service's JSON (a proxy's page): the status says what there is to say.
    }
    switch (response.status) {
      case 400:
        throw new BadRequest(message, 400, hint);
      case 404:
        throw new NotFound(message, 404, hint);
      case 503: {
        const after = Number(response.headers.get("retry-after"));
        throw new Unavailable(message, 503, hint, Number.isFinite(after) && after > 0 ? after : null);
      }
      case 501:
        throw new NotImplemented(message, 501, hint);
      case 502:
      case 504:
        throw new UpstreamError(message, response.status, hint);
      default:
        throw new LawindexError(message, response.status, hint);
    }
  }
}
export * from "./cluster.js";
export * from "./request.js";
export { CONTRACT } from "./contract.js";
