package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;
import org.opensearch.search.query.QueryPhase;

/**
 * The {@code lawindex} query by meaning or hybrid on one shard: {@link MeaningRanking} computed whole when the
 * weight is made (for hybrid, with the words ranking of {@code words}, the same query {@code by: words} runs),
 * then every ranked row handed to the collector with its float.
 *
 * <p>{@code explain} gives, per hit: the exact float64 score, the cosine, the meaning rank, and for hybrid the
 * words rank and BM25 sum where words reach the row (lawindex's Python reads them there: docs/plugin.md).
 */
final class MeaningQuery extends Query {
    private final String question;
    private final int[] grid;
    private final String orderField;
    private final boolean hybrid;
    private final LawindexQuery words;
    private final int rrfK;
    private final double wordsWeight;
    private final double meaningWeight;

    /** The request's breaker (what this question holds while it ranks) and the fielddata breaker (each segment's
     * vectors, kept per segment core: GridVectors); neither part of the query's identity. */
    private final Work.Breaker breaker;
    private final Work.Breaker cacheBreaker;

    /** By meaning, or hybrid with {@code words}: the words query of the same question (null: words reach nothing). */
    MeaningQuery(String question, int[] grid, String orderField, boolean hybrid, LawindexQuery words, int rrfK,
                 double wordsWeight, double meaningWeight, Work.Breaker breaker, Work.Breaker cacheBreaker) {
        this.hybrid = hybrid;
        this.question = Objects.requireNonNull(question);
        this.grid = grid.clone();
        this.orderField = Objects.requireNonNull(orderField);
        this.words = words;
        this.rrfK = rrfK;
        this.wordsWeight = wordsWeight;
        this.meaningWeight = meaningWeight;
        this.breaker = breaker == null ? Work.UNLIMITED : breaker;
        this.cacheBreaker = cacheBreaker == null ? Work.UNLIMITED : cacheBreaker;
    }

    /** The ranking last made, and the reader it was made of (explain asks for a weight once per hit). */
    private Object[] made;

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        try {
            return new MeaningWeight(this, ranking(searcher), boost);
        } catch (QueryPhase.TimeExceededException e) {
            // As LawindexQuery: past the request's timeout, a weight that matches nothing, so the search answers
            // timed_out with no hits rather than failing the shard.
            return new MatchNoDocsQuery("lawindex: the request's timeout passed").createWeight(searcher, scoreMode, boost);
        }
    }

    /**
     * The ranking of the searcher's reader: made once per reader, so that the fetch phase's explain of each hit
     * (a weight per hit: 6,000 hits of a 6,000-row state were 6,000 rankings, 60 s) reuses the query phase's.
     */
    MeaningRanking ranking(IndexSearcher searcher) throws IOException {
        IndexReader reader = searcher.getIndexReader();
        Object[] last;
        synchronized (this) {
            last = made;
        }
        if (last != null && last[0] == reader) {
            return (MeaningRanking) last[1];
        }
        Ranking byWords = words == null ? null : words.ranking(searcher);
        MeaningRanking ranking;
        // Cancellation and the timeout are checked through OpenSearch's reader as the words query checks them,
        // on the terms of _id (a field every document has).
        try (Work work = new Work(breaker, LawindexQuery.cancellation(reader, "_id"))) {
            ranking = MeaningRanking.of(reader, orderField, grid, hybrid, byWords, rrfK, wordsWeight, meaningWeight,
                cacheBreaker, work);
        }
        synchronized (this) {
            made = new Object[] {reader, ranking};
        }
        return ranking;
    }

    @Override
    public void visit(QueryVisitor visitor) {
        visitor.visitLeaf(this);
    }

    @Override
    public String toString(String defaultField) {
        return "lawindex(" + (!hybrid ? "meaning" : "hybrid k=" + rrfK + " words=" + wordsWeight + " meaning="
            + meaningWeight) + ":" + question + ")";
    }

    @Override
    public boolean equals(Object other) {
        if (!sameClassAs(other)) {
            return false;
        }
        MeaningQuery that = (MeaningQuery) other;
        return question.equals(that.question) && Arrays.equals(grid, that.grid) && orderField.equals(that.orderField)
            && hybrid == that.hybrid && Objects.equals(words, that.words) && rrfK == that.rrfK
            && Double.compare(wordsWeight, that.wordsWeight) == 0 && Double.compare(meaningWeight, that.meaningWeight) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), question, Arrays.hashCode(grid), orderField, hybrid, words, rrfK, wordsWeight, meaningWeight);
    }

    private static final class MeaningWeight extends VersionedWeight {
        private final MeaningRanking ranking;
        private final float boost;

        MeaningWeight(Query query, MeaningRanking ranking, float boost) {
            super(query);
            this.ranking = ranking;
            this.boost = boost;
        }

        @Override
        public ScorerSupplier scorerSupplier(LeafReaderContext leaf) {
            int[] docs = ranking.docs(leaf.ord);
            if (docs.length == 0) {
                return null;
            }
            Weight weight = this;
            return new ScorerSupplier() {
                @Override
                public Scorer get(long leadCost) {
                    return new RowScorer(weight, leaf, docs);
                }

                @Override
                public long cost() {
                    return docs.length;
                }
            };
        }

        @Override
        public boolean isCacheable(LeafReaderContext leaf) {
            return false;  // its scores depend on every row of the shard
        }

        @Override
        public Explanation explain(LeafReaderContext leaf, int doc) {
            int global = leaf.docBase + doc;
            if (!ranking.matches(global)) {
                return Explanation.noMatch(ranking.hybrid ? "neither way reaches the row" : "the row has no vector ["
                    + MeaningRanking.GRID_FIELD + "], or the question has no tokens");
            }
            float score = ranking.score(leaf, doc) * boost;
            Explanation cosine = Explanation.match(ranking.cosine(global),
                "cosine: the exact dot product of the grid vectors (long, times 2^-40)");
            Explanation meaningRank = Explanation.match(ranking.meaningRank(global), "meaning rank");
            if (!ranking.hybrid) {
                return Explanation.match(score, "lawindex by meaning: the cosine " + ranking.exact(global)
                    + " (float64) as a float, kept above the rows ranked below it", 
                    Explanation.match(ranking.exact(global), "exact score"), cosine, meaningRank);
            }
            int w = ranking.wordsRank(global);
            Explanation exact = Explanation.match(ranking.exact(global), "exact score");
            String how = "lawindex hybrid: 0.0 + " + ranking.wordsWeight + " / (" + ranking.rrfK + " + words rank) + "
                + ranking.meaningWeight + " / (" + ranking.rrfK + " + meaning rank), a part for each way that reaches"
                + " the row, = " + ranking.exact(global) + " (float64), as a float kept above the rows ranked below it";
            if (w == 0) {
                return Explanation.match(score, how, exact, cosine, meaningRank);
            }
            return Explanation.match(score, how, exact, cosine, meaningRank, Explanation.match(w, "words rank"),
                Explanation.match(ranking.words.sum(global), "words score: the spec's BM25 (float64)"));
        }

        private final class RowScorer extends VersionedScorer {
            private final LeafReaderContext leaf;
            private final int[] docs;
            private final DocIdSetIterator iterator;
            private int at = -1;

            RowScorer(Weight weight, LeafReaderContext leaf, int[] docs) {
                super(weight);
                this.leaf = leaf;
                this.docs = docs;
                this.iterator = new DocIdSetIterator() {
                    @Override
                    public int docID() {
                        return at < 0 ? -1 : at >= docs.length ? NO_MORE_DOCS : docs[at];
                    }

                    @Override
                    public int nextDoc() {
                        at++;
                        return docID();
                    }

                    @Override
                    public int advance(int target) {
                        int found = Arrays.binarySearch(docs, Math.max(at + 1, 0), docs.length, target);
                        at = found >= 0 ? found : -found - 1;
                        return docID();
                    }

                    @Override
                    public long cost() {
                        return docs.length;
                    }
                };
            }

            @Override
            public int docID() {
                return iterator.docID();
            }

            @Override
            public DocIdSetIterator iterator() {
                return iterator;
            }

            @Override
            public float getMaxScore(int upTo) {
                return ranking.maxScore() * boost;
            }

            @Override
            public float score() {
                float score = ranking.score(leaf, docID());
                return boost == 1f ? score : score * boost;
            }
        }
    }
}
