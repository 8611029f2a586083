package org.lawindex;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import org.apache.lucene.index.FieldInvertState;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.similarities.Similarity;

/**
 * {@code lawindex_bm25}: the spec's BM25 as a Lucene similarity. The norm is the field's exact length in
 * words (Lucene's own BM25 keeps one byte, SmallFloat, exact only to 40 words); each term is scored in
 * float64 by {@link Bm25} from N and the average length the loader writes as index settings (the spec's N
 * counts ranked laws whose words are all stopwords, which have no field in Lucene, so Lucene's own doc
 * count is not the spec's), and handed to Lucene as a float.
 *
 * <p>Settings ({@code index.similarity.NAME.*}): {@code k1} (1.2), {@code b} (0.75), {@code ranked} (the
 * spec's N; default Lucene's doc count of the field) and {@code average} (the spec's average length,
 * written as Python's repr so that Double.parseDouble gives the same double; default Lucene's total term
 * count over its doc count).
 */
public final class LawindexSimilarity extends Similarity {
    public static final String TYPE = "lawindex_bm25";
    private static final Set<String> SETTINGS = Set.of("type", "k1", "b", "ranked", "average");

    private final double k1;
    private final double b;
    private final Long ranked;
    private final Double average;

    public LawindexSimilarity(double k1, double b, Long ranked, Double average) {
        if (!(Double.isFinite(k1) && k1 >= 0)) {
            throw new IllegalArgumentException(TYPE + ": k1 must be a finite number >= 0, got " + k1);
        }
        if (!(b >= 0 && b <= 1)) {
            throw new IllegalArgumentException(TYPE + ": b must be between 0 and 1, got " + b);
        }
        if (ranked != null && ranked < 0) {
            throw new IllegalArgumentException(TYPE + ": ranked must be >= 0, got " + ranked);
        }
        if (average != null && !(Double.isFinite(average) && average > 0)) {
            throw new IllegalArgumentException(TYPE + ": average must be a finite number > 0, got " + average);
        }
        this.k1 = k1;
        this.b = b;
        this.ranked = ranked;
        this.average = average;
    }

    /** The similarity of an index's {@code index.similarity.NAME.*} settings (given without the prefix). */
    public static LawindexSimilarity fromSettings(Map<String, String> settings) {
        Set<String> unknown = new TreeSet<>(settings.keySet());
        unknown.removeAll(SETTINGS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                TYPE + ": unknown setting(s) " + unknown + "; it takes k1, b, ranked and average");
        }
        return new LawindexSimilarity(
            number(settings, "k1", Bm25.K1),
            number(settings, "b", Bm25.B),
            settings.containsKey("ranked") ? whole(settings, "ranked") : null,
            settings.containsKey("average") ? number(settings, "average", 0) : null);
    }

    private static double number(Map<String, String> settings, String key, double otherwise) {
        String value = settings.get(key);
        if (value == null) {
            return otherwise;
        }
        try {
            return Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(TYPE + ": " + key + " must be a number, got [" + value + "]");
        }
    }

    private static long whole(Map<String, String> settings, String key) {
        String value = settings.get(key).trim();
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(TYPE + ": " + key + " must be a whole number, got [" + value + "]");
        }
    }

    public double k1() {
        return k1;
    }

    public double b() {
        return b;
    }

    /**
     * The spec's N: the {@code ranked} setting, never below Lucene's own doc count (OpenSearch tries every
     * similarity at index creation with made-up statistics, 1,100 documents with the field, and refuses
     * one whose score is negative; with real statistics the ranked laws include every one with the field).
     */
    public long ranked(long docCount) {
        return ranked == null ? docCount : Math.max(ranked, docCount);
    }

    /**
     * The spec's N for a query that reads the statistics itself: the {@code ranked} setting as it is, else
     * Lucene's doc count (which counts deleted documents until they are merged away).
     */
    public long rankedExactly(long docCount) {
        return ranked == null ? docCount : ranked;
    }

    /** The spec's average length: the {@code average} setting, else Lucene's own. */
    public double average(long docCount, long sumTotalTermFreq) {
        if (average != null) {
            return average;
        }
        return docCount == 0 ? 1.0 : (double) sumTotalTermFreq / (double) docCount;
    }

    /** The exact length in words (positions of tokens; the spec's doc.length), not a one-byte SmallFloat. */
    @Override
    public long computeNorm(FieldInvertState state) {
        return state.getLength();
    }

    @Override
    public SimScorer scorer(float boost, CollectionStatistics collection, TermStatistics... terms) {
        long size = ranked(collection.docCount());
        double mean = average(collection.docCount(), collection.sumTotalTermFreq());
        double idf = 0;
        long df = 0;
        for (TermStatistics term : terms) {
            idf += Bm25.idf(size, term.docFreq());
            df += term.docFreq();
        }
        return new Scorer(boost, idf, df, size, mean);
    }

    private final class Scorer extends SimScorer {
        private final float boost;
        private final double idf;
        private final long df;
        private final long size;
        private final double mean;

        Scorer(float boost, double idf, long df, long size, double mean) {
            this.boost = boost;
            this.idf = idf;
            this.df = df;
            this.size = size;
            this.mean = mean;
        }

        @Override
        public float score(float freq, long norm) {
            float score = (float) Bm25.term(idf, freq, norm, mean, k1, b);
            return boost == 1f ? score : score * boost;
        }

        @Override
        public Explanation explain(Explanation freq, long norm) {
            double tf = freq.getValue().doubleValue();
            double exact = Bm25.term(idf, tf, norm, mean, k1, b);
            return Explanation.match(
                score(freq.getValue().floatValue(), norm),
                "the spec's BM25 term " + exact + " (float64, shown as float" + (boost == 1f ? "" : " times the boost " + boost)
                    + ") = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average)), from:",
                Explanation.match(idf, "idf = StrictMath.log(1 + (N - n + 0.5) / (n + 0.5)), from:",
                    Explanation.match(df, "n, laws with the word"),
                    Explanation.match(size, "N, ranked laws")),
                Explanation.match(tf, "tf, the word's count in the law", freq),
                Explanation.match(norm, "length, the law's words"),
                Explanation.match(mean, "average, the ranked laws' average length"),
                Explanation.match(k1, "k1"),
                Explanation.match(b, "b"));
        }
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof LawindexSimilarity)) {
            return false;
        }
        LawindexSimilarity that = (LawindexSimilarity) other;
        return Double.compare(k1, that.k1) == 0 && Double.compare(b, that.b) == 0
            && Objects.equals(ranked, that.ranked) && Objects.equals(average, that.average);
    }

    @Override
    public int hashCode() {
        return Objects.hash(k1, b, ranked, average);
    }

    @Override
    public String toString() {
        return TYPE + "(k1=" + k1 + ", b=" + b + ", ranked=" + ranked + ", average=" + average + ")";
    }
}
