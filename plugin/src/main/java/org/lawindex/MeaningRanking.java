package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * The reference engine's ranking by meaning or hybrid (indexer/retrieval/meaning.py) on one shard, computed
 * whole before Lucene collects a hit:
 *
 * <ul>
 *   <li>meaning: every row with a vector (the field {@code vector_grid}: 256 little-endian int32, each
 *       component times 2^20), by its cosine with the question's vector: the exact long dot product of the
 *       grid units (below 2^48) times 2^-40, which is the float64 dot product Python computes, to the bit;
 *       best first, equal cosines in corpus order;</li>
 *   <li>hybrid: the weighted reciprocal-rank fusion (docs/fusion.md) of the full words ranking (every
 *       law BM25 scores above 0, {@link Ranking}) and the full meaning ranking: {@code 0.0 + ww / (k + w) +
 *       mw / (k + m)}, a part only for a way that reaches the row; best first, equal scores in corpus order.</li>
 * </ul>
 *
 * <p>A question with no tokens has the zero vector, near nothing: no row, whichever way (as Python answers).
 * Each row is then given a float for Lucene's collector as {@link Ranking} does for words: the float nearest
 * its exact score, raised where needed to stay above the row after it, so the collector's order is the
 * exact one for every page ({@code from}, {@code size}, {@code search_after}).
 *
 * <p>Work and memory are linear in the state's rows (a state holds at most tens of thousands): one pass over
 * the vectors (256 multiply-adds a row), one sort, a few arrays of the shard's size.
 */
final class MeaningRanking {
    static final String GRID_FIELD = "vector_grid";
    final boolean hybrid;
    final int rrfK;
    final double wordsWeight;
    final double meaningWeight;
    /** Per global document (NaN / 0: no rank). */
    private final double[] exact;
    private final double[] cosines;
    private final int[] meaningRanks;
    private final int[] wordsRanks;
    private final float[] floats;
    private final int[][] docs;
    private final float maxScore;
    final Ranking words;

    private MeaningRanking(boolean hybrid, int rrfK, double wordsWeight, double meaningWeight, double[] exact,
                           double[] cosines, int[] meaningRanks, int[] wordsRanks, float[] floats, int[][] docs,
                           float maxScore, Ranking words) {
        this.hybrid = hybrid;
        this.rrfK = rrfK;
        this.wordsWeight = wordsWeight;
        this.meaningWeight = meaningWeight;
        this.exact = exact;
        this.cosines = cosines;
        this.meaningRanks = meaningRanks;
        this.wordsRanks = wordsRanks;
        this.floats = floats;
        this.docs = docs;
        this.maxScore = maxScore;
        this.words = words;
    }

    /** The ranking of every row; {@code words} (hybrid: null where the words field is not mapped) the shard's
     * exact words ranking. */
    static MeaningRanking of(IndexReader reader, String orderField, int[] question, boolean hybrid, Ranking words,
                             int rrfK, double wordsWeight, double meaningWeight, Runnable checkCancelled)
        throws IOException {
        int maxDoc = reader.maxDoc();
        double[] cosines = new double[maxDoc];
        long[] dots = new long[maxDoc];
        long[] orders = new long[maxDoc];
        int[] rows = new int[Math.min(maxDoc, 1024)];
        int count = 0;
        boolean near = false;
        for (int d = 0; d < question.length; d++) {
            near |= question[d] != 0;
        }
        List<LeafReaderContext> leaves = reader.leaves();
        if (near) {
            for (LeafReaderContext leaf : leaves) {
                checkCancelled.run();
                BinaryDocValues vectors = leaf.reader().getBinaryDocValues(GRID_FIELD);
                if (vectors == null) {
                    continue;
                }
                SortedNumericDocValues order = DocValues.getSortedNumeric(leaf.reader(), orderField);
                Bits live = leaf.reader().getLiveDocs();
                for (int doc = vectors.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = vectors.nextDoc()) {
                    if (live != null && !live.get(doc)) {
                        continue;
                    }
                    int global = leaf.docBase + doc;
                    dots[global] = dot(vectors.binaryValue(), question);
                    cosines[global] = dots[global] * 0x1p-40;
                    orders[global] = order.advanceExact(doc) ? order.nextValue() : Long.MAX_VALUE;
                    if (count == rows.length) {
                        rows = Arrays.copyOf(rows, count * 2);
                    }
                    rows[count++] = global;
                }
            }
        }
        checkCancelled.run();
        // Meaning: by dot product (the cosine's order exactly), then corpus order, then document id.
        Integer[] byMeaning = boxed(rows, count);
        Arrays.sort(byMeaning, (x, y) -> {
            int c = Long.compare(dots[y], dots[x]);
            if (c != 0) {
                return c;
            }
            c = Long.compare(orders[x], orders[y]);
            return c != 0 ? c : Integer.compare(x, y);
        });
        int[] meaningRanks = new int[maxDoc];
        for (int r = 0; r < count; r++) {
            meaningRanks[byMeaning[r]] = r + 1;
        }
        int[] wordsRanks = new int[maxDoc];
        double[] exact = new double[maxDoc];
        int[] ranked;
        if (!hybrid) {
            ranked = new int[count];
            for (int r = 0; r < count; r++) {
                ranked[r] = byMeaning[r];
                exact[ranked[r]] = cosines[ranked[r]];
            }
        } else {
            int[] byWords = near && words != null ? words.ranked() : new int[0];
            for (int r = 0; r < byWords.length; r++) {
                wordsRanks[byWords[r]] = r + 1;
            }
            // Every row reached: all rows with a vector, and any law words reach that has none.
            int reached = count;
            int[] all = Arrays.copyOf(rows, count + byWords.length);
            for (int global : byWords) {
                if (meaningRanks[global] == 0) {  // a law without a vector (none in an index lawindex loads)
                    all[reached++] = global;
                    orders[global] = orderOf(leaves, orderField, global);
                }
            }
            for (int i = 0; i < reached; i++) {
                int global = all[i];
                double score = 0.0;
                if (wordsRanks[global] > 0) {
                    score += wordsWeight / (double) (rrfK + wordsRanks[global]);
                }
                if (meaningRanks[global] > 0) {
                    score += meaningWeight / (double) (rrfK + meaningRanks[global]);
                }
                exact[global] = score;
            }
            checkCancelled.run();
            Integer[] fused = boxed(all, reached);
            Arrays.sort(fused, (x, y) -> {
                int c = Double.compare(exact[y], exact[x]);
                if (c != 0) {
                    return c;
                }
                c = Long.compare(orders[x], orders[y]);
                return c != 0 ? c : Integer.compare(x, y);
            });
            ranked = new int[reached];
            for (int r = 0; r < reached; r++) {
                ranked[r] = fused[r];
            }
        }
        float[] floats = new float[maxDoc];
        Arrays.fill(floats, Float.NaN);
        for (int r = ranked.length - 1; r >= 0; r--) {
            int doc = ranked[r];
            float nearest = (float) exact[doc];
            if (r < ranked.length - 1) {
                int below = ranked[r + 1];
                // The collector ranks by float, then by document id: level with the row below is enough when
                // this one's id is the smaller.
                float least = doc < below ? floats[below] : Math.nextUp(floats[below]);
                nearest = Math.max(nearest, least);
            }
            floats[doc] = nearest;
        }
        int[] sorted = ranked.clone();
        Arrays.sort(sorted);
        int[][] docs = new int[leaves.size()][];
        int from = 0;
        for (int l = 0; l < leaves.size(); l++) {
            LeafReaderContext leaf = leaves.get(l);
            int limit = leaf.docBase + leaf.reader().maxDoc();
            int to = from;
            while (to < sorted.length && sorted[to] < limit) {
                to++;
            }
            docs[l] = new int[to - from];
            for (int i = from; i < to; i++) {
                docs[l][i - from] = sorted[i] - leaf.docBase;
            }
            from = to;
        }
        float maxScore = ranked.length == 0 ? 0f : floats[ranked[0]];
        return new MeaningRanking(hybrid, rrfK, wordsWeight, meaningWeight, exact, cosines, meaningRanks, wordsRanks,
            floats, docs, maxScore, words);
    }

    private static long orderOf(List<LeafReaderContext> leaves, String orderField, int global) throws IOException {
        LeafReaderContext leaf = leaves.get(org.apache.lucene.index.ReaderUtil.subIndex(global, leaves));
        SortedNumericDocValues order = DocValues.getSortedNumeric(leaf.reader(), orderField);
        return order.advanceExact(global - leaf.docBase) ? order.nextValue() : Long.MAX_VALUE;
    }

    private static Integer[] boxed(int[] values, int count) {
        Integer[] out = new Integer[count];
        for (int i = 0; i < count; i++) {
            out[i] = values[i];
        }
        return out;
    }

    /**
     * The dot product of a stored vector with the question's, in grid units. OpenSearch's binary doc values
     * hold a count of values (vInt), then each value as its length (vInt) and bytes: one value of 1024 bytes.
     */
    static long dot(BytesRef stored, int[] question) {
        byte[] b = stored.bytes;
        int at = stored.offset;
        int[] read = new int[1];
        int values = vInt(b, at, read);
        at = read[0];
        int length = vInt(b, at, read);
        at = read[0];
        if (values != 1 || length != 4 * question.length) {
            throw new IllegalStateException("[" + GRID_FIELD + "] holds " + values + " value(s) of " + length
                + " bytes, not one of " + 4 * question.length + " (256 little-endian int32)");
        }
        long dot = 0;
        for (int d = 0; d < question.length; d++, at += 4) {
            int unit = (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | b[at + 3] << 24;
            dot += (long) unit * question[d];
        }
        return dot;
    }

    private static int vInt(byte[] b, int at, int[] next) {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte one = b[at++];
            value |= (one & 0x7f) << shift;
            if (one >= 0) {
                next[0] = at;
                return value;
            }
        }
        throw new IllegalStateException("[" + GRID_FIELD + "] is not OpenSearch's binary doc values");
    }

    int[] docs(int leafOrd) {
        return docs[leafOrd];
    }

    float score(LeafReaderContext leaf, int doc) {
        return floats[leaf.docBase + doc];
    }

    float maxScore() {
        return maxScore;
    }

    boolean matches(int global) {
        return !Float.isNaN(floats[global]);
    }

    double exact(int global) {
        return exact[global];
    }

    double cosine(int global) {
        return cosines[global];
    }

    int meaningRank(int global) {
        return meaningRanks[global];
    }

    int wordsRank(int global) {
        return wordsRanks[global];
    }
}
