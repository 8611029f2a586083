package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.opensearch.common.xcontent.json.JsonXContent;
import org.opensearch.core.common.ParsingException;
import org.opensearch.core.xcontent.DeprecationHandler;
import org.opensearch.core.xcontent.NamedXContentRegistry;
import org.opensearch.core.xcontent.XContentParser;

/**
 * The query builder refuses what contract/request.json refuses, with its messages (in OpenSearch's
 * {@code [lawindex] ...} form), from the copy the jar carries; and boost is 1 or a power of two from 2^-20 to 2^20.
 */
class ContractTest {
    private static final Path FILE = Path.of("..", "contract", "request.json");

    static LawindexQueryBuilder parse(String body) throws IOException {
        try (XContentParser parser = JsonXContent.jsonXContent.createParser(NamedXContentRegistry.EMPTY,
            DeprecationHandler.THROW_UNSUPPORTED_OPERATION, body)) {
            parser.nextToken();
            return LawindexQueryBuilder.fromXContent(parser);
        }
    }

    private static String refusal(String body) {
        return assertThrows(ParsingException.class, () -> parse(body), body).getMessage();
    }

    @Test
    void theJarCarriesTheRepositorysContract() throws IOException {
        Contract file = Contract.parse(Files.readString(FILE, StandardCharsets.UTF_8));
        Contract shipped = Contract.shipped();
        assertEquals(file.ways, shipped.ways);
        assertEquals(file.parameters.keySet(), shipped.parameters.keySet());
        assertEquals(file.message("weight", "name", "x"), shipped.message("weight", "name", "x"));
        assertEquals(Fusion.WORDS, shipped.defaultWay);
        assertEquals(java.util.List.of(Fusion.WORDS, Fusion.MEANING, Fusion.HYBRID), shipped.ways);
    }

    @Test
    void fusionsDefaultsAreTheContracts() {
        Contract contract = Contract.shipped();
        assertEquals((long) Fusion.RRF_K, ((Number) contract.parameter("rrf_k").fallback).longValue());
        assertEquals(Fusion.MAX_RRF_K, (int) contract.parameter("rrf_k").max);
        assertEquals(Fusion.WORDS_WEIGHT, ((Number) contract.parameter("words_weight").fallback).doubleValue());
        assertEquals(Fusion.MEANING_WEIGHT, ((Number) contract.parameter("meaning_weight").fallback).doubleValue());
    }

    @Test
    void eachRefusalIsTheContractsMessageNamingTheParameter() {
        assertEquals("[lawindex] by: the way must be words, meaning or hybrid, not vectors",
            refusal("{\"question\": \"q\", \"by\": \"vectors\"}"));
        assertEquals("[lawindex] rrf_k: only hybrid takes it, not by meaning",
            refusal("{\"question\": \"q\", \"by\": \"meaning\", \"rrf_k\": 5}"));
        assertEquals("[lawindex] words_weight: only hybrid takes it, not by words",
            refusal("{\"question\": \"q\", \"words_weight\": 1.0}"));
        assertEquals("[lawindex] rrf_k: must be an integer from 1 to 10000, not 0",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": 0}"));
        assertEquals("[lawindex] rrf_k: must be an integer from 1 to 10000, not 6.5",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": 6.5}"));
        assertEquals("[lawindex] rrf_k: must be an integer from 1 to 10000, not 99999999999999999999999",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": 99999999999999999999999}"));
        assertEquals("[lawindex] words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not 1e+40",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"words_weight\": 1e40}"));
        assertEquals("[lawindex] meaning_weight: a weight must be 0 or a number from 0.000001 to 1000000, not -1",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"meaning_weight\": -1}"));
        assertEquals("[lawindex] meaning_weight: a weight must be 0 or a number from 0.000001 to 1000000, not 1e-7",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"meaning_weight\": 1e-7}"));
        assertEquals("[lawindex] words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not a lot",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"words_weight\": \"a lot\"}"));
        assertEquals("[lawindex] rrf_k: must be an integer from 1 to 10000, not an array",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": [5]}"));
        assertEquals("[lawindex] words_weight: a weight must be 0 or a number from 0.000001 to 1000000, not an object",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"words_weight\": {}}"));
        assertEquals("[lawindex] [question] must be a string, not an object", refusal("{\"question\": {\"a\": 1}}"));
        assertTrue(refusal("{\"question\": \"q\", \"limit\": [8]}").endsWith("not [limit]"));
        assertTrue(refusal("{\"question\": \"q\", \"limit\": 8}").endsWith("not [limit]"));
        assertEquals("[lawindex] words_weight, meaning_weight: the two weights cannot both be 0",
            refusal("{\"question\": \"q\", \"by\": \"hybrid\", \"words_weight\": 0, \"meaning_weight\": 0.0}"));
    }

    @Test
    void numbersAreWrittenAsJavaScriptAndLawindexsPythonWriteThem() {
        // Each pair: a double (Python's repr), and indexer.retrieval.request.js_number's text of it.
        String[][] cases = {
            {"1e-06", "0.000001"},
            {"1e-07", "1e-7"},
            {"1000000.0", "1000000"},
            {"1e+21", "1e+21"},
            {"1e+20", "100000000000000000000"},
            {"123.456", "123.456"},
            {"0.30000000000000004", "0.30000000000000004"},
            {"1.7976931348623157e+308", "1.7976931348623157e+308"},
            {"5e-324", "5e-324"},
            {"-1.5", "-1.5"},
            {"2e+23", "2e+23"},
            {"1e+40", "1e+40"},
            {"1000000.5", "1000000.5"},
            {"6.5", "6.5"},
            {"5.0", "5"},
            {"1e-300", "1e-300"},
            {"0.000123", "0.000123"},
            {"1.2345678901234568e+20", "123456789012345680000"}
        };
        for (String[] pair : cases) {
            assertEquals(pair[1], Contract.plain(Double.parseDouble(pair[0])), pair[0]);
        }
    }

    @Test
    void theBoundsAndZeroAreTaken() throws IOException {
        for (String weights : new String[] {"\"words_weight\": 1e6, \"meaning_weight\": 1e-6",
            "\"words_weight\": 0, \"meaning_weight\": 1000000", "\"words_weight\": 0.000001, \"meaning_weight\": 0"}) {
            LawindexQueryBuilder built = parse("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": 10000, " + weights + "}");
            assertEquals("q", built.question());
        }
        parse("{\"question\": \"q\", \"by\": \"hybrid\", \"rrf_k\": 1}");
    }

    @Test
    void boostIsOneOrAPowerOfTwoFromTwoToTheMinus20To20() throws IOException {
        for (String boost : new String[] {"1", "1.0", "2", "0.5", "1048576", "9.5367431640625E-7", "\"4\""}) {
            assertEquals(Float.parseFloat(boost.replace("\"", "")),
                parse("{\"question\": \"q\", \"boost\": " + boost + "}").boost(), boost);
        }
        for (String boost : new String[] {"3e38", "3", "0", "-1", "2097152", "4.76837158203125E-7", "1.0000001", "\"x\"", "true"}) {
            String message = refusal("{\"question\": \"q\", \"boost\": " + boost + "}");
            assertEquals("[lawindex] " + LawindexQueryBuilder.BOOST_RULE + boost.replace("\"", ""), message);
        }
        assertEquals("[lawindex] " + LawindexQueryBuilder.BOOST_RULE + "an array", refusal("{\"question\": \"q\", \"boost\": [2]}"));
        assertTrue(LawindexQueryBuilder.exactBoost(0x1p-20));
        assertTrue(LawindexQueryBuilder.exactBoost(0x1p20));
        assertFalse(LawindexQueryBuilder.exactBoost(0x1p21));
        assertFalse(LawindexQueryBuilder.exactBoost(Double.NaN));
        assertFalse(LawindexQueryBuilder.exactBoost(Double.POSITIVE_INFINITY));
    }
}
