package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import org.apache.lucene.index.FieldInvertState;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/** The plugin's arithmetic against V8's, bit for bit: v8-bm25.tsv is what Node computed (make-v8-bm25.js). */
class Bm25Test {
    private static double hex(String bits) {
        return Double.longBitsToDouble(Long.parseUnsignedLong(bits, 16));
    }

    @Test
    void idfAndTermAreV8sBitForBit() throws IOException {
        int rows = 0;
        int mathLogDiffers = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                Objects.requireNonNull(getClass().getResourceAsStream("/v8-bm25.tsv")), StandardCharsets.UTF_8))) {
            in.readLine();
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] f = line.split("\t");
                long size = Long.parseLong(f[0]);
                long n = Long.parseLong(f[1]);
                int tf = Integer.parseInt(f[2]);
                long length = Long.parseLong(f[3]);
                double average = hex(f[4]);
                double idf = Bm25.idf(size, n);
                assertEquals(hex(f[5]), idf, 0.0, line);
                assertEquals(Double.doubleToRawLongBits(hex(f[5])), Double.doubleToRawLongBits(idf), line);
                double term = Bm25.term(idf, tf, length, average, Bm25.K1, Bm25.B);
                assertEquals(Double.doubleToRawLongBits(hex(f[6])), Double.doubleToRawLongBits(term), line);
                double argument = 1 + ((double) size - n + 0.5) / (n + 0.5);
                if (Math.log(argument) != StrictMath.log(argument)) {
                    mathLogDiffers++;
                }
                rows++;
            }
        }
        assertEquals(6000, rows);
        System.out.println("Bm25Test: " + rows + " rows equal V8's bit for bit; Math.log differs from V8 on " + mathLogDiffers);
    }

    @Test
    void theSimilarityScoresExactLengthsAsTheSpec() {
        LawindexSimilarity similarity = new LawindexSimilarity(1.2, 0.75, 43L, 25.5);
        // Lucene's BM25 keeps 41 as 40 (one byte); this similarity keeps every length.
        FieldInvertState state = new FieldInvertState(10, "words", IndexOptions.DOCS_AND_FREQS_AND_POSITIONS, 0, 41, 0, 0, 41, 1);
        assertEquals(41, similarity.computeNorm(state));
        CollectionStatistics collection = new CollectionStatistics("words", 50, 40, 1000, 900);
        TermStatistics term = new TermStatistics(new BytesRef("hydrant"), 3, 4);
        float score = similarity.scorer(1f, collection, term).score(2f, 41);
        double idf = StrictMath.log(1 + (43.0 - 3 + 0.5) / (3 + 0.5));
        assertEquals((float) ((idf * 2 * (1.2 + 1)) / (2 + 1.2 * (1 - 0.75 + (0.75 * 41) / 25.5))), score, 0f);
        assertTrue(similarity.scorer(1f, collection, term).score(2f, 40) > score);
    }

    @Test
    void nBelowLucenesDocCountIsRaisedSoOpenSearchsCheckPasses() {
        LawindexSimilarity similarity = new LawindexSimilarity(1.2, 0.75, 0L, 1.0);
        CollectionStatistics made = new CollectionStatistics("some_field", 1200, 1100, 3000, 2000);
        float score = similarity.scorer(1f, made, new TermStatistics(new BytesRef("some_value"), 100, 130)).score(1f, 10);
        assertTrue(score > 0, "score " + score);
    }
}
