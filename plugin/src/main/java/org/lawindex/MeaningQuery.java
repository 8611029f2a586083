package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.QueryVisitor;

/**
 * The {@code lawindex} query by meaning or hybrid on one shard: {@link MeaningRanking} computed whole when the
 * weight is made (for hybrid, with the words ranking of {@code words}, the same query {@code by: words} runs),
 * then every ranked row handed to the collector with its float by the weight and scorer every lawindex query
 * shares ({@link RankedQuery}).
 *
 * <p>{@code explain} gives, per hit: the exact float64 score, the cosine, the meaning rank, and for hybrid the
 * words rank and BM25 sum where words reach the row (lawindex's Python reads them there: docs/plugin.md).
 */
final class MeaningQuery extends RankedQuery {
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

    /** The shard's ranking by meaning or hybrid (for hybrid, with the words query's ranking of the same reader). */
    @Override
    MeaningRanking ranking(IndexSearcher searcher) throws IOException {
        IndexReader reader = searcher.getIndexReader();
        Ranking byWords = words == null ? null : words.ranking(searcher);
        // Cancellation and the timeout are checked through OpenSearch's reader as the words query checks them,
        // on the terms of _id (a field every document has).
        try (Work work = new Work(breaker, LawindexQuery.cancellation(reader, "_id"))) {
            return MeaningRanking.of(reader, orderField, grid, hybrid, byWords, new MeaningRanking.Rrf(rrfK, wordsWeight,
                meaningWeight), cacheBreaker, work);
        }
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
}
