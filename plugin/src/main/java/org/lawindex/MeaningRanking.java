package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.IntroSorter;

/**
 * The reference engine's ranking by meaning or hybrid (indexer/retrieval/meaning.py) on one shard, computed
 * whole before Lucene collects a hit:
 *
 * <ul>
 *   <li>meaning: every row with a vector (the field {@code vector_grid}: one little-endian int32 a dimension, 256
 *       for the road table, up to 4,096 for a user's own vectors, each component times 2^20), by its cosine with the question's vector: the exact long dot product of the
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
final class MeaningRanking implements Ranked {
    static final String GRID_FIELD = GridVectors.FIELD;
    final boolean hybrid;
    final Rrf rrf;
    /** Per global document (0: no rank). */
    private final double[] exact;
    private final long[] dots;
    private final int[] meaningRanks;
    private final int[] wordsRanks;
    /** The ranked rows (global ids), best first. */
    private final int[] ranked;
    final Ranking words;

    private MeaningRanking(boolean hybrid, Rrf rrf, double[] exact, long[] dots, int[] meaningRanks, int[] wordsRanks,
                           int[] ranked, Ranking words) {
        this.hybrid = hybrid;
        this.rrf = rrf;
        this.exact = exact;
        this.dots = dots;
        this.meaningRanks = meaningRanks;
        this.wordsRanks = wordsRanks;
        this.ranked = ranked;
        this.words = words;
    }

    /** Hybrid's weighted reciprocal-rank fusion: k and the two weights (docs/fusion.md; contract/request.json). */
    static final class Rrf {
        final int k;
        final double wordsWeight;
        final double meaningWeight;

        Rrf(int k, double wordsWeight, double meaningWeight) {
            this.k = k;
            this.wordsWeight = wordsWeight;
            this.meaningWeight = meaningWeight;
        }

        /**
         * A row's fused score: {@code 0.0 + ww / (k + w) + mw / (k + m)}, a part for each way that reaches it (rank
         * 0: not reached), added as the reference engine adds it. The weights are 0 or from 1e-6 to 1e6 and k from 1
         * to 10,000 (Contract), so a score is 0.0 or a normal float64 of at most 1e6, whose float is normal too:
         * never -0.0, NaN or Infinity, so its bits order as it does.
         */
        double score(int wordsRank, int meaningRank) {
            double score = 0.0;
            if (wordsRank > 0) {
                score += wordsWeight / (double) (k + wordsRank);
            }
            if (meaningRank > 0) {
                score += meaningWeight / (double) (k + meaningRank);
            }
            return score;
        }
    }

    /**
     * The ranking of every row; {@code words} (hybrid: null where the words field is not mapped) the shard's exact
     * words ranking. Each segment's vectors come from {@link GridVectors} (decoded once per segment core, charged
     * to {@code cacheBreaker}); what this question alone holds (about 50 bytes a document of the shard) is charged
     * to {@code work}, and its cancellation checked every {@link GridVectors#CHECK_EVERY} rows. The steps: the
     * segments' vectors ({@link #segments}), meaning's ranking ({@link #byMeaning}), each way's ranks, then
     * meaning's scores ({@link #cosines}) or hybrid's ({@link #fuse}).
     */
    static MeaningRanking of(IndexReader reader, String orderField, int[] question, boolean hybrid, Ranking words,
                             Rrf rrf, Work.Breaker cacheBreaker, Work work) throws IOException {
        int maxDoc = reader.maxDoc();
        List<LeafReaderContext> leaves = reader.leaves();
        // Near no row (nothing to embed): no segment is read, and hybrid is words' part alone.
        GridVectors[] segments = near(question) ? segments(leaves, orderField, question.length, cacheBreaker, work)
            : new GridVectors[leaves.size()];
        int rows = 0;
        for (GridVectors segment : segments) {
            rows += segment == null ? 0 : segment.rows();
        }
        int[] byWords = hybrid && words != null ? words.ranked() : new int[0];
        // Per document of the shard: dots, orders, exact (8 each), two ranks and the collector's float (4 each); per
        // row of a sort (meaning's, and hybrid's of every row reached): its keys (8 + 8 + 4) twice, its packed key
        // (8), and the ranking's ids and leaf ids (4 each).
        work.charge(40L * maxDoc + 56L * (rows + (hybrid ? rows + byWords.length : 0)));
        long[] dots = new long[maxDoc];
        long[] orders = new long[maxDoc];
        Rows byMeaning = byMeaning(leaves, segments, question, rows, dots, orders, work);
        int[] meaningRanks = ranks(byMeaning.ids, byMeaning.count, maxDoc);
        int[] wordsRanks = ranks(byWords, byWords.length, maxDoc);
        double[] exact = new double[maxDoc];
        int[] ranked;
        if (hybrid) {
            ordersOfBare(byWords, meaningRanks, orders, leaves, orderField);
            Rows fused = fuse(rrf, byMeaning, byWords, meaningRanks, wordsRanks, orders, exact);
            work.checkCancelled();
            fused.sort();
            ranked = Arrays.copyOf(fused.ids, fused.count);
        } else {
            ranked = cosines(byMeaning, dots, exact);
        }
        return new MeaningRanking(hybrid, rrf, exact, dots, meaningRanks, wordsRanks, ranked, words);
    }

    /** Whether the question's vector is near any row: not the zero vector. */
    static boolean near(int[] question) {
        for (int unit : question) {
            if (unit != 0) {
                return true;
            }
        }
        return false;
    }

    /** Each segment's vectors (kept per segment core), a live law without one refused. */
    private static GridVectors[] segments(List<LeafReaderContext> leaves, String orderField, int dimension,
                                          Work.Breaker cacheBreaker, Work work) throws IOException {
        GridVectors[] segments = new GridVectors[leaves.size()];
        for (LeafReaderContext leaf : leaves) {
            work.checkCancelled();
            segments[leaf.ord] = GridVectors.of(leaf.reader(), orderField, dimension, cacheBreaker, work);
            refuseBare(leaf, segments[leaf.ord], orderField);
        }
        return segments;
    }

    /**
     * Meaning: every live row with a vector, by dot product (the cosine's order exactly), then corpus order, then
     * document id; sorted as primitive keys (boxed Integers and a comparator took milliseconds). Fills each row's
     * dot product and corpus order.
     */
    private static Rows byMeaning(List<LeafReaderContext> leaves, GridVectors[] segments, int[] question, int rows,
                                  long[] dots, long[] orders, Work work) {
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
        return byMeaning;
    }

    /** Per document: its rank (1 the best) in {@code ids[0..count)}, 0 where it has none. */
    static int[] ranks(int[] ids, int count, int maxDoc) {
        int[] ranks = new int[maxDoc];
        for (int r = 0; r < count; r++) {
            ranks[ids[r]] = r + 1;
        }
        return ranks;
    }

    /** Meaning's scores: each ranked row's cosine, the dot product times 2^-40 (exact). */
    private static int[] cosines(Rows byMeaning, long[] dots, double[] exact) {
        int[] ranked = Arrays.copyOf(byMeaning.ids, byMeaning.count);
        for (int global : ranked) {
            exact[global] = dots[global] * 0x1p-40;
        }
        return ranked;
    }

    /** The corpus order of each law words reach that has no vector (none in an index lawindex loads). */
    private static void ordersOfBare(int[] byWords, int[] meaningRanks, long[] orders, List<LeafReaderContext> leaves,
                                     String orderField) throws IOException {
        for (int global : byWords) {
            if (meaningRanks[global] == 0) {
                orders[global] = orderOf(leaves, orderField, global);
            }
        }
    }

    /**
     * Hybrid: every row reached (all rows with a vector, and any law words reach that has none), each with its fused
     * score ({@link Rrf#score}, written to {@code exact}) as its key, unsorted.
     */
    static Rows fuse(Rrf rrf, Rows byMeaning, int[] byWords, int[] meaningRanks, int[] wordsRanks, long[] orders,
                     double[] exact) {
        int count = byMeaning.count;
        Rows fused = new Rows(count + byWords.length);
        for (int i = 0; i < count + byWords.length; i++) {
            int global = i < count ? byMeaning.ids[i] : byWords[i - count];
            if (i >= count && meaningRanks[global] != 0) {
                continue;  // reached by both ways: fused once
            }
            exact[global] = rrf.score(wordsRanks[global], meaningRanks[global]);
            fused.add(Double.doubleToLongBits(exact[global]), orders[global], global);
        }
        return fused;
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
    static final class Rows extends IntroSorter {
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

    @Override
    public int[] ranked() {
        return ranked;
    }

    @Override
    public double exact(int global) {
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

    /**
     * A hit's exact float64 score, cosine and meaning rank, and for hybrid its words rank and BM25 sum where words
     * reach it (lawindex's Python reads them there: docs/plugin.md).
     */
    @Override
    public Explanation explain(LeafReaderContext leaf, int doc, Collected collected) {
        int global = leaf.docBase + doc;
        if (!collected.matches(global)) {
            return Explanation.noMatch(hybrid ? "neither way reaches the row" : "the row has no vector ["
                + GRID_FIELD + "], or the question has nothing to embed");
        }
        float score = collected.score(global);
        Explanation exactScore = Explanation.match(exact[global], "exact score");
        Explanation cosine = Explanation.match(cosine(global),
            "cosine: the exact dot product of the grid vectors (long, times 2^-40)");
        Explanation meaningRank = Explanation.match(meaningRanks[global], "meaning rank");
        if (!hybrid) {
            return Explanation.match(score, "lawindex by meaning: the cosine " + exact[global]
                + " (float64) as a float, kept above the rows ranked below it", exactScore, cosine, meaningRank);
        }
        int w = wordsRanks[global];
        String how = "lawindex hybrid: 0.0 + " + rrf.wordsWeight + " / (" + rrf.k + " + words rank) + "
            + rrf.meaningWeight + " / (" + rrf.k + " + meaning rank), a part for each way that reaches"
            + " the row, = " + exact[global] + " (float64), as a float kept above the rows ranked below it";
        if (w == 0) {
            return Explanation.match(score, how, exactScore, cosine, meaningRank);
        }
        return Explanation.match(score, how, exactScore, cosine, meaningRank, Explanation.match(w, "words rank"),
            Explanation.match(words.sum(global), "words score: the spec's BM25 (float64)"));
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
