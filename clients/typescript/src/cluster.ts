// The cluster asked directly, with no `lawindex serve` in the path: the lawindex plugin's query, one POST to a
// state's alias, for every way (by words, by meaning, hybrid: docs/fusion.md's contract). Node 20's fetch, no
// dependency; a pipeline that has its own opensearch-js client sends `lawindexQuery(...)` as the body of its
// own `client.search({ index: alias(state), body })` and reads the hits with `hitsOf`.
import { type Hit, LawindexError, BadRequest, NotFound, UpstreamError, ConnectionFailed } from "./index.js";
import { MEANING_WEIGHT, RETRIEVED_LAWS, RRF_K, type Way, WORDS_WEIGHT, checkAsked } from "./request.js";

/** How a question is asked of the cluster. */
export interface ClusterAskOptions {
  /** How many laws at most (default RETRIEVED_LAWS). */
  limit?: number;
  /** words (default), meaning or hybrid. */
  by?: Way;
  /** By hybrid only: the fusion's k, 1..10,000 (the plugin's default when absent). */
  rrfK?: number;
  /** By hybrid only: the words part's weight (0, or 1e-6 to 1e6). */
  wordsWeight?: number;
  /** By hybrid only: the meaning part's weight (0, or 1e-6 to 1e6). */
  meaningWeight?: number;
  /** By meaning or hybrid: the question's own vector (the plugin puts it on the grid as it does a row's); required
   * by an index of a user's own vectors (`questions: client`), whose length it must have. */
  vector?: readonly number[];
}

/** What the cluster answers for one question: the hits, typed as the service's (`score` is the engine's
 * `_score`, a float32: BM25 by words, the cosine by meaning, the fused score by hybrid). */
export interface ClusterAnswer {
  state: string;
  question: string;
  by: Way;
  /** By hybrid only. */
  rrf_k?: number;
  /** By hybrid only: each way's weight in the fusion. */
  weights?: { words: number; meaning: number };
  hits: Hit[];
}

export interface ClusterOptions {
  /** lawindex's namespace: a state is served under `<namespace>-<state>` (default "lawindex"). */
  namespace?: string;
  /** Headers sent with every request, e.g. `{ authorization: "Basic ..." }` for a secured cluster. */
  headers?: Record<string, string>;
  /** Milliseconds a request may take (default 10,000). */
  timeoutMs?: number;
}

/** The alias a state's laws are served under: `lawindex-tx`. */
export function alias(state: string, namespace = "lawindex"): string {
  if (!/^[A-Za-z]{2}$/.test(state)) throw new BadRequest(`not a state code: ${JSON.stringify(state)}`, 400, null);
  return `${namespace}-${state.toLowerCase()}`;
}

/** The `_search` body that asks the plugin: `{"lawindex": {"question", "by", ...}}`, the hits' id, kind and law. */
export function lawindexQuery(question: string, options: ClusterAskOptions = {}): Record<string, unknown> {
  const by = checkAsked(question, options); // the contract's refusals (src/request.ts), before any request
  const query: Record<string, unknown> = { question };
  if (by !== "words") query.by = by;
  if (by === "hybrid") {
    if (options.rrfK !== undefined) query.rrf_k = options.rrfK;
    if (options.wordsWeight !== undefined) query.words_weight = options.wordsWeight;
    if (options.meaningWeight !== undefined) query.meaning_weight = options.meaningWeight;
  }
  if (options.vector !== undefined) query.vector = [...options.vector];
  return { size: options.limit ?? RETRIEVED_LAWS, _source: ["id", "kind", "law"], query: { lawindex: query } };
}

interface SearchHit {
  _score: number | null;
  _source: { id: string; kind: string; law: string };
}

/** The hits of a `_search` answer to `lawindexQuery`, best first. */
export function hitsOf(body: { hits: { hits: SearchHit[] } }): Hit[] {
  return body.hits.hits.map((hit) => ({ id: hit._source.id, kind: hit._source.kind, law: hit._source.law, score: hit._score ?? 0 }));
}

/** A client of the cluster itself, e.g. `new ClusterClient("http://127.0.0.1:9200")`. */
export class ClusterClient {
  readonly url: string;
  readonly namespace: string;
  readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(url = "http://127.0.0.1:9200", options: ClusterOptions = {}) {
    this.url = url.replace(/\/+$/, "");
    this.namespace = options.namespace ?? "lawindex";
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.headers = options.headers ?? {};
  }

  /** The laws of `state` that best answer `question`, best first, by the way asked. */
  async retrieve(state: string, question: string, options: ClusterAskOptions = {}): Promise<Hit[]> {
    return (await this.ask(state, question, options)).hits;
  }

  /** The answer: the hits, with the way and (by hybrid) the fusion's k. */
  async ask(state: string, question: string, options: ClusterAskOptions = {}): Promise<ClusterAnswer> {
    const by = options.by ?? "words";
    const body = lawindexQuery(question, options);
    const found = await this.search(alias(state, this.namespace), body);
    return {
      state: state.toUpperCase(),
      question,
      by,
      ...(by === "hybrid"
        ? {
            rrf_k: options.rrfK ?? RRF_K,
            weights: { words: options.wordsWeight ?? WORDS_WEIGHT, meaning: options.meaningWeight ?? MEANING_WEIGHT },
          }
        : {}),
      hits: hitsOf(found),
    };
  }

  private async search(index: string, body: Record<string, unknown>): Promise<{ hits: { hits: SearchHit[] } }> {
    let response: Response;
    try {
      response = await fetch(`${this.url}/${encodeURIComponent(index)}/_search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...this.headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new ConnectionFailed(`OpenSearch did not answer at ${this.url}: ${cause}`, 0, null);
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as { hits: { hits: SearchHit[] } };
    let message = `OpenSearch answered ${response.status}`;
    try {
      const error = (JSON.parse(text) as { error?: { reason?: unknown; root_cause?: { reason?: unknown }[] } }).error;
      const reason = error?.root_cause?.[0]?.reason ?? error?.reason;
      if (typeof reason === "string") message = `${message}: ${reason}`;
    } catch {
      // Not OpenSearch's JSON (a proxy's page): the status says what there is to say.
    }
    if (response.status === 404) throw new NotFound(message, 404, `no index behind ${index}: \`lawindex load\` the state`);
    if (response.status === 400) throw new BadRequest(message, 400, null);
    if (response.status >= 500) throw new UpstreamError(message, response.status, null);
    throw new LawindexError(message, response.status, null);
  }
}
