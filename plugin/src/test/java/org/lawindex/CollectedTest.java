package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Explanation;
import org.junit.jupiter.api.Test;

/**
 * The floats handed to Lucene's collector ({@link Collected}) keep the exact order, score descending then corpus
 * order, where float64 scores differ but their floats tie, where they tie exactly, near 0 and below it, for every
 * boost the query takes (1 and the powers of two from 2^-20 to 2^20): a property over random rankings whose document
 * ids are not corpus order.
 */
class CollectedTest {
    /** A ranking given whole: exact scores per document, the order the exact order (corpus order: {@code orders}). */
    static final class Given implements Ranked {
        final double[] exact;
        final int[] ranked;

        Given(double[] exact, int[] ranked) {
            this.exact = exact;
            this.ranked = ranked;
        }

        /** Documents {@code matching} (ids) with scores {@code exact}, in the exact order with {@code orders}. */
        static Given of(double[] exact, long[] orders, List<Integer> matching) {
            List<Integer> sorted = new ArrayList<>(matching);
            sorted.sort(Comparator.<Integer>comparingDouble(d -> -exact[d]).thenComparingLong(d -> orders[d]));
            return new Given(exact, sorted.stream().mapToInt(Integer::intValue).toArray());
        }

        @Override
        public int[] ranked() {
            return ranked;
        }

        @Override
        public double exact(int global) {
            return exact[global];
        }

        @Override
        public Explanation explain(LeafReaderContext leaf, int doc, Collected collected) {
            return Explanation.match(collected.score(leaf, doc), "given");
        }
    }

    /** The matching documents (global ids) as Lucene's collector ranks them: float descending, then id. */
    static List<Integer> collectorOrder(Collected collected, IndexReader reader) {
        List<Integer> docs = new ArrayList<>();
        for (LeafReaderContext leaf : reader.leaves()) {
            for (int doc : collected.docs(leaf.ord)) {
                docs.add(leaf.docBase + doc);
            }
        }
        docs.sort((x, y) -> {
            int c = Float.compare(collected.score(y), collected.score(x));
            return c != 0 ? c : Integer.compare(x, y);
        });
        return docs;
    }

    /** Scores that float32 ties but float64 tells apart, exact ties, zeros and negatives, tiny and large ones. */
    private static double score(Random random, double[] earlier, int filled) {
        switch (random.nextInt(7)) {
            case 0:
                return filled > 0 ? earlier[random.nextInt(filled)] : 1.0;  // an exact tie
            case 1:
                if (filled == 0) {
                    return 0.5;
                }
                double near = earlier[random.nextInt(filled)];  // a float32 tie float64 tells apart
                return random.nextBoolean() ? Math.nextUp(near) : Math.nextDown(near);
            case 2:
                return random.nextInt(3) == 0 ? 0.0 : (random.nextInt(2001) - 1000) * 0x1p-40;  // cosines near 0
            case 3:
                return 1e-6 / (10_000 + random.nextInt(100_000));  // the least fused score
            case 4:
                return 1e6 * random.nextDouble();  // up to the greatest fused score
            default:
                return random.nextDouble() * 2 - 1;
        }
    }

    @Test
    void theCollectorsOrderIsTheExactOrderForEveryBoost() throws IOException {
        int cases = 0;
        for (long seed = 1; seed <= 60; seed++) {
            Random random = new Random(seed);
            try (Shard shard = new Shard(1 + random.nextInt(300), random)) {
                int maxDoc = shard.reader.maxDoc();
                double[] exact = new double[maxDoc];
                long[] orders = new long[maxDoc];
                List<Integer> matching = new ArrayList<>();
                for (int doc = 0; doc < maxDoc; doc++) {
                    exact[doc] = score(random, exact, doc);
                    orders[doc] = random.nextInt(maxDoc);  // corpus order is not the document id
                    if (random.nextInt(5) != 0) {
                        matching.add(doc);
                    }
                }
                Given given = Given.of(exact, orders, matching);
                for (int power = -20; power <= 20; power++) {
                    float boost = (float) Math.scalb(1.0, power);
                    Collected collected = Collected.of(given, shard.reader, boost);
                    List<Integer> expected = new ArrayList<>();
                    for (int doc : given.ranked) {
                        expected.add(doc);
                        assertTrue(collected.score(doc) >= (float) (exact[doc] * boost), "seed " + seed);
                    }
                    assertEquals(expected, collectorOrder(collected, shard.reader), "seed " + seed + " boost 2^" + power);
                    cases++;
                }
            }
        }
        System.out.println("CollectedTest: " + cases + " rankings handed to the collector in the exact order");
    }

    @Test
    void eachLeafHoldsItsMatchesAscendingAndTheMaxScoreIsTheFirsts() throws IOException {
        Random random = new Random(5);
        try (Shard shard = new Shard(200, random)) {
            double[] exact = new double[200];
            List<Integer> matching = new ArrayList<>();
            for (int doc = 0; doc < 200; doc += 3) {
                exact[doc] = doc;
                matching.add(doc);
            }
            Given given = Given.of(exact, new long[200], matching);
            Collected collected = Collected.of(given, shard.reader, 1f);
            List<Integer> all = new ArrayList<>();
            for (LeafReaderContext leaf : shard.reader.leaves()) {
                int previous = -1;
                for (int doc : collected.docs(leaf.ord)) {
                    assertTrue(doc > previous && doc < leaf.reader().maxDoc());
                    previous = doc;
                    all.add(leaf.docBase + doc);
                }
            }
            assertEquals(matching, all);
            assertEquals(198f, collected.maxScore());
            assertTrue(Float.isNaN(collected.score(1)));
            assertEquals(0, collected.raised(198, 198.0));
            assertArrayEquals(new int[0], Collected.of(Given.of(exact, new long[200], List.of()), shard.reader, 1f).docs(0));
        }
    }

    @Test
    void aScoreTheBoostWouldOverflowIsRefused() throws IOException {
        try (Shard shard = new Shard(3, new Random(1))) {
            Given given = Given.of(new double[] {1e30, 2.0, 1.0}, new long[3], List.of(0, 1, 2));
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> Collected.of(given, shard.reader, 1e10f));
            assertTrue(refused.getMessage().startsWith("[lawindex] boost: "), refused.getMessage());
        }
    }
}
