package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.junit.jupiter.api.Test;

/** The lawindex query's hits against the spec's bm25(): the same laws in the same order. */
class RankingTest {
    private static List<Integer> top(Fixture fixture, List<String> words, int size) throws IOException {
        IndexSearcher searcher = new IndexSearcher(fixture.reader);
        searcher.setSimilarity(fixture.similarity);
        TopDocs top = searcher.search(new LawindexQuery("words", "order", words, fixture.similarity), size);
        List<Integer> orders = new ArrayList<>();
        for (ScoreDoc hit : top.scoreDocs) {
            orders.add(searcher.storedFields().document(hit.doc).getField("order").numericValue().intValue());
        }
        return orders;
    }

    private static List<Integer> specTop(Fixture fixture, List<String> words, int size) {
        List<Integer> orders = new ArrayList<>();
        for (double[] scored : fixture.spec.bm25(words)) {
            if (orders.size() == size) {
                break;
            }
            orders.add((int) scored[0]);
        }
        return orders;
    }

    @Test
    void theTopIsTheSpecsOnGeneratedCorpora() throws IOException {
        int questions = 0;
        for (long seed = 1; seed <= 10; seed++) {
            Random random = new Random(seed * 31);
            List<Boolean> ranked = new ArrayList<>();
            List<List<String>> docs = Fixture.corpus(random, 300, ranked);
            try (Fixture fixture = new Fixture(docs, ranked, seed)) {
                for (int q = 0; q < 60; q++) {
                    List<String> words = new ArrayList<>();
                    for (int w = 0; w < 1 + random.nextInt(5); w++) {
                        words.add(Fixture.questionWord(random, docs));
                    }
                    int size = q % 3 == 0 ? 300 : 8;
                    assertEquals(specTop(fixture, words, size), top(fixture, words, size), "seed " + seed + ", " + words);
                    questions++;
                }
            }
        }
        System.out.println("RankingTest: " + questions + " questions ranked as the spec ranks them");
    }

    /**
     * Two laws float64 tells apart and float32 ties: the same words, x y z, as often in each law but for y and z
     * swapped, all three in both laws (one n, so one idf). Their sums (x + y) + z and (x + z) + y differ in the
     * last bit of a double and not in a float. The one the spec ranks first is written second and is later in
     * corpus order, so Lucene's own tie-break (document id) would put it second.
     */
    @Test
    void aFloat32TieThatFloat64TellsApartKeepsTheSpecsOrder() throws IOException {
        for (int x = 1; x <= 6; x++) {
            for (int y = 1; y <= 6; y++) {
                for (int z = y + 1; z <= 6; z++) {
                    for (int filler = 0; filler <= 30; filler++) {
                        List<String> first = law(x, y, z, filler);
                        List<String> second = law(x, z, y, filler);
                        List<List<String>> docs = List.of(first, second, List.of("w", "w"), List.of("v"));
                        SpecPort spec = new SpecPort(docs, List.of(true, true, true, true));
                        List<double[]> ranking = spec.bm25(List.of("x", "y", "z"));
                        double a = ranking.get(0)[1];
                        double b = ranking.get(1)[1];
                        if (a == b || (float) a != (float) b) {
                            continue;
                        }
                        int better = (int) ranking.get(0)[0];
                        // The better law last in corpus order and in document order.
                        List<List<String>> laid = better == 0 ? List.of(second, first, docs.get(2), docs.get(3)) : docs;
                        try (Fixture fixture = new Fixture(laid, List.of(true, true, true, true), 1)) {
                            List<double[]> expected = fixture.spec.bm25(List.of("x", "y", "z"));
                            assertEquals(1, (int) expected.get(0)[0]);
                            assertNotEquals(expected.get(0)[1], expected.get(1)[1]);
                            assertEquals((float) expected.get(0)[1], (float) expected.get(1)[1], 0f);
                            assertEquals(List.of(1, 0), top(fixture, List.of("x", "y", "z"), 8));
                        }
                        System.out.println("RankingTest: float32 tie of " + a + " and " + b + " (x=" + x + ", y=" + y
                            + ", z=" + z + ", filler=" + filler + ") kept in the spec's order");
                        return;
                    }
                }
            }
        }
        throw new AssertionError("no float32 tie found among the laws tried");
    }

    private static List<String> law(int x, int y, int z, int filler) {
        List<String> words = new ArrayList<>();
        words.addAll(Arrays.asList(repeat("x", x)));
        words.addAll(Arrays.asList(repeat("y", y)));
        words.addAll(Arrays.asList(repeat("z", z)));
        words.addAll(Arrays.asList(repeat("f", filler)));
        return words;
    }

    private static String[] repeat(String word, int times) {
        String[] words = new String[times];
        Arrays.fill(words, word);
        return words;
    }

    @Test
    void exactTiesComeInCorpusOrderWhateverTheDocumentIds() throws IOException {
        List<List<String>> docs = new ArrayList<>();
        List<Boolean> ranked = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            docs.add(List.of("hydrant", "park", "w" + i));
            ranked.add(true);
        }
        try (Fixture fixture = new Fixture(docs, ranked, 99)) {
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                expected.add(i);
            }
            assertEquals(expected, top(fixture, List.of("hydrant"), 40));
            assertTrue(specTop(fixture, List.of("hydrant"), 40).equals(expected));
        }
    }
}
