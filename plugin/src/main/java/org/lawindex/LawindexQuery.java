package org.lawindex;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;

/**
 * The spec's bm25() on one shard: the question's words (already analysed by the field's analyzer, which is
 * the spec's words()), spelled as the laws spell them, scored by {@link LawindexSimilarity}'s arithmetic and
 * ranked by {@link Ranking}, which computes every law's exact score when the weight is made.
 */
public final class LawindexQuery extends Query {
    private final String field;
    private final String orderField;
    private final List<String> words;
    private final LawindexSimilarity similarity;

    public LawindexQuery(String field, String orderField, List<String> words, LawindexSimilarity similarity) {
        this.field = Objects.requireNonNull(field);
        this.orderField = Objects.requireNonNull(orderField);
        this.words = List.copyOf(words);
        this.similarity = Objects.requireNonNull(similarity);
    }

    public List<String> words() {
        return words;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        return new LawindexWeight(this, ranking(searcher), boost);
    }

    /** The shard's exact words ranking for the question (hybrid's words part too: MeaningQuery). */
    Ranking ranking(IndexSearcher searcher) throws IOException {
        return Ranking.of(searcher.getIndexReader(), searcher.collectionStatistics(field), field, orderField, words,
            similarity);
    }

    @Override
    public void visit(QueryVisitor visitor) {
        if (visitor.acceptField(field)) {
            visitor.visitLeaf(this);
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
