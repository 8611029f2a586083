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
 * matching law's score as the float64 sum, in the spec's order of the asked words, of their BM25 terms;
 * then a float per law for Lucene's collector that keeps the spec's order exactly.
 *
 * <p>Lucene sees float scores and breaks ties by document id. So the laws are put in the spec's order
 * (score descending, then corpus order) and given floats from the last up: each the float nearest its
 * float64 sum, raised where needed to stay above the law after it (one ulp above it, or level with it when
 * its document id already comes first). Two laws float64 tells apart but float32 would tie, and exact
 * float64 ties (corpus order decides), both come out in the spec's order whatever the segments and their
 * order. {@code _score} is thus the float64 sum rounded to float, raised by as many ulps as laws below it
 * tie with it in float (none in practice; one per tied law in a run of ties that documents do not order).
 */
final class Ranking {
    final List<String> asked;
    final long[] n;
    final double[] idf;
    final long size;
    final double average;
    final double k1;
    final double b;
    private final String field;
    private final String orderField;
    /** Per global document: the float64 sum, and the float handed to the collector (NaN: no match). */
    private final double[] sums;
    private final float[] floats;
    /** Per leaf: its matching documents (leaf ids, ascending). */
    private final int[][] docs;
    private final float maxScore;
    /** The matching documents (global ids) in the spec's order. */
    private final int[] ranked;

    private Ranking(List<String> asked, long[] n, double[] idf, long size, double average, double k1, double b,
                    String field, String orderField, double[] sums, float[] floats, int[][] docs, float maxScore,
                    int[] ranked) {
        this.ranked = ranked;
        this.asked = asked;
        this.n = n;
        this.idf = idf;
        this.size = size;
        this.average = average;
        this.k1 = k1;
        this.b = b;
        this.field = field;
        this.orderField = orderField;
        this.sums = sums;
        this.floats = floats;
        this.docs = docs;
        this.maxScore = maxScore;
    }

    /**
     * The ranking of the laws for {@code asked} (the question's words as the laws spell them, each distinct
     * word once, in the spec's order) whose live counts are {@code counts}. What it holds grows with the
     * shard (13 bytes a document, 40 a matching law), charged to {@code work} before it is made; each posting
     * read is a step of it (cancellation and the timeout are checked as it goes).
     */
    static Ranking of(IndexReader reader, CollectionStatistics statistics, String field, String orderField,
                      List<String> asked, long[] counts, LawindexSimilarity similarity, Work work) throws IOException {
        long docCount = statistics == null ? 0 : statistics.docCount();
        long sumTotalTermFreq = statistics == null ? 0 : statistics.sumTotalTermFreq();
        // The setting as written: the max with Lucene's doc count that the similarity takes for OpenSearch's
        // creation check would count deleted laws here.
        long size = similarity.rankedExactly(docCount);
        double average = similarity.average(docCount, sumTotalTermFreq);
        double k1 = similarity.k1();
        double b = similarity.b();
        int maxDoc = reader.maxDoc();
        // sums (8), floats (4) and touched (1) per document of the shard.
        work.charge(13L * maxDoc);
        double[] sums = new double[maxDoc];
        boolean[] touched = new boolean[maxDoc];
        // The documents a word of the question reached, in the order first reached: only they are looked
        // at again (never a pass over every document of the shard).
        int[] reached = new int[64];
        int reachedCount = 0;
        long[] n = new long[asked.size()];
        double[] idf = new double[asked.size()];
        List<LeafReaderContext> leaves = reader.leaves();
        for (int w = 0; w < asked.size(); w++) {
            n[w] = counts[w];
            idf[w] = Bm25.idf(size, n[w]);
            if (n[w] == 0) {
                continue;
            }
            BytesRef term = new BytesRef(asked.get(w));
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
                    if (live != null && !live.get(doc)) {
                        continue;
                    }
                    int global = leaf.docBase + doc;
                    // The spec's `score += term`, word by word in `asked` order: the words are the outer loop,
                    // so each law's sum is added up in exactly that order.
                    sums[global] += Bm25.term(idf[w], postings.freq(), length(lengths, doc), average, k1, b);
                    if (!touched[global]) {
                        touched[global] = true;
                        if (reachedCount == reached.length) {
                            work.charge(4L * reachedCount);
                            reached = Arrays.copyOf(reached, reachedCount * 2);
                        }
                        reached[reachedCount++] = global;
                    }
                }
            }
        }
        // The spec keeps a law whose score is > 0 (every matching law, with real statistics). Each kept law
        // as one long: its float (descending) above its document id (ascending), which is how Lucene's
        // collector ranks; one primitive sort.
        // keys (8), ranked (4), positive (4), docs (4) per law reached; a run of ties sorts with 40 more each.
        work.charge(20L * reachedCount);
        long[] keys = new long[reachedCount];
        int matched = 0;
        for (int i = 0; i < reachedCount; i++) {
            int global = reached[i];
            if (sums[global] > 0) {
                keys[matched++] = key((float) sums[global], global);
            }
        }
        Arrays.sort(keys, 0, matched);
        int[] ranked = new int[matched];
        for (int r = 0; r < matched; r++) {
            ranked[r] = (int) keys[r];
        }
        // Rounding to float never swaps two sums, it only ties them: so the collector's order is the spec's
        // (score descending, then corpus order) except inside a run of laws whose floats are equal. Only
        // there is each law's corpus order read (the order field's doc values) and the run put in the spec's
        // order, by its float64 sums and then corpus order.
        for (int r = 0; r < matched; ) {
            int end = r + 1;
            while (end < matched && (keys[end] >>> 32) == (keys[r] >>> 32)) {
                end++;
            }
            if (end - r > 1) {
                work.charge(40L * (end - r));
                inSpecOrder(ranked, r, end, sums, leaves, orderField, work);
                work.release(40L * (end - r));
            }
            r = end;
        }
        int[] positive = Arrays.copyOf(ranked, matched);
        Arrays.sort(positive);
        int[][] docs = new int[leaves.size()][];
        int from = 0;
        for (int l = 0; l < leaves.size(); l++) {
            LeafReaderContext leaf = leaves.get(l);
            int limit = leaf.docBase + leaf.reader().maxDoc();
            int to = from;
            while (to < matched && positive[to] < limit) {
                to++;
            }
            docs[l] = new int[to - from];
            for (int i = from; i < to; i++) {
                docs[l][i - from] = positive[i] - leaf.docBase;
            }
            from = to;
        }
        float[] floats = new float[maxDoc];
        Arrays.fill(floats, Float.NaN);
        for (int r = matched - 1; r >= 0; r--) {
            int doc = ranked[r];
            float nearest = (float) sums[doc];
            if (r < matched - 1) {
                int below = ranked[r + 1];
                // The collector ranks by float, then by document id: level with the law below is enough when
                // this one's id is the smaller.
                float least = doc < below ? floats[below] : Math.nextUp(floats[below]);
                nearest = Math.max(nearest, least);
            }
            floats[doc] = nearest;
        }
        float maxScore = matched == 0 ? 0f : floats[ranked[0]];
        return new Ranking(asked, n, idf, size, average, k1, b, field, orderField, sums, floats, docs, maxScore, ranked);
    }

    /** A kept law's sort key: a positive float's bits order as the float does; descending, then the id. */
    private static long key(float score, int global) {
        return ((long) (Integer.MAX_VALUE - Float.floatToIntBits(score)) << 32) | global;
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
    int[] ranked() {
        return ranked;
    }

    /** A matching document's float64 BM25 sum. */
    double sum(int global) {
        return sums[global];
    }

    /** The leaf's matching documents, ascending. */
    int[] docs(int leafOrd) {
        return docs[leafOrd];
    }

    float score(LeafReaderContext leaf, int doc) {
        return floats[leaf.docBase + doc];
    }

    float maxScore() {
        return maxScore;
    }

    boolean matches(LeafReaderContext leaf, int doc) {
        return !Float.isNaN(floats[leaf.docBase + doc]);
    }

    /** Each asked word's part of the law's score, with what it is computed from. */
    Explanation explain(LeafReaderContext leaf, int doc, float boost) throws IOException {
        int global = leaf.docBase + doc;
        if (!matches(leaf, doc)) {
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
        float score = floats[global] * boost;
        double sum = sums[global];
        int ulps = 0;
        for (float f = (float) sum; f < floats[global]; f = Math.nextUp(f)) {
            ulps++;
        }
        String note = ulps == 0 ? "" : ", raised " + ulps + " ulp(s) above the float nearest it to stay above the laws the spec ranks below it";
        return Explanation.match(score,
            "lawindex: the spec's BM25 of " + sum + " (float64, summed in the order of the asked words " + asked
                + "), as a float" + note + (boost == 1f ? "" : ", times the boost " + boost) + "; the sum of:",
            Arrays.copyOf(parts, used));
    }
}
