package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The spec's ranking of one shard for one question, computed whole before Lucene collects a hit: every
 * matching law's score as the float64 sum, in the spec's order of the asked words, of their BM25 terms, and the
 * laws in the spec's order (score descending, then corpus order). {@link Collected} then gives each law the
 * float that keeps that order in Lucene's collector.
 *
 * <p>The steps of {@link #of}: the shard's statistics ({@link Statistics}), every reached law's sum
 * ({@link Sums}), the laws above 0 sorted by their floats and document ids ({@link #byFloat}), and each run of
 * laws whose floats tie put in the spec's order ({@link #inSpecOrder}).
 */
final class Ranking implements Ranked {
    final List<String> asked;
    final long[] n;
    final double[] idf;
    final long size;
    final double average;
    final double k1;
    final double b;
    private final String field;
    /** Per global document: the float64 sum (0: not reached). */
    private final double[] sums;
    /** The matching documents (global ids) in the spec's order. */
    private final int[] ranked;

    private Ranking(List<String> asked, long[] n, double[] idf, Statistics statistics, String field, double[] sums,
                    int[] ranked) {
        this.asked = asked;
        this.n = n;
        this.idf = idf;
        this.size = statistics.size;
        this.average = statistics.average;
        this.k1 = statistics.k1;
        this.b = statistics.b;
        this.field = field;
        this.sums = sums;
        this.ranked = ranked;
    }

    /** N, the average length, k1 and b: the similarity's settings and the field's statistics on the shard. */
    private static final class Statistics {
        final long size;
        final double average;
        final double k1;
        final double b;

        Statistics(CollectionStatistics statistics, LawindexSimilarity similarity) {
            long docCount = statistics == null ? 0 : statistics.docCount();
            long sumTotalTermFreq = statistics == null ? 0 : statistics.sumTotalTermFreq();
            // The setting as written: the max with Lucene's doc count that the similarity takes for OpenSearch's
            // creation check would count deleted laws here.
            this.size = similarity.rankedExactly(docCount);
            this.average = similarity.average(docCount, sumTotalTermFreq);
            this.k1 = similarity.k1();
            this.b = similarity.b();
        }
    }

    /**
     * The ranking of the laws for {@code asked} (the question's words as the laws spell them, each distinct
     * word once, in the spec's order) whose live counts are {@code counts}. What it holds grows with the
     * shard (13 bytes a document, 40 a matching law), charged to {@code work} before it is made; each posting
     * read is a step of it (cancellation and the timeout are checked as it goes).
     */
    static Ranking of(IndexReader reader, CollectionStatistics collection, String field, String orderField,
                      List<String> asked, long[] counts, LawindexSimilarity similarity, Work work) throws IOException {
        Statistics statistics = new Statistics(collection, similarity);
        // sums (8), the collector's floats (4, Collected) and touched (1) per document of the shard.
        work.charge(13L * reader.maxDoc());
        Sums sums = new Sums(reader.maxDoc(), work);
        long[] n = counts.clone();
        double[] idf = new double[asked.size()];
        for (int w = 0; w < asked.size(); w++) {
            idf[w] = Bm25.idf(statistics.size, n[w]);
            if (n[w] > 0) {
                sums.add(reader.leaves(), field, new BytesRef(asked.get(w)), idf[w], statistics);
            }
        }
        // keys (8), ranked (4), and the collector's per-leaf ids (4 twice) per law reached.
        work.charge(20L * sums.reachedCount);
        long[] keys = byFloat(sums);
        int[] ranked = new int[keys.length];
        for (int r = 0; r < keys.length; r++) {
            ranked[r] = (int) keys[r];
        }
        inSpecOrder(ranked, keys, sums.sums, reader.leaves(), orderField, work);
        return new Ranking(asked, n, idf, statistics, field, sums.sums, ranked);
    }

    /**
     * Every law's float64 sum, word by word in {@code asked} order (the words are the outer loop, so each law's sum
     * is added up in exactly the spec's order), and the laws reached, in the order first reached: only they are
     * looked at again (never a pass over every document of the shard).
     */
    private static final class Sums {
        final double[] sums;
        final boolean[] touched;
        final Work work;
        int[] reached = new int[64];
        int reachedCount;

        Sums(int maxDoc, Work work) {
            this.sums = new double[maxDoc];
            this.touched = new boolean[maxDoc];
            this.work = work;
        }

        /** One asked word's BM25 term added to the sum of every live law that has it. */
        void add(List<LeafReaderContext> leaves, String field, BytesRef term, double idf, Statistics statistics)
            throws IOException {
            for (LeafReaderContext leaf : leaves) {
                Terms terms = leaf.reader().terms(field);
                if (terms == null) {
                    continue;
                }
                TermsEnum iterator = terms.iterator();
                if (!iterator.seekExact(term)) {
                    continue;
                }
                Bits live = leaf.reader().getLiveDocs();
                NumericDocValues lengths = leaf.reader().getNormValues(field);
                PostingsEnum postings = iterator.postings(null, PostingsEnum.FREQS);
                for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                    work.posting();
                    if (live == null || live.get(doc)) {
                        int global = leaf.docBase + doc;
                        sums[global] += Bm25.term(idf, postings.freq(), length(lengths, doc), statistics.average,
                            statistics.k1, statistics.b);
                        reached(global);
                    }
                }
            }
        }

        private void reached(int global) {
            if (touched[global]) {
                return;
            }
            touched[global] = true;
            if (reachedCount == reached.length) {
                work.charge(4L * reachedCount);
                reached = Arrays.copyOf(reached, reachedCount * 2);
            }
            reached[reachedCount++] = global;
        }
    }

    /**
     * The spec keeps a law whose score is > 0 (every matching law, with real statistics). Each kept law as one
     * long, its float (descending) above its document id (ascending), which is how Lucene's collector ranks; one
     * primitive sort.
     */
    private static long[] byFloat(Sums sums) {
        long[] keys = new long[sums.reachedCount];
        int matched = 0;
        for (int i = 0; i < sums.reachedCount; i++) {
            int global = sums.reached[i];
            if (sums.sums[global] > 0) {
                keys[matched++] = key((float) sums.sums[global], global);
            }
        }
        keys = Arrays.copyOf(keys, matched);
        Arrays.sort(keys);
        return keys;
    }

    /** A kept law's sort key: a positive float's bits order as the float does; descending, then the id. */
    private static long key(float score, int global) {
        return ((long) (Integer.MAX_VALUE - Float.floatToIntBits(score)) << 32) | global;
    }

    /**
     * Rounding to float never swaps two sums, it only ties them: so the order by float is the spec's (score
     * descending, then corpus order) except inside a run of laws whose floats are equal. Only there is each law's
     * corpus order read (the order field's doc values) and the run put in the spec's order.
     */
    private static void inSpecOrder(int[] ranked, long[] keys, double[] sums, List<LeafReaderContext> leaves,
                                    String orderField, Work work) throws IOException {
        for (int r = 0; r < ranked.length; ) {
            int end = r + 1;
            while (end < ranked.length && (keys[end] >>> 32) == (keys[r] >>> 32)) {
                end++;
            }
            if (end - r > 1) {
                work.charge(40L * (end - r));
                inSpecOrder(ranked, r, end, sums, leaves, orderField, work);
                work.release(40L * (end - r));
            }
            r = end;
        }
    }

    /**
     * {@code ranked[from..to)}, laws whose floats tie, ascending by document id, put in the spec's order:
     * float64 sum descending, then corpus order (the order field; without it, after every law with it),
     * then document id.
     */
    private static void inSpecOrder(int[] ranked, int from, int to, double[] sums, List<LeafReaderContext> leaves,
                                    String orderField, Work work) throws IOException {
        int count = to - from;
        long[] orders = new long[count];
        // The run's ids ascend, so each leaf's doc values are read forward once.
        int leafIndex = -1;
        SortedNumericDocValues values = null;
        LeafReaderContext leaf = null;
        for (int i = 0; i < count; i++) {
            work.posting();
            int global = ranked[from + i];
            if (leaf == null || global >= leaf.docBase + leaf.reader().maxDoc()) {
                leafIndex = ReaderUtil.subIndex(global, leaves);
                leaf = leaves.get(leafIndex);
                values = DocValues.getSortedNumeric(leaf.reader(), orderField);
            }
            int doc = global - leaf.docBase;
            orders[i] = values.advanceExact(doc) ? values.nextValue() : Long.MAX_VALUE;
        }
        Integer[] at = new Integer[count];
        for (int i = 0; i < count; i++) {
            at[i] = i;
        }
        Arrays.sort(at, (x, y) -> {
            int byScore = Double.compare(sums[ranked[from + y]], sums[ranked[from + x]]);
            if (byScore != 0) {
                return byScore;
            }
            int byOrder = Long.compare(orders[x], orders[y]);
            return byOrder != 0 ? byOrder : Integer.compare(ranked[from + x], ranked[from + y]);
        });
        int[] run = new int[count];
        for (int i = 0; i < count; i++) {
            run[i] = ranked[from + at[i]];
        }
        System.arraycopy(run, 0, ranked, from, count);
    }

    private static long length(NumericDocValues lengths, int doc) throws IOException {
        if (lengths == null || !lengths.advanceExact(doc)) {
            throw new IllegalStateException("a document with words has no length (norms are off for the field?)");
        }
        return lengths.longValue();
    }

    /** Every matching document (global id), in the spec's order: the full words ranking (hybrid's). */
    @Override
    public int[] ranked() {
        return ranked;
    }

    /** A matching document's float64 BM25 sum. */
    double sum(int global) {
        return sums[global];
    }

    @Override
    public double exact(int global) {
        return sums[global];
    }

    /** Each asked word's part of the law's score, with what it is computed from. */
    @Override
    public Explanation explain(LeafReaderContext leaf, int doc, Collected collected) throws IOException {
        int global = leaf.docBase + doc;
        if (!collected.matches(global)) {
            return Explanation.noMatch("no word of the question (as the spec spells it: " + asked + ") is in field [" + field + "]");
        }
        NumericDocValues lengths = leaf.reader().getNormValues(field);
        long length = length(lengths, doc);
        Explanation[] parts = new Explanation[asked.size()];
        int used = 0;
        Terms terms = leaf.reader().terms(field);
        for (int w = 0; w < asked.size(); w++) {
            TermsEnum iterator = terms.iterator();
            if (!iterator.seekExact(new BytesRef(asked.get(w)))) {
                continue;
            }
            PostingsEnum postings = iterator.postings(null, PostingsEnum.FREQS);
            if (postings.advance(doc) != doc) {
                continue;
            }
            int tf = postings.freq();
            double part = Bm25.term(idf[w], tf, length, average, k1, b);
            parts[used++] = Explanation.match(part,
                "[" + asked.get(w) + "]: (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average)), from:",
                Explanation.match(idf[w], "idf = StrictMath.log(1 + (N - n + 0.5) / (n + 0.5)), from:",
                    Explanation.match(n[w], "n, laws with the word"),
                    Explanation.match(size, "N, ranked laws")),
                Explanation.match(tf, "tf, the word's count in the law"),
                Explanation.match(length, "length, the law's words"),
                Explanation.match(average, "average, the ranked laws' average length"),
                Explanation.match(k1, "k1"),
                Explanation.match(b, "b"));
        }
        double sum = sums[global];
        int ulps = collected.raised(global, sum);
        String note = ulps == 0 ? "" : ", raised " + ulps + " ulp(s) above the float nearest it to stay above the laws the spec ranks below it";
        return Explanation.match(collected.score(global),
            "lawindex: the spec's BM25 of " + sum + " (float64, summed in the order of the asked words " + asked
                + ")" + (collected.boost == 1f ? "" : ", times the boost " + collected.boost) + ", as a float" + note
                + "; the sum of:", Arrays.copyOf(parts, used));
    }
}
