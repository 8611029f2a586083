package org.lawindex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
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
 * The spec's bm25() on one shard: the question's words (already analysed by the field's analyzer, which is
 * the spec's words()), spelled as the laws spell them, scored by {@link LawindexSimilarity}'s arithmetic and
 * ranked by {@link Ranking}, which computes every law's exact score when the weight is made.
 *
 * <p>The expansion and the ranking run when the weight is made, in the query phase: there OpenSearch's
 * reader checks the task's cancellation and the request's {@code timeout} ({@link Work} calls through it as
 * it goes), and their memory is charged to the request breaker. The words found are kept on the query, so
 * that the highlighter (which visits this very query in the fetch phase) is told the terms it matched,
 * expanded words included, as a {@code match} query tells it its own.
 */
public final class LawindexQuery extends Query {
    private final String field;
    private final String orderField;
    private final List<String> words;
    private final LawindexSimilarity similarity;
    private final Work.Breaker breaker;
    /** The words asked on the reader last searched (the highlighter's terms); not part of the query's identity. */
    private volatile Expanded expanded;

    public LawindexQuery(String field, String orderField, List<String> words, LawindexSimilarity similarity) {
        this(field, orderField, words, similarity, Work.UNLIMITED);
    }

    public LawindexQuery(String field, String orderField, List<String> words, LawindexSimilarity similarity,
                         Work.Breaker breaker) {
        this.field = Objects.requireNonNull(field);
        this.orderField = Objects.requireNonNull(orderField);
        this.words = List.copyOf(words);
        this.similarity = Objects.requireNonNull(similarity);
        this.breaker = breaker == null ? Work.UNLIMITED : breaker;
    }

    public List<String> words() {
        return words;
    }

    /** The words asked (the question's, as the laws spell them) on the reader last searched; null before. */
    public List<String> asked() {
        Expanded known = expanded;
        return known == null ? null : known.asked;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        try {
            return new LawindexWeight(this, ranking(searcher), boost);
        } catch (QueryPhase.TimeExceededException e) {
            // The request's timeout passed while the question was expanded or ranked. Thrown from here it would
            // fail the shard (500); a weight that matches nothing lets the search go on to its first leaf,
            // where OpenSearch checks the timeout again and answers as for any query: timed_out, no hits.
            return new MatchNoDocsQuery("lawindex: the request's timeout passed").createWeight(searcher, scoreMode, boost);
        }
    }

    /**
     * The shard's exact words ranking for the question (hybrid's words part too: MeaningQuery): the question
     * expanded against the reader's vocabulary (kept for the highlighter), every law scored, its memory charged
     * to the request breaker and its loops cancellable. Throws QueryPhase.TimeExceededException past the
     * request's timeout.
     */
    Ranking ranking(IndexSearcher searcher) throws IOException {
        IndexReader reader = searcher.getIndexReader();
        try (Work work = new Work(breaker, cancellation(reader, field))) {
            work.checkCancelled();
            Expanded known = expanded;
            if (known == null || known.reader != reader) {
                Vocabulary vocabulary = new Vocabulary(reader, field, orderField, work);
                List<String> asked = Expansion.asked(words, vocabulary);
                long[] counts = new long[asked.size()];
                for (int w = 0; w < counts.length; w++) {
                    counts[w] = vocabulary.count(asked.get(w));
                }
                known = new Expanded(reader, asked, counts);
                expanded = known;
            }
            return Ranking.of(reader, searcher.collectionStatistics(field), field, orderField, known.asked,
                known.counts, similarity, work);
        }
    }

    /**
     * A check of the search task's cancellation and the request's timeout. OpenSearch hands a query no handle
     * on its task; what it hands is a reader (ExitableDirectoryReader, on by search.low_level_cancellation, the
     * default) whose terms enums run those checks when made, and throw TaskCancelledException or the query
     * phase's TimeExceededException. On another reader this only makes an enum.
     */
    static Runnable cancellation(IndexReader reader, String field) {
        List<LeafReaderContext> leaves = reader.leaves();
        return () -> {
            try {
                for (LeafReaderContext leaf : leaves) {
                    Terms terms = leaf.reader().terms(field);
                    if (terms != null) {
                        terms.iterator();
                        return;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    @Override
    public void visit(QueryVisitor visitor) {
        if (!visitor.acceptField(field)) {
            return;
        }
        Expanded known = expanded;
        if (known == null || known.asked.isEmpty()) {
            visitor.visitLeaf(this);
            return;
        }
        Term[] terms = new Term[known.asked.size()];
        for (int w = 0; w < terms.length; w++) {
            terms[w] = new Term(field, known.asked.get(w));
        }
        visitor.consumeTerms(this, terms);
    }

    /** The question's words as the laws spell them on one reader, and how many live laws have each. */
    private static final class Expanded {
        final IndexReader reader;
        final List<String> asked;
        final long[] counts;

        Expanded(IndexReader reader, List<String> asked, long[] counts) {
            this.reader = reader;
            this.asked = List.copyOf(asked);
            this.counts = counts;
        }
    }

    @Override
    public String toString(String defaultField) {
        return "lawindex(" + (field.equals(defaultField) ? "" : field + ":") + words + ")";
    }

    @Override
    public boolean equals(Object other) {
        if (!sameClassAs(other)) {
            return false;
        }
        LawindexQuery that = (LawindexQuery) other;
        return field.equals(that.field) && orderField.equals(that.orderField) && words.equals(that.words)
            && similarity.equals(that.similarity);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), field, orderField, words, similarity);
    }

    private static final class LawindexWeight extends VersionedWeight {
        private final Ranking ranking;
        private final float boost;

        LawindexWeight(Query query, Ranking ranking, float boost) {
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
                    return new ListedScorer(weight, leaf, docs);
                }

                @Override
                public long cost() {
                    return docs.length;
                }
            };
        }

        @Override
        public Explanation explain(LeafReaderContext leaf, int doc) throws IOException {
            return ranking.explain(leaf, doc, boost);
        }

        @Override
        public boolean isCacheable(LeafReaderContext leaf) {
            // Its scores depend on the whole shard (N, n, the other laws' floats), not on one segment.
            return false;
        }

        private final class ListedScorer extends VersionedScorer {
            private final LeafReaderContext leaf;
            private final int[] docs;
            private final DocIdSetIterator iterator;
            private int at = -1;
            private float minCompetitive = 0f;

            ListedScorer(Weight weight, LeafReaderContext leaf, int[] docs) {
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
                        return competitive();
                    }

                    @Override
                    public int advance(int target) {
                        int found = java.util.Arrays.binarySearch(docs, Math.max(at + 1, 0), docs.length, target);
                        at = found >= 0 ? found : -found - 1;
                        return competitive();
                    }

                    @Override
                    public long cost() {
                        return docs.length;
                    }
                };
            }

            /** From `at` on, past the laws whose score cannot enter the collector's top hits any more. */
            private int competitive() {
                if (minCompetitive > 0) {
                    while (at < docs.length && ranking.score(leaf, docs[at]) * boost < minCompetitive) {
                        at++;
                    }
                }
                return iterator.docID();
            }

            @Override
            public void setMinCompetitiveScore(float minScore) {
                // TOP_SCORES (no total hit count asked for): the collector needs no law scored below this.
                minCompetitive = minScore;
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
