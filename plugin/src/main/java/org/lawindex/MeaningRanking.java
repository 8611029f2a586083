package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.IntroSorter;

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
 * <p>A question with nothing to embed (no letter or digit: {@link Embedder#nothingToEmbed}) has the zero vector,
 * near no row: no row by meaning, and hybrid is words' part alone (none either: such a question has no word).
 * Each row is then given a float for Lucene's collector as {@link Ranking} does for words: the float nearest
 * its exact score, raised where needed to stay above the row after it, so the collector's order is the
 * exact one for every page ({@code from}, {@code size}, {@code search_after}).
 *
 * <p>Work and memory are linear in the state's rows (a state holds at most tens of thousands): one pass over
 * the vectors (256 multiply-adds a row), one sort, a few arrays of the shard's size.
 */
final class MeaningRanking {
    static final String GRID_FIELD = GridVectors.FIELD;
    final boolean hybrid;
    final int rrfK;
    final double wordsWeight;
    final double meaningWeight;
    /** Per global document (NaN / 0: no rank). */
    private final double[] exact;
    private final long[] dots;
    private final int[] meaningRanks;
    private final int[] wordsRanks;
    private final float[] floats;
    private final int[][] docs;
    private final float maxScore;
    final Ranking words;

    private MeaningRanking(boolean hybrid, int rrfK, double wordsWeight, double meaningWeight, double[] exact,
                           long[] dots, int[] meaningRanks, int[] wordsRanks, float[] floats, int[][] docs,
                           float maxScore, Ranking words) {
        this.hybrid = hybrid;
        this.rrfK = rrfK;
        this.wordsWeight = wordsWeight;
        this.meaningWeight = meaningWeight;
        this.exact = exact;
        this.dots = dots;
        this.meaningRanks = meaningRanks;
        this.wordsRanks = wordsRanks;
        this.floats = floats;
        this.docs = docs;
        this.maxScore = maxScore;
        this.words = words;
    }

    /**
     * The ranking of every row; {@code words} (hybrid: null where the words field is not mapped) the shard's exact
     * words ranking. Each segment's vectors come from {@link GridVectors} (decoded once per segment core, charged
     * to {@code cacheBreaker}); what this question alone holds (about 50 bytes a document of the shard) is charged
     * to {@code work}, and its cancellation checked every {@link GridVectors#CHECK_EVERY} rows.
     */
    static MeaningRanking of(IndexReader reader, String orderField, int[] question, boolean hybrid, Ranking words,
                             int rrfK, double wordsWeight, double meaningWeight, Work.Breaker cacheBreaker, Work work)
        throws IOException {
        int maxDoc = reader.maxDoc();
        boolean near = false;
        for (int d = 0; d < question.length; d++) {
            near |= question[d] != 0;
        }
        List<LeafReaderContext> leaves = reader.leaves();
        GridVectors[] segments = new GridVectors[leaves.size()];
        int rows = 0;
        if (near) {
            for (LeafReaderContext leaf : leaves) {
                work.checkCancelled();
                segments[leaf.ord] = GridVectors.of(leaf.reader(), orderField, cacheBreaker, work);
                rows += segments[leaf.ord].rows();
                refuseBare(leaf, segments[leaf.ord], orderField);
            }
        }
        // Near no row (nothing to embed), hybrid is words' part alone.
        int[] byWords = hybrid && words != null ? words.ranked() : new int[0];
        // Per document of the shard: dots, orders, exact (8 each), two ranks and a float (4 each); per row of a
        // sort (meaning's, and hybrid's of every row reached): its keys (8 + 8 + 4) twice, its packed key (8), and
        // the ranking's ids and leaf ids (4 each).
        work.charge(40L * maxDoc + 56L * (rows + (hybrid ? rows + byWords.length : 0)));
        long[] dots = new long[maxDoc];
        long[] orders = new long[maxDoc];
        // Meaning: every live row with a vector, by dot product (the cosine's order exactly), then corpus order,
        // then document id; sorted as primitive keys (boxed Integers and a comparator took milliseconds).
        Rows byMeaning = new Rows(rows);
        for (LeafReaderContext leaf : leaves) {
            GridVectors segment = segments[leaf.ord];
            if (segment == null) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            for (int row = 0; row < segment.rows(); row++) {
                if (row % GridVectors.CHECK_EVERY == 0) {
                    work.checkCancelled();
                }
                int doc = segment.docs[row];
                if (live != null && !live.get(doc)) {
                    continue;
                }
                int global = leaf.docBase + doc;
                dots[global] = segment.dot(row, question);
                orders[global] = segment.orders[row];
                byMeaning.add(dots[global], orders[global], global);
            }
        }
        work.checkCancelled();
        byMeaning.sort();
        int count = byMeaning.count;
        int[] meaningRanks = new int[maxDoc];
        for (int r = 0; r < count; r++) {
            meaningRanks[byMeaning.ids[r]] = r + 1;
        }
        int[] wordsRanks = new int[maxDoc];
        double[] exact = new double[maxDoc];
        int[] ranked;
        if (!hybrid) {
            ranked = Arrays.copyOf(byMeaning.ids, count);
            for (int global : ranked) {
                exact[global] = dots[global] * 0x1p-40;
            }
        } else {
            for (int r = 0; r < byWords.length; r++) {
                wordsRanks[byWords[r]] = r + 1;
            }
            // Every row reached: all rows with a vector, and any law words reach that has none.
            Rows fused = new Rows(count + byWords.length);
            for (int i = 0; i < count + byWords.length; i++) {
                int global = i < count ? byMeaning.ids[i] : byWords[i - count];
                if (i >= count) {
                    if (meaningRanks[global] != 0) {
                        continue;  // reached by both ways: fused once
                    }
                    // A law without a vector (none in an index lawindex loads).
                    orders[global] = orderOf(leaves, orderField, global);
                }
                double score = 0.0;
                if (wordsRanks[global] > 0) {
                    score += wordsWeight / (double) (rrfK + wordsRanks[global]);
                }
                if (meaningRanks[global] > 0) {
                    score += meaningWeight / (double) (rrfK + meaningRanks[global]);
                }
                exact[global] = score;
                // A score is 0.0 plus parts >= 0 (the weights are finite and >= 0): never -0.0 or NaN, so its
                // bits order as it does.
                fused.add(Double.doubleToLongBits(score), orders[global], global);
            }
            work.checkCancelled();
            fused.sort();
            ranked = Arrays.copyOf(fused.ids, fused.count);
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
        // Each leaf's ranked rows, ascending: one pass over the shard's documents (no second sort).
        int[][] docs = new int[leaves.size()][];
        for (int l = 0; l < leaves.size(); l++) {
            LeafReaderContext leaf = leaves.get(l);
            int[] found = new int[leaf.reader().maxDoc()];
            int n = 0;
            for (int doc = 0; doc < found.length; doc++) {
                if (!Float.isNaN(floats[leaf.docBase + doc])) {
                    found[n++] = doc;
                }
            }
            docs[l] = Arrays.copyOf(found, n);
        }
        float maxScore = ranked.length == 0 ? 0f : floats[ranked[0]];
        return new MeaningRanking(hybrid, rrfK, wordsWeight, meaningWeight, exact, dots, meaningRanks, wordsRanks,
            floats, docs, maxScore, words);
    }

    /**
     * Rows to rank: each a key (best highest), its corpus order and its document id, sorted in place best first,
     * then by corpus order, then by id: a total order, so the answer never depends on the sort's own steps.
     *
     * <p>How: each row as one long, its key's distance below the highest key (truncated to the bits left by the row's
     * index) above its index, sorted by Arrays.sort (primitive longs); then only a run of rows whose truncated keys
     * are equal (exact ties, and keys closer than the truncation: a dot product is at most 2^41 apart from another
     * for unit vectors, which with 6,000 rows leaves 50 bits, none truncated) is put in the full order by Lucene's
     * IntroSorter. As Ranking does for words' floats. A sort through a comparator of the rows' arrays took 2 of the
     * 9 ms meaning's ranking of 6,000 rows took on a loaded machine (IntroSorter alone; boxed, more).
     */
    private static final class Rows extends IntroSorter {
        final long[] keys;
        final long[] orders;
        final int[] ids;
        int count;
        private long pivotKey;
        private long pivotOrder;
        private int pivotId;

        Rows(int capacity) {
            keys = new long[capacity];
            orders = new long[capacity];
            ids = new int[capacity];
        }

        void add(long key, long order, int id) {
            keys[count] = key;
            orders[count] = order;
            ids[count] = id;
            count++;
        }

        void sort() {
            if (count < 2) {
                return;
            }
            int indexBits = 32 - Integer.numberOfLeadingZeros(count - 1);
            int keyBits = 63 - indexBits;
            long min = Long.MAX_VALUE;
            long max = Long.MIN_VALUE;
            for (int i = 0; i < count; i++) {
                min = Math.min(min, keys[i]);
                max = Math.max(max, keys[i]);
            }
            // max - key, as an unsigned number, is in [0, max - min]: exact even where the signed difference wraps.
            long span = max - min;
            int shift = Math.max(0, (64 - Long.numberOfLeadingZeros(span)) - keyBits);
            long[] packed = new long[count];
            for (int i = 0; i < count; i++) {
                packed[i] = (((max - keys[i]) >>> shift) << indexBits) | i;
            }
            Arrays.sort(packed);
            long[] sortedKeys = new long[count];
            long[] sortedOrders = new long[count];
            int[] sortedIds = new int[count];
            long mask = (1L << indexBits) - 1;
            for (int r = 0; r < count; r++) {
                int i = (int) (packed[r] & mask);
                sortedKeys[r] = keys[i];
                sortedOrders[r] = orders[i];
                sortedIds[r] = ids[i];
            }
            System.arraycopy(sortedKeys, 0, keys, 0, count);
            System.arraycopy(sortedOrders, 0, orders, 0, count);
            System.arraycopy(sortedIds, 0, ids, 0, count);
            for (int r = 0; r < count; ) {
                int end = r + 1;
                while (end < count && (packed[end] >>> indexBits) == (packed[r] >>> indexBits)) {
                    end++;
                }
                if (end - r > 1) {
                    sort(r, end);
                }
                r = end;
            }
        }

        private static int compare(long key, long order, int id, long otherKey, long otherOrder, int otherId) {
            int c = Long.compare(otherKey, key);
            if (c != 0) {
                return c;
            }
            c = Long.compare(order, otherOrder);
            return c != 0 ? c : Integer.compare(id, otherId);
        }

        @Override
        protected int compare(int i, int j) {
            return compare(keys[i], orders[i], ids[i], keys[j], orders[j], ids[j]);
        }

        @Override
        protected void setPivot(int i) {
            pivotKey = keys[i];
            pivotOrder = orders[i];
            pivotId = ids[i];
        }

        @Override
        protected int comparePivot(int j) {
            return compare(pivotKey, pivotOrder, pivotId, keys[j], orders[j], ids[j]);
        }

        @Override
        protected void swap(int i, int j) {
            long key = keys[i];
            keys[i] = keys[j];
            keys[j] = key;
            long order = orders[i];
            orders[i] = orders[j];
            orders[j] = order;
            int id = ids[i];
            ids[i] = ids[j];
            ids[j] = id;
        }
    }

    private static long orderOf(List<LeafReaderContext> leaves, String orderField, int global) throws IOException {
        LeafReaderContext leaf = leaves.get(org.apache.lucene.index.ReaderUtil.subIndex(global, leaves));
        SortedNumericDocValues order = DocValues.getSortedNumeric(leaf.reader(), orderField);
        return order.advanceExact(global - leaf.docBase) ? order.nextValue() : Long.MAX_VALUE;
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
        return dots[global] * 0x1p-40;
    }

    int meaningRank(int global) {
        return meaningRanks[global];
    }

    int wordsRank(int global) {
        return wordsRanks[global];
    }

    /** The marker every client can find in the refusal of a law without a vector (lawindex's Python reads it). */
    static final String BARE = "has no vector_grid";

    /**
     * A live law of the segment that has no vector refuses the question (400): the reference ranks every law by
     * meaning, so an answer without it would move every row after it. An index lawindex loads with vectors gives
     * every law one; a law without is an index loaded without vectors, or a row altered in place.
     */
    private static void refuseBare(LeafReaderContext leaf, GridVectors segment, String orderField) throws IOException {
        Bits live = leaf.reader().getLiveDocs();
        for (int doc : segment.bare) {
            if (live == null || live.get(doc)) {
                SortedNumericDocValues order = DocValues.getSortedNumeric(leaf.reader(), orderField);
                long at = order.advanceExact(doc) ? order.nextValue() : -1;
                throw new IllegalArgumentException("[lawindex] the law of corpus order [" + at + "] " + BARE
                    + ", so it cannot be ranked by meaning: the index was loaded without vectors or the row altered"
                    + " in place; ask by words, or load the state again with vectors");
            }
        }
    }
}
