package org.lawindex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.QueryVisitor;

/**
 * The spec's bm25() on one shard: the question's words (already analysed by the field's analyzer, which is
 * the spec's words()), spelled as the laws spell them, scored by {@link LawindexSimilarity}'s arithmetic and
 * ranked by {@link Ranking}, which computes every law's exact score when the weight is made (its weight and
 * scorer are every lawindex query's: {@link RankedQuery}).
 *
 * <p>The expansion and the ranking run when the weight is made, in the query phase: there OpenSearch's
 * reader checks the task's cancellation and the request's {@code timeout} ({@link Work} calls through it as
 * it goes), and their memory is charged to the request breaker. The words found are kept on the query, so
 * that the highlighter (which visits this very query in the fetch phase) is told the terms it matched,
 * expanded words included, as a {@code match} query tells it its own.
 */
public final class LawindexQuery extends RankedQuery {
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

    /**
     * The shard's exact words ranking for the question (hybrid's words part too: MeaningQuery): the question
     * expanded against the reader's vocabulary (kept for the highlighter), every law scored, its memory charged
     * to the request breaker and its loops cancellable. Throws QueryPhase.TimeExceededException past the
     * request's timeout.
     */
    @Override
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
}
