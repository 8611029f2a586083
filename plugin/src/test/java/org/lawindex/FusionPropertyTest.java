package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * Hybrid's fusion over every weight and k the contract takes (a weight 0 or from 1e-6 to 1e6, k from 1 to 10,000),
 * against reference arithmetic written here as indexer/retrieval/meaning.py's {@code score} and {@code fuse} write it
 * ({@code total = 0.0; total += float(ww) / (k + w); total += float(mw) / (k + m)}, a stable sort by -score over
 * corpus order): the plugin's fused scores are the reference's to the bit, every one a finite float, and Lucene's
 * collector, handed {@link Collected}'s floats, ranks the rows as the reference does, whatever their document ids.
 */
class FusionPropertyTest {
    private static double weight(Random random) {
        switch (random.nextInt(6)) {
            case 0:
                return 0.0;
            case 1:
                return 1e-6;
            case 2:
                return 1e6;
            case 3:
                return Math.nextDown(1e6);
            default:
                return Math.pow(10, -6 + 12 * random.nextDouble());  // log-uniform over the range
        }
    }

    private static int k(Random random) {
        int pick = random.nextInt(4);
        return pick == 0 ? 1 : pick == 1 ? 10_000 : 1 + random.nextInt(pick == 2 ? 60 : 10_000);
    }

    /** A ranking of some of {@code rows} (ids), best first. */
    private static int[] ranking(Random random, int rows, double share) {
        List<Integer> ids = new ArrayList<>();
        for (int id = 0; id < rows; id++) {
            if (random.nextDouble() < share) {
                ids.add(id);
            }
        }
        Collections.shuffle(ids, random);
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    @Test
    void fusedScoresAndTheCollectorsOrderAreTheReferencesForEveryWeightAndK() throws IOException {
        int cases = 0;
        for (long seed = 1; seed <= 40; seed++) {
            Random random = new Random(seed * 104_729);
            try (Shard shard = new Shard(1 + random.nextInt(400), random)) {
                int rows = shard.reader.maxDoc();
                long[] orders = new long[rows];  // corpus order, not the document id
                List<Integer> shuffled = Fixture.shuffled(rows, random);
                for (int id = 0; id < rows; id++) {
                    orders[id] = shuffled.get(id);
                }
                for (int c = 0; c < 50; c++) {
                    double ww = weight(random);
                    double mw = ww == 0.0 && random.nextBoolean() ? 1e-6 : weight(random);
                    if (ww == 0.0 && mw == 0.0) {
                        mw = 4.0;
                    }
                    int k = k(random);
                    int[] byMeaning = ranking(random, rows, random.nextBoolean() ? 1.0 : 0.7);
                    int[] byWords = ranking(random, rows, random.nextDouble());
                    check(shard, orders, byMeaning, byWords, new MeaningRanking.Rrf(k, ww, mw), "seed " + seed + " case " + c);
                    cases++;
                }
            }
        }
        System.out.println("FusionPropertyTest: " + cases + " fusions (weights 0 and 1e-6..1e6, k 1..10000) as the reference");
    }

    private static void check(Shard shard, long[] orders, int[] byMeaning, int[] byWords, MeaningRanking.Rrf rrf, String at) {
        int rows = orders.length;
        int[] meaningRanks = MeaningRanking.ranks(byMeaning, byMeaning.length, rows);
        int[] wordsRanks = MeaningRanking.ranks(byWords, byWords.length, rows);
        // The reference: each row reached, its score as meaning.py adds it, best first, ties in corpus order.
        double[] reference = new double[rows];
        List<Integer> reached = new ArrayList<>();
        for (int id = 0; id < rows; id++) {
            Integer w = wordsRanks[id] == 0 ? null : wordsRanks[id];
            Integer m = meaningRanks[id] == 0 ? null : meaningRanks[id];
            if (w == null && m == null) {
                continue;
            }
            double total = 0.0;
            if (w != null) {
                total += rrf.wordsWeight / (rrf.k + w);
            }
            if (m != null) {
                total += rrf.meaningWeight / (rrf.k + m);
            }
            reference[id] = total;
            reached.add(id);
        }
        reached.sort(Comparator.<Integer>comparingDouble(id -> -reference[id]).thenComparingLong(id -> orders[id]));
        // The plugin's: MeaningRanking's fusion step, sorted, then the collector's floats.
        MeaningRanking.Rows meaning = new MeaningRanking.Rows(byMeaning.length);
        for (int id : byMeaning) {
            meaning.add(0L, orders[id], id);
        }
        double[] exact = new double[rows];
        MeaningRanking.Rows fused = MeaningRanking.fuse(rrf, meaning, byWords, meaningRanks, wordsRanks, orders, exact);
        fused.sort();
        int[] ranked = java.util.Arrays.copyOf(fused.ids, fused.count);
        for (int id : reached) {
            assertEquals(Double.doubleToLongBits(reference[id]), Double.doubleToLongBits(exact[id]), at);
        }
        Collected collected = Collected.of(new CollectedTest.Given(exact, ranked), shard.reader, 1f);
        List<Integer> collector = CollectedTest.collectorOrder(collected, shard.reader);
        assertEquals(reached, collector, at);
        for (int id : reached) {
            assertTrue(Float.isFinite(collected.score(id)) && collected.score(id) >= (float) exact[id], at);
        }
    }
}
