package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.ParsingException;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.ToXContent;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;

/**
 * A question's own vector (issue 46 item 3, docs/meaning.md): the query's {@code vector} parameter parsed and
 * refused by contract/request.json's rules, carried whole on the wire (at the end of the builder's stream) and in
 * toXContent, part of the builder's equality; an index's dimension from its {@code _meta}; the grid of a given
 * vector by the rule of a row's (no square overflows within the contract's bound); and a shard of 48-dimension
 * vectors ranked by exact cosine, as a reference computed here from the definition ranks it.
 */
class OwnVectorTest {
    private static final int DIMENSION = 48;

    private static String body(String vector, String by) {
        return "{\"question\": \"q\", \"by\": \"" + by + "\", \"vector\": " + vector + "}";
    }

    private static String refusal(String body) {
        return assertThrows(ParsingException.class, () -> ContractTest.parse(body), body).getMessage();
    }

    @Test
    void theVectorIsParsedAndRefusedByTheContract() throws IOException {
        LawindexQueryBuilder built = ContractTest.parse(body("[1, -0.5, 2.5e-3, 1e150]", "meaning"));
        assertArrayEquals(new double[] {1, -0.5, 2.5e-3, 1e150}, built.vector());
        assertNull(ContractTest.parse("{\"question\": \"q\", \"by\": \"hybrid\"}").vector());
        String out = "not a finite number from -1e+150 to 1e+150";
        assertEquals("[lawindex] vector: only meaning, hybrid takes it, not by words", refusal(body("[1]", "words")));
        assertEquals("[lawindex] vector: must be an array of numbers", refusal(body("\"[1]\"", "meaning")));
        assertEquals("[lawindex] vector: must be an array of numbers", refusal(body("{\"a\": 1}", "meaning")));
        assertEquals("[lawindex] vector: 0 numbers, not from 1 to 4096", refusal(body("[]", "meaning")));
        String many = "[" + String.join(",", Collections.nCopies(4097, "0.5")) + "]";
        assertEquals("[lawindex] vector: 4097 numbers, not from 1 to 4096", refusal(body(many, "hybrid")));
        assertEquals("[lawindex] vector: vector[1] is not a number", refusal(body("[1, \"2\"]", "meaning")));
        assertEquals("[lawindex] vector: vector[1] is not a number", refusal(body("[1, null, 1e400]", "meaning")));
        assertEquals("[lawindex] vector: vector[2] is not a number", refusal(body("[1, 2, [3]]", "meaning")));
        assertEquals("[lawindex] vector: vector[0] is 1e+308, " + out, refusal(body("[1e308, 1]", "meaning")));
        assertEquals("[lawindex] vector: vector[1] is Infinity, " + out, refusal(body("[1, 1e400]", "meaning")));
        assertEquals("[lawindex] vector: vector[1] is -2e+150, " + out, refusal(body("[1, -2e150]", "meaning")));
        assertEquals("[lawindex] vector: vector[0] is 1" + "0".repeat(200) + ", " + out,
            refusal(body("[1" + "0".repeat(200) + "]", "meaning")));
        assertEquals("[lawindex] vector: no value is 1e-150 or more in magnitude: the zero vector is near no row",
            refusal(body("[0, -0.0, 1e-200]", "meaning")));
        // NaN is not JSON: the parser refuses the body before the contract sees it.
        assertThrows(Exception.class, () -> ContractTest.parse(body("[NaN]", "meaning")));
    }

    @Test
    void theVectorTravelsOnTheWireAndInXContentAndIsPartOfEquality() throws IOException {
        LawindexQueryBuilder built = ContractTest.parse(body("[0.25, -1, 3e-7, 12345.678]", "hybrid"));
        BytesStreamOutput out = new BytesStreamOutput();
        built.writeTo(out);
        LawindexQueryBuilder read = new LawindexQueryBuilder(out.bytes().streamInput());
        assertEquals(built, read);
        assertEquals(built.hashCode(), read.hashCode());
        assertArrayEquals(built.vector(), read.vector());

        LawindexQueryBuilder none = ContractTest.parse("{\"question\": \"q\", \"by\": \"hybrid\"}");
        BytesStreamOutput bare = new BytesStreamOutput();
        none.writeTo(bare);
        assertEquals(none, new LawindexQueryBuilder(bare.bytes().streamInput()));
        assertNotEquals(built, none);
        assertNotEquals(built, ContractTest.parse(body("[0.25, -1, 3e-7, 12345.679]", "hybrid")));

        XContentBuilder json = JsonXContent.contentBuilder();
        built.toXContent(json, ToXContent.EMPTY_PARAMS);
        String text = BytesReference.bytes(json).utf8ToString();
        assertTrue(text.contains("\"vector\":[0.25,-1.0,3.0E-7,12345.678]"), text);
        try (XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
            DeprecationHandler.THROW_UNSUPPORTED_OPERATION, text)) {
            parser.nextToken();  // {
            parser.nextToken();  // "lawindex"
            parser.nextToken();  // {
            assertEquals(built, LawindexQueryBuilder.fromXContent(parser));
        }
    }

    @Test
    void anIndexsMeaningIsItsMeta() {
        LawindexQueryBuilder.Meaning own = LawindexQueryBuilder.Meaning.of(Map.of("lawindex", Map.of("meaning",
            Map.of("model", "external", "dimension", 48, "questions", "client"))));
        assertEquals("external", own.model);
        assertEquals(48, own.dimension);
        assertFalse(own.questionsOnNode);
        LawindexQueryBuilder.Meaning road = LawindexQueryBuilder.Meaning.of(Map.of("lawindex", Map.of("meaning",
            Map.of("model", Embedder.MODEL, "dimension", 256, "questions", "node"))));
        assertTrue(road.questionsOnNode);
        assertTrue(road.madeBy("0123456789ab")); // no version recorded: the road table's
        LawindexQueryBuilder.Meaning versioned = LawindexQueryBuilder.Meaning.of(Map.of("lawindex", Map.of("meaning",
            Map.of("model", Embedder.MODEL, "version", "0.3.1+0123456789ab", "dimension", 256, "questions", "node"))));
        assertTrue(versioned.madeBy("0123456789ab"));
        assertFalse(versioned.madeBy("ba9876543210")); // another table: the node must not embed for it
        LawindexQueryBuilder.Meaning other = LawindexQueryBuilder.Meaning.of(Map.of("lawindex", Map.of("meaning",
            Map.of("model", "another-256", "version", "1+0123456789ab", "dimension", 256, "questions", "node"))));
        assertFalse(other.madeBy("0123456789ab"));
        LawindexQueryBuilder.Meaning older = LawindexQueryBuilder.Meaning.of(Map.of("lawindex", Map.of()));
        assertEquals(Embedder.DIMENSION, older.dimension);
        assertTrue(older.questionsOnNode);
        assertEquals(4L * 48 + 12, GridVectors.rowBytes(48));
        assertEquals(GridVectors.ROW_BYTES, GridVectors.rowBytes(Embedder.DIMENSION));
        assertEquals(4L * 4096 + 12, GridVectors.rowBytes(4096));
    }

    /** The grid of a given vector from the definition, in exact decimal arithmetic: each value over the norm (the
     * float64 square root of the correctly rounded sum of the float64 squares), times 2^20, rounded half to even. */
    private static int[] reference(double[] values) {
        BigDecimal sum = BigDecimal.ZERO;
        for (double value : values) {
            sum = sum.add(new BigDecimal(value * value));
        }
        double norm = Math.sqrt(sum.doubleValue());  // BigDecimal.doubleValue rounds correctly (Java 9+)
        int[] out = new int[values.length];
        for (int d = 0; d < values.length; d++) {
            out[d] = (int) Math.rint(values[d] / norm * (1 << 20));
        }
        return out;
    }

    @Test
    void aGivenVectorIsPutOnTheGridAsARowsIsAndHugeValuesDoNotOverflow() {
        Random random = new Random(46);
        for (int n = 0; n < 200; n++) {
            double[] values = new double[1 + random.nextInt(4096)];
            for (int d = 0; d < values.length; d++) {
                values[d] = (random.nextInt(2001) - 1000) / 997.0 * Math.pow(10, random.nextInt(5) - 2);
            }
            assertArrayEquals(reference(values), Embedder.gridOf(values));
        }
        double[] huge = {1e150, -1e150, 3e149, 0, 0};
        int[] units = Embedder.gridOf(huge);
        assertArrayEquals(reference(huge), units);
        long squares = 0;
        for (int unit : units) {
            squares += (long) unit * unit;
        }
        assertEquals(1.0, squares * 0x1p-40, 1e-5);
        assertArrayEquals(new int[3], Embedder.gridOf(new double[3]));
    }

    /** A vector of any length as OpenSearch's binary doc values hold it: a count (vInt 1), its length (vInt), the units. */
    static BytesRef stored(int[] vector) {
        int length = 4 * vector.length;
        List<Byte> bytes = new ArrayList<>();
        bytes.add((byte) 1);
        for (int rest = length; ; rest >>>= 7) {
            if (rest < 0x80) {
                bytes.add((byte) rest);
                break;
            }
            bytes.add((byte) ((rest & 0x7f) | 0x80));
        }
        byte[] out = new byte[bytes.size() + length];
        for (int i = 0; i < bytes.size(); i++) {
            out[i] = bytes.get(i);
        }
        for (int d = 0; d < vector.length; d++) {
            for (int k = 0; k < 4; k++) {
                out[bytes.size() + 4 * d + k] = (byte) (vector[d] >>> (8 * k));
            }
        }
        return new BytesRef(out);
    }

    @Test
    void aShardOf48DimensionVectorsIsRankedByExactCosineTiesInCorpusOrder() throws IOException {
        Random random = new Random(48);
        int rows = 60;
        double[][] given = new double[rows][];
        for (int order = 0; order < rows; order++) {
            given[order] = new double[DIMENSION];
            for (int d = 0; d < DIMENSION; d++) {
                given[order][d] = random.nextInt(5) - 2;  // small integers: equal cosines are common
            }
        }
        given[rows - 1] = Arrays.stream(given[3]).map(x -> 2 * x).toArray();  // a tie with row 3, after it
        try (Directory directory = new ByteBuffersDirectory()) {
            try (IndexWriter writer = new IndexWriter(directory, Fixture.config(
                new LawindexSimilarity(1.2, 0.75, (long) rows, 1.0)))) {
                int written = 0;
                for (int order : Fixture.shuffled(rows, random)) {
                    Document doc = new Document();
                    doc.add(new NumericDocValuesField("order", order));
                    doc.add(new StoredField("order", order));
                    doc.add(new BinaryDocValuesField(GridVectors.FIELD, stored(Embedder.gridOf(given[order]))));
                    writer.addDocument(doc);
                    if (++written % 17 == 0) {
                        writer.commit();
                    }
                }
            }
            try (DirectoryReader reader = DirectoryReader.open(directory)) {
                for (int q = 0; q < 10; q++) {
                    double[] asked = new double[DIMENSION];
                    for (int d = 0; d < DIMENSION; d++) {
                        asked[d] = random.nextGaussian();
                    }
                    if (q == 0) {
                        asked = given[3].clone();
                    }
                    int[] question = Embedder.gridOf(asked);
                    MeaningRanking ranking = MeaningRanking.of(reader, "order", question, false, null,
                        new MeaningRanking.Rrf(5, 1.0, 4.0), Work.UNLIMITED, new Work(Work.UNLIMITED, () -> { }));
                    List<Integer> expected = new ArrayList<>();
                    long[] dots = new long[rows];
                    for (int order = 0; order < rows; order++) {
                        int[] row = reference(given[order]);
                        int[] asking = reference(asked);
                        for (int d = 0; d < DIMENSION; d++) {
                            dots[order] += (long) row[d] * asking[d];
                        }
                        expected.add(order);
                    }
                    expected.sort((a, b) -> dots[a] != dots[b] ? Long.compare(dots[b], dots[a]) : Integer.compare(a, b));
                    List<Integer> got = new ArrayList<>();
                    for (int global : ranking.ranked()) {
                        got.add((int) orderOf(reader, global));
                        assertEquals(dots[(int) orderOf(reader, global)] * 0x1p-40, ranking.exact(global));
                    }
                    assertEquals(expected, got);
                    if (q == 0) {
                        assertEquals(List.of(3, rows - 1), got.subList(0, 2));
                    }
                }
            }
        }
    }

    private static long orderOf(DirectoryReader reader, int global) throws IOException {
        return reader.storedFields().document(global).getField("order").numericValue().longValue();
    }
}
