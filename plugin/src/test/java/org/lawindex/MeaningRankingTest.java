package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * The plugin's ranking by meaning and hybrid against a port of the reference engine's (indexer/retrieval/meaning.py):
 * cosines summed in float64 from the vectors' components, a stable sort by score over corpus order, and hybrid's
 * weighted reciprocal-rank fusion of the spec's words ranking (SpecPort) and that meaning ranking. Vectors of
 * small grid units (-2 to 2) make exact ties common, so the corpus-order tie-break is exercised on every question;
 * laws are written shuffled over several segments with deleted rows among them, some without a vector (a deleted
 * row is never ranked, so never refused), while a live law without one refuses the question.
 * And the per-segment cache of vectors (GridVectors): charged once a segment, given back when the reader closes,
 * nothing kept by a request cancelled while it decodes.
 */
class MeaningRankingTest {
    private static final int DIMENSION = Embedder.DIMENSION;

    /** Laws with words and vectors (null: the law has none) in an in-memory index, as lawindex lays them out. */
    private static final class Laws implements AutoCloseable {
        final Directory directory = new ByteBuffersDirectory();
        final DirectoryReader reader;
        final SpecPort spec;
        final LawindexSimilarity similarity;
        final int[][] vectors;

        /** {@code bareGone}: some deleted rows have no vector (the cache's byte counts then differ by 1,032 a row). */
        Laws(List<List<String>> docs, int[][] vectors, long seed, boolean bareGone) throws IOException {
            this.vectors = vectors;
            List<Boolean> ranked = new ArrayList<>(Collections.nCopies(docs.size(), true));
            spec = new SpecPort(docs, ranked);
            similarity = new LawindexSimilarity(1.2, 0.75, (long) spec.size, spec.average);
            Random random = new Random(seed);
            List<Integer> shuffled = Fixture.shuffled(docs.size(), random);
            try (IndexWriter writer = new IndexWriter(directory, Fixture.config(similarity))) {
                int written = 0;
                for (int order : shuffled) {
                    writer.addDocument(law(order, docs.get(order), vectors[order]));
                    if (random.nextInt(6) == 0) {  // a replaced row: deleted below, never ranked
                        int[] was = bareGone && random.nextInt(3) == 0 ? null : vectors[random.nextInt(vectors.length)];
                        Document gone = law(-1, docs.get(order), was);
                        gone.add(new StringField("gone", "yes", Field.Store.NO));
                        writer.addDocument(gone);
                    }
                    if (++written % 37 == 0) {
                        writer.commit();
                    }
                }
                writer.deleteDocuments(new Term("gone", "yes"));
                writer.commit();
            }
            reader = DirectoryReader.open(directory);
        }

        private static Document law(int order, List<String> words, int[] vector) {
            Document doc = new Document();
            doc.add(new NumericDocValuesField("order", order));
            doc.add(new StoredField("order", order));
            if (!words.isEmpty()) {
                doc.add(new TextField("words", String.join(" ", words), Field.Store.NO));
            }
            if (vector != null) {
                doc.add(new BinaryDocValuesField(GridVectors.FIELD, stored(vector)));
            }
            return doc;
        }

        @Override
        public void close() throws IOException {
            reader.close();
            directory.close();
        }
    }

    /** A vector as OpenSearch's binary doc values hold it: a count of values (vInt 1), the length (vInt 1024),
     * 256 little-endian int32. */
    static BytesRef stored(int[] vector) {
        byte[] bytes = new byte[3 + 4 * vector.length];
        bytes[0] = 1;
        bytes[1] = (byte) 0x80;  // 1024 as a vInt: 0x80 0x08
        bytes[2] = 0x08;
        for (int d = 0; d < vector.length; d++) {
            for (int k = 0; k < 4; k++) {
                bytes[3 + 4 * d + k] = (byte) (vector[d] >>> (8 * k));
            }
        }
        return new BytesRef(bytes);
    }

    private static int[] vector(Random random, int spread) {
        int[] vector = new int[DIMENSION];
        for (int d = 0; d < DIMENSION; d++) {
            vector[d] = random.nextInt(2 * spread + 1) - spread;
        }
        return vector;
    }

    /** The reference's cosine: the components (grid units times 2^-20) multiplied and summed in float64. */
    private static double cosine(int[] row, int[] question) {
        double sum = 0.0;
        for (int d = 0; d < DIMENSION; d++) {
            sum += (row[d] * 0x1p-20) * (question[d] * 0x1p-20);
        }
        return sum;
    }

    /** The reference engine's answer: corpus orders best first, each with its exact score. */
    private static List<double[]> reference(Laws laws, List<String> words, int[] question, boolean hybrid, int k,
                                            double wordsWeight, double meaningWeight) {
        boolean near = false;
        for (int unit : question) {
            near |= unit != 0;
        }
        List<double[]> meaning = new ArrayList<>();
        for (int order = 0; near && order < laws.vectors.length; order++) {
            if (laws.vectors[order] != null) {
                meaning.add(new double[] {order, cosine(laws.vectors[order], question)});
            }
        }
        meaning.sort(Comparator.comparingDouble((double[] s) -> -s[1]));  // stable: ties in corpus order
        if (!hybrid) {
            return meaning;
        }
        Map<Integer, Integer> meaningRank = new HashMap<>();
        for (int r = 0; r < meaning.size(); r++) {
            meaningRank.put((int) meaning.get(r)[0], r + 1);
        }
        Map<Integer, Integer> wordsRank = new HashMap<>();
        List<double[]> byWords = laws.spec.bm25(words);  // near no row, hybrid is words' part alone
        for (int r = 0; r < byWords.size(); r++) {
            wordsRank.put((int) byWords.get(r)[0], r + 1);
        }
        List<double[]> fused = new ArrayList<>();
        for (int order = 0; order < laws.vectors.length; order++) {
            Integer w = wordsRank.get(order);
            Integer m = meaningRank.get(order);
            if (w == null && m == null) {
                continue;
            }
            double score = 0.0;
            if (w != null) {
                score += wordsWeight / (double) (k + w);
            }
            if (m != null) {
                score += meaningWeight / (double) (k + m);
            }
            fused.add(new double[] {order, score});
        }
        fused.sort(Comparator.comparingDouble((double[] s) -> -s[1]));
        return fused;
    }

    private static MeaningQuery query(Laws laws, List<String> words, int[] question, boolean hybrid, int k,
                                      double wordsWeight, double meaningWeight, Work.Breaker cache) {
        LawindexQuery byWords = hybrid ? new LawindexQuery("words", "order", words, laws.similarity) : null;
        return new MeaningQuery(String.join(" ", words), question, "order", hybrid, byWords, k, wordsWeight,
            meaningWeight, Work.UNLIMITED, cache);
    }

    private static int order(IndexSearcher searcher, int doc) throws IOException {
        return searcher.storedFields().document(doc).getField("order").numericValue().intValue();
    }

    @Test
    void meaningAndHybridAreTheReferencesOnGeneratedLaws() throws IOException {
        int questions = 0;
        for (long seed = 1; seed <= 6; seed++) {
            Random random = new Random(seed * 7919);
            List<Boolean> ranked = new ArrayList<>();
            List<List<String>> docs = Fixture.corpus(random, 260, ranked);
            for (int i = 0; i < docs.size(); i++) {
                if (!ranked.get(i)) {
                    docs.set(i, List.of());  // SpecPort's unranked laws: here every law is ranked, some wordless
                }
            }
            int[][] vectors = new int[docs.size()][];
            for (int i = 0; i < vectors.length; i++) {
                int kind = random.nextInt(12);
                // Duplicates of earlier vectors (exact ties), a few of large units, the rest of small units.
                vectors[i] = kind == 0 && i > 0 ? vectors[random.nextInt(i)] : vector(random, kind == 2 ? 1 << 19 : 2);
            }
            try (Laws laws = new Laws(docs, vectors, seed, true)) {
                IndexSearcher searcher = new IndexSearcher(laws.reader);
                searcher.setSimilarity(laws.similarity);
                for (int q = 0; q < 24; q++) {
                    List<String> words = new ArrayList<>();
                    for (int w = 0; w < 1 + random.nextInt(4); w++) {
                        words.add(Fixture.questionWord(random, docs));
                    }
                    int[] question = q == 0 ? new int[DIMENSION] : vector(random, q % 4 == 0 ? 1 << 19 : 2);
                    boolean hybrid = q % 2 == 1;
                    int k = 1 + random.nextInt(80);
                    double wordsWeight = q % 6 == 1 ? 0.0 : 1.0 + random.nextInt(3);
                    double meaningWeight = q % 6 == 3 ? 0.0 : 1.0 + random.nextInt(5);
                    List<double[]> expected = reference(laws, words, question, hybrid, k, wordsWeight, meaningWeight);
                    MeaningQuery query = query(laws, words, question, hybrid, k, wordsWeight, meaningWeight, Work.UNLIMITED);
                    MeaningRanking ranking = query.ranking(searcher);
                    // The collector's order: float descending, then document id. Compared whole here, for every
                    // way; through IndexSearcher for hybrid too (Lucene 9's collector asserts scores >= 0, and a
                    // cosine can be below 0: OpenSearch runs without assertions, as on main).
                    List<Integer> collected = collectorOrder(laws, ranking);
                    assertEquals(expected.size(), collected.size(), "seed " + seed + " question " + q);
                    for (int r = 0; r < expected.size(); r++) {
                        String at = "seed " + seed + " question " + q + " rank " + (r + 1);
                        int doc = collected.get(r);
                        assertEquals((int) expected.get(r)[0], order(searcher, doc), at);
                        assertEquals(expected.get(r)[1], ranking.exact(doc), 0.0, at);
                    }
                    if (hybrid && !expected.isEmpty()) {
                        TopDocs top = searcher.search(query, expected.size());
                        for (int r = 0; r < expected.size(); r++) {
                            assertEquals(collected.get(r), top.scoreDocs[r].doc, "seed " + seed + " question " + q);
                        }
                        // A smaller page is the first rows of the whole: the floats keep the order whatever the size.
                        TopDocs page = searcher.search(query, Math.min(12, expected.size()));
                        for (int r = 0; r < page.scoreDocs.length; r++) {
                            assertEquals(top.scoreDocs[r].doc, page.scoreDocs[r].doc);
                        }
                    }
                    questions++;
                }
            }
        }
        System.out.println("MeaningRankingTest: " + questions + " questions ranked as the reference ranks them");
    }

    @Test
    void aLiveLawWithoutAVectorRefusesMeaningAndHybridNamingItsOrder() throws IOException {
        Random random = new Random(11);
        List<Boolean> ranked = new ArrayList<>();
        List<List<String>> docs = Fixture.corpus(random, 90, ranked);
        int[][] vectors = new int[docs.size()][];
        for (int i = 0; i < vectors.length; i++) {
            vectors[i] = i == 41 ? null : vector(random, 2);
        }
        try (Laws laws = new Laws(docs, vectors, 11, true)) {
            IndexSearcher searcher = new IndexSearcher(laws.reader);
            searcher.setSimilarity(laws.similarity);
            List<String> words = List.of(Fixture.questionWord(random, docs));
            for (boolean hybrid : new boolean[] {false, true}) {
                MeaningQuery query = query(laws, words, vector(random, 2), hybrid, 60, 1.0, 4.0, Work.UNLIMITED);
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> query.ranking(searcher), "hybrid " + hybrid);
                assertTrue(refused.getMessage().contains("the law of corpus order [41] " + MeaningRanking.BARE),
                    refused.getMessage());
                // A question with nothing to embed is near no row: nothing refused, no row by meaning, and hybrid
                // words' part alone.
                MeaningQuery none = query(laws, words, new int[DIMENSION], hybrid, 60, 1.0, 4.0, Work.UNLIMITED);
                assertEquals(hybrid ? laws.spec.bm25(words).size() : 0, collectorOrder(laws, none.ranking(searcher)).size());
            }
        }
    }

    /** The rows a ranking hands the collector, in the order Lucene's collector ranks them: float descending, then
     * document id (global). */
    private static List<Integer> collectorOrder(Laws laws, MeaningRanking ranking) {
        return CollectedTest.collectorOrder(Collected.of(ranking, laws.reader, 1f), laws.reader);
    }

    /** A breaker that counts what is held. */
    private static final class Counted implements Work.Breaker {
        final AtomicLong held = new AtomicLong();
        final AtomicInteger charges = new AtomicInteger();

        @Override
        public void charge(long bytes, String label) {
            charges.incrementAndGet();
            held.addAndGet(bytes);
        }

        @Override
        public void release(long bytes) {
            held.addAndGet(-bytes);
        }
    }

    private static Laws small(long seed) throws IOException {
        Random random = new Random(seed);
        List<List<String>> docs = new ArrayList<>();
        int[][] vectors = new int[300][];
        for (int i = 0; i < vectors.length; i++) {
            docs.add(List.of("w" + random.nextInt(20), "x" + random.nextInt(9)));
            vectors[i] = vector(random, 3);
        }
        return new Laws(docs, vectors, seed, false);
    }

    @Test
    void eachSegmentIsDecodedOnceChargedAndGivenBackWhenItsReaderCloses() throws IOException {
        Counted cache = new Counted();
        Random random = new Random(5);
        long before = GridVectors.cachedBytes();
        int segments;
        long rows = 0;
        try (Laws laws = small(11)) {
            segments = laws.reader.leaves().size();
            for (var leaf : laws.reader.leaves()) {
                rows += leaf.reader().maxDoc();  // deleted rows too: the core holds them, the reader skips them
            }
            IndexSearcher searcher = new IndexSearcher(laws.reader);
            for (int q = 0; q < 5; q++) {
                query(laws, List.of("w1"), vector(random, 2), q % 2 == 0, 5, 1.0, 4.0, cache).ranking(searcher);
            }
            assertTrue(segments > 1, segments + " segments");
            assertEquals(segments, cache.charges.get(), "one charge a segment, whatever the questions");
            assertEquals(GridVectors.ROW_BYTES * rows, cache.held.get());
            assertEquals(before + GridVectors.ROW_BYTES * rows, GridVectors.cachedBytes());
        }
        assertEquals(0, cache.held.get(), "every byte given back when the segments closed");
        assertEquals(before, GridVectors.cachedBytes());
    }

    @Test
    void aRequestCancelledWhileItDecodesKeepsNothing() throws IOException {
        Counted cache = new Counted();
        try (Laws laws = small(12)) {
            AtomicInteger checks = new AtomicInteger();
            Work work = new Work(Work.UNLIMITED, () -> {
                if (checks.incrementAndGet() > 3) {
                    throw new IllegalStateException("cancelled");
                }
            });
            int[] question = vector(new Random(1), 2);
            assertThrows(IllegalStateException.class, () -> MeaningRanking.of(laws.reader, "order", question, false,
                null, new MeaningRanking.Rrf(5, 1.0, 4.0), cache, work));
            long held = cache.held.get();
            // Segments decoded before the cancellation stay cached (charged); the one cancelled left nothing.
            assertTrue(held < GridVectors.ROW_BYTES * laws.reader.maxDoc(), held + " bytes held");
            assertEquals(0, held % GridVectors.ROW_BYTES);
            // The next question decodes the rest and answers.
            IndexSearcher searcher = new IndexSearcher(laws.reader);
            MeaningRanking ranking = query(laws, List.of("w1"), question, false, 5, 1.0, 4.0, cache).ranking(searcher);
            assertEquals(GridVectors.ROW_BYTES * laws.reader.maxDoc(), cache.held.get());
            assertEquals(laws.reader.numDocs(), ranking.ranked().length, "every live row ranked");
        }
        assertEquals(0, cache.held.get());
    }

    @Test
    void theCacheBreakerRefusingLeavesNothingCharged() throws IOException {
        try (Laws laws = small(13)) {
            Work.Breaker refusing = new Work.Breaker() {
                @Override
                public void charge(long bytes, String label) {
                    throw new IllegalStateException("[fielddata] Data too large: " + label);
                }

                @Override
                public void release(long bytes) {
                    throw new AssertionError("nothing was charged");
                }
            };
            IndexSearcher searcher = new IndexSearcher(laws.reader);
            assertThrows(IllegalStateException.class,
                () -> query(laws, List.of("w1"), vector(new Random(2), 2), false, 5, 1.0, 4.0, refusing).ranking(searcher));
        }
    }

    @Test
    void theCacheKeepsToItsBoundDroppingTheSegmentsLeastRecentlyAsked() throws IOException {
        Counted cache = new Counted();
        Counted request = new Counted();
        Random random = new Random(21);
        try (Laws laws = small(14)) {
            IndexSearcher searcher = new IndexSearcher(laws.reader);
            long largest = 0;
            for (var leaf : laws.reader.leaves()) {
                largest = Math.max(largest, GridVectors.ROW_BYTES * leaf.reader().maxDoc());
            }
            long bound = 2 * largest + GridVectors.ROW_BYTES;  // two segments at most, the rest asked evicts
            GridVectors.limit(bound);
            try {
                long before = GridVectors.cachedBytes();
                List<String> words = List.of("w1");
                int[] question = vector(random, 2);
                List<Integer> whole = null;
                for (int q = 0; q < 3; q++) {
                    MeaningQuery query = new MeaningQuery("w1", question, "order", false, null, 5, 1.0, 4.0, request, cache);
                    List<Integer> got = collectorOrder(laws, query.ranking(searcher));
                    if (whole != null) {
                        assertEquals(whole, got, "the same answer, cached or not");
                    }
                    whole = got;
                    assertTrue(cache.held.get() <= bound, cache.held.get() + " bytes cached, bound " + bound);
                    assertTrue(GridVectors.cachedBytes() - before <= bound);
                    assertEquals(0, request.held.get(), "what a request decoded alone is given back with it");
                }
                assertTrue(cache.charges.get() > laws.reader.leaves().size(), "segments evicted and read again");
                assertEquals(reference(laws, words, question, false, 5, 1.0, 4.0).size(), whole.size());
                // A bound below one segment: nothing is cached, every segment is read for its request alone.
                GridVectors.limit(GridVectors.ROW_BYTES);
                Counted none = new Counted();
                new MeaningQuery("w1", question, "order", false, null, 5, 1.0, 4.0, request, none).ranking(searcher);
                assertEquals(0, none.charges.get());
                assertTrue(request.charges.get() > 0);
                assertEquals(0, request.held.get());
            } finally {
                GridVectors.limit(64L << 20);
            }
        }
        assertEquals(0, cache.held.get());
    }
}
