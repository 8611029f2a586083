package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.ParsingException;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;

/**
 * The query's wire form (Wire): round trips at this build's version, the bytes of wire 1 pinned (a later build
 * must keep reading them), a newer build's stream read where it can and refused naming the parameter where it
 * cannot, a stream from a build before wire versions refused (and this build's stream refused by such a build,
 * never misread), and the coordinating node's check of every node's version.
 */
class WireTest {
    /** A parameter of the next build, which this one does not know. */
    private static final int NEWER = Wire.VERSION + 1;
    private static final Wire.Parameter PROBE = new Wire.Parameter("probe", NEWER);

    private static List<LawindexQueryBuilder> queries() {
        LawindexQueryBuilder named = new LawindexQueryBuilder("stop sign", null, null);
        named.boost(0.5f);
        named.queryName("mine");
        return List.of(
            new LawindexQueryBuilder("how far must i be behing a firehydrant", null, null),
            new LawindexQueryBuilder("", "text", "rank"),
            new LawindexQueryBuilder("permit \ud800 😀 é", null, null).way(Fusion.MEANING, Fusion.RRF_K, 1.0, 4.0),
            new LawindexQueryBuilder("permit", null, null).way(Fusion.HYBRID, 60, 0.000001, 1_000_000),
            named);
    }

    private static BytesReference written(LawindexQueryBuilder query) throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            query.writeTo(out);
            out.writeInt(0x5eed);  // what follows the query in a request: read intact after it
            return out.bytes();
        }
    }

    private static LawindexQueryBuilder read(BytesReference bytes) throws IOException {
        try (StreamInput in = bytes.streamInput()) {
            LawindexQueryBuilder query = new LawindexQueryBuilder(in);
            assertEquals(0x5eed, in.readInt(), "the stream after the query");
            return query;
        }
    }

    /** The fields of wire 1 as any build writes them, after AbstractQueryBuilder's boost and name. */
    private static void wire1Fields(StreamOutput out, String question, String by, int rrfK, double words, double meaning)
        throws IOException {
        out.writeFloat(1.0f);
        out.writeOptionalString(null);
        out.writeString(question);
        out.writeString(LawindexQueryBuilder.DEFAULT_FIELD);
        out.writeString(LawindexQueryBuilder.DEFAULT_ORDER);
        out.writeString(by);
        out.writeInt(rrfK);
        out.writeDouble(words);
        out.writeDouble(meaning);
    }

    @Test
    void everyWayRoundTripsAtThisBuildsVersion() throws IOException {
        for (LawindexQueryBuilder query : queries()) {
            LawindexQueryBuilder back = read(written(query));
            assertEquals(query, back);
            assertEquals(query.toString(), back.toString());
            assertEquals(query.hashCode(), back.hashCode());
        }
    }

    /** A query that sets no parameter past wire 1 is the version, the fields of wire 1 and none after them. */
    @Test
    void aQueryIsItsVersionTheFieldsOfWire1AndTheParametersSet() throws IOException {
        try (BytesStreamOutput expected = new BytesStreamOutput()) {
            expected.writeFloat(1.0f);
            expected.writeOptionalString(null);
            Wire.writeHeader(expected, Wire.VERSION);
            expected.writeString("permit");
            expected.writeString("words");
            expected.writeString("order");
            expected.writeString("hybrid");
            expected.writeInt(60);
            expected.writeDouble(2.0);
            expected.writeDouble(3.0);
            expected.writeVInt(0);
            expected.writeInt(0x5eed);
            LawindexQueryBuilder query = new LawindexQueryBuilder("permit", null, null).way(Fusion.HYBRID, 60, 2.0, 3.0);
            assertArrayEquals(BytesReference.toBytes(expected.bytes()), BytesReference.toBytes(written(query)));
        }
        // The header is a negative vInt: FF FF FF FF 0F for wire 1, where a build before versions wrote a length.
        try (BytesStreamOutput header = new BytesStreamOutput()) {
            Wire.writeHeader(header, 1);
            assertArrayEquals(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f}, BytesReference.toBytes(header.bytes()));
        }
    }

    /** A newer build's stream (wire 2, say) whose query does not set the new parameter: read exactly. */
    @Test
    void aNewerStreamWithoutTheNewParameterIsReadExactly() throws IOException {
        for (int version : new int[] {1, NEWER, NEWER + 1, 1000}) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                out.writeFloat(1.0f);
                out.writeOptionalString(null);
                Wire.writeHeader(out, version);
                out.writeString("permit");
                out.writeString("words");
                out.writeString("order");
                out.writeString(Fusion.HYBRID);
                out.writeInt(7);
                out.writeDouble(1.0);
                out.writeDouble(0.0);
                new Wire.Out().writeTo(out);
                out.writeInt(0x5eed);
                assertEquals(new LawindexQueryBuilder("permit", null, null).way(Fusion.HYBRID, 7, 1.0, 0.0), read(out.bytes()));
            }
        }
    }

    /** A newer build's stream that sets a parameter this build does not know: a 400 naming it, never a misread. */
    @Test
    void aNewerStreamWithANewParameterIsRefusedNamingIt() throws IOException {
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            out.writeFloat(1.0f);
            out.writeOptionalString(null);
            Wire.writeHeader(out, NEWER);
            out.writeString("permit");
            out.writeString("words");
            out.writeString("order");
            out.writeString(Fusion.WORDS);
            out.writeInt(Fusion.RRF_K);
            out.writeDouble(Fusion.WORDS_WEIGHT);
            out.writeDouble(Fusion.MEANING_WEIGHT);
            new Wire.Out().put(PROBE, o -> o.writeFloatArray(new float[] {0.5f, -1f})).writeTo(out);
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> read(out.bytes()));
            assertTrue(refused.getMessage().startsWith("[lawindex] [probe] needs lawindex wire version " + NEWER + ", but this"
                + " node's lawindex plugin reads wire " + Wire.VERSION + " (the query came from a build of wire " + NEWER + ")"),
                refused.getMessage());
            assertTrue(refused.getMessage().endsWith("or ask without [probe]"), refused.getMessage());
        }
    }

    /** A parameter declared past wire 1 (as `vector` will be): carried when set, its default when not. */
    @Test
    void aDeclaredParameterRoundTripsAndIsAbsentWhenNotSet() throws IOException {
        float[] vector = {0.25f, -0.0f, Float.MIN_VALUE, Float.MAX_VALUE};
        for (boolean set : new boolean[] {true, false}) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                Wire.Out params = new Wire.Out();
                if (set) {
                    params.put(PROBE, o -> o.writeFloatArray(vector));
                }
                params.writeTo(out);
                out.writeInt(0x5eed);
                try (StreamInput in = out.bytes().streamInput()) {
                    Wire.In read = new Wire.In(in).refuseUnknown(List.of(PROBE), NEWER);
                    float[] back = read.value(PROBE, StreamInput::readFloatArray, null);
                    assertEquals(0x5eed, in.readInt());
                    if (set) {
                        assertArrayEquals(vector, back);
                    } else {
                        assertNull(back);
                    }
                }
            }
        }
    }

    @Test
    void aStreamClaimingTooManyParametersIsRefusedBeforeReadingThem() throws IOException {
        for (int count : new int[] {Wire.MOST_PARAMETERS + 1, Integer.MAX_VALUE, -1}) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                out.writeVInt(count);
                try (StreamInput in = out.bytes().streamInput()) {
                    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new Wire.In(in));
                    assertTrue(refused.getMessage().contains("at most " + Wire.MOST_PARAMETERS), refused.getMessage());
                }
            }
        }
    }

    /** A build before wire versions wrote the fields of wire 1 with no header: this build refuses its stream with a
     * 400 (it cannot be told from a version), and such a build fails on this build's stream at its first field. */
    @Test
    void aBuildBeforeWireVersionsAndThisOneRefuseEachOthersStreams() throws IOException {
        for (String question : new String[] {"", "a", "how far must i be behing a firehydrant"}) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                wire1Fields(out, question, Fusion.WORDS, Fusion.RRF_K, Fusion.WORDS_WEIGHT, Fusion.MEANING_WEIGHT);
                out.writeInt(0x5eed);
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> read(out.bytes()));
                assertTrue(refused.getMessage().contains("built before wire versions"), refused.getMessage());
            }
        }
        try (StreamInput in = written(queries().get(0)).streamInput()) {
            in.readFloat();
            in.readOptionalString();
            assertThrows(NegativeArraySizeException.class, in::readString, "the old build's first read: the question");
        }
    }

    @Test
    void theCoordinatorRefusesAParameterSomeNodeCannotReadNamingBoth() {
        List<Wire.Parameter> declared = List.of(new Wire.Parameter("first", 2), new Wire.Parameter("later", 3));
        Map<String, Integer> nodes = new LinkedHashMap<>();
        nodes.put("node-a", 3);
        nodes.put("node-b", 2);
        assertNull(Wire.refusal(Set.of("question", "first"), declared, nodes));
        assertEquals("[later] needs lawindex wire version 3 on every node that holds shards, but node [node-b] runs a lawindex"
            + " plugin of wire 2 (an older build): upgrade the plugin on that node, or ask without [later]",
            Wire.refusal(Set.of("question", "later"), declared, nodes));
        nodes.put("node-c", 1);
        assertTrue(Wire.refusal(Set.of("first"), declared, nodes).startsWith("[first] needs lawindex wire version 2"));
        assertTrue(Wire.refusal(Set.of("first"), declared, nodes).contains("node [node-c] runs a lawindex plugin of wire 1"));
        assertNull(Wire.refusal(Set.of("question", "by", "rrf_k"), declared, nodes), "no newer parameter: answered");
        nodes.put("node-d", 0);
        assertTrue(Wire.refusal(Set.of("question"), declared, nodes).startsWith("node [node-d] runs a lawindex plugin built"
            + " before wire versions"));
        assertNull(Wire.refusal(Set.of("first"), declared, Map.of()), "no node known (a unit test's parser): no check");
    }

    private static LawindexQueryBuilder parse(String body, Map<String, Integer> nodes) throws IOException {
        try (XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
            DeprecationHandler.THROW_UNSUPPORTED_OPERATION, body)) {
            parser.nextToken();
            return LawindexQueryBuilder.fromXContent(parser, () -> nodes);
        }
    }

    /** The parser on a coordinating node checks the cluster's nodes: a node of a build before wire versions (no
     * attribute) cannot read this build's query, so every query is refused naming it; nodes of this build or newer
     * take every query this build parses. */
    @Test
    void theParserRefusesUpFrontWhenSomeNodeCannotReadTheQuery() throws IOException {
        String body = "{\"question\": \"stop sign\", \"by\": \"hybrid\", \"rrf_k\": 9}";
        Map<String, Integer> nodes = new LinkedHashMap<>();
        nodes.put("node-a", Wire.VERSION);
        nodes.put("node-b", NEWER);
        assertEquals(new LawindexQueryBuilder("stop sign", null, null).way(Fusion.HYBRID, 9, Fusion.WORDS_WEIGHT,
            Fusion.MEANING_WEIGHT), parse(body, nodes));
        nodes.put("node-c", 0);
        ParsingException refused = assertThrows(ParsingException.class, () -> parse(body, nodes));
        assertTrue(refused.getMessage().startsWith("[lawindex] node [node-c] runs a lawindex plugin built before wire versions"),
            refused.getMessage());
    }

    @Test
    void aNodesWireVersionIsItsAttributeOrZero() {
        assertEquals(1, Wire.of(Map.of("lawindex_wire", "1")));
        assertEquals(12, Wire.of(Map.of("lawindex_wire", " 12 ", "zone", "a")));
        assertEquals(0, Wire.of(Map.of("zone", "a")));
        assertEquals(0, Wire.of(Map.of("lawindex_wire", "two")));
        assertThrows(IllegalArgumentException.class, () -> new Wire.Parameter("early", 1));
        assertTrue(Wire.PARAMETERS.stream().allMatch(p -> p.since >= 2 && p.since <= Wire.VERSION));
    }
}
