package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plugin's tokenizer and embedder against lawindex's Python embedder, token ids and vector bytes: the
 * fixture lines are what Python computed (src/test/resources/make-embedding-fixture.py). The committed fixture
 * holds 600 short texts; the long check generates 30,000 texts (up to 100,000 characters) into target/ by
 * running the same script, and needs python3 with lawindex's dependencies (wordllama, tokenizers, numpy).
 */
class EmbedderTest {
    private static Embedder embedder;
    private static final int LONG_COUNT = 30_000;

    @BeforeAll
    static void load() throws IOException, InterruptedException {
        Path wheel = Path.of(python("import os, wordllama; print(os.path.dirname(wordllama.__file__))"));
        embedder = Embedder.read(Files.readAllBytes(wheel.resolve("tokenizers/l2_supercat_tokenizer_config.json")),
            Files.readAllBytes(Path.of("..").resolve(Embedder.WEIGHTS)));  // the repository's models/ (Maven runs in plugin/)
    }

    private static String python(String code) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("python3", "-c", code).redirectErrorStream(false).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS) && process.exitValue() == 0, "python3 -c " + code + " failed");
        return out;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static String idsDigest(int[] ids) {
        ByteBuffer buffer = ByteBuffer.allocate(ids.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int id : ids) {
            buffer.putInt(id);
        }
        return sha256(buffer.array());
    }

    static String vectorDigest(double[] units) {
        ByteBuffer buffer = ByteBuffer.allocate(units.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (double unit : units) {
            buffer.putFloat((float) (unit / Embedder.GRID));
        }
        return sha256(buffer.array());
    }

    /** Checks every line of a fixture; the number of texts checked. */
    @SuppressWarnings("unchecked")
    private static int check(Reader source) throws IOException {
        int texts = 0;
        int sums = 0;
        try (BufferedReader in = new BufferedReader(source)) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Object parsed = Json.parse(line);
                if (parsed instanceof Map) {
                    Map<String, Object> fsum = (Map<String, Object>) parsed;
                    List<Object> values = (List<Object>) fsum.get("fsum");
                    double[] doubles = new double[values.size()];
                    for (int i = 0; i < doubles.length; i++) {
                        doubles[i] = Double.parseDouble((String) values.get(i));
                    }
                    assertEquals(Double.parseDouble((String) fsum.get("sum")), Embedder.fsum(doubles), 0.0, line);
                    sums++;
                    continue;
                }
                List<Object> row = (List<Object>) parsed;
                String text = (String) row.get(0);
                int[] ids = embedder.bpe.encode(text);
                String shown = text.length() > 200 ? text.substring(0, 200) + "... (" + text.length() + " chars)" : text;
                assertEquals(((Long) row.get(1)).intValue(), ids.length, "token count of " + shown);
                assertEquals(row.get(2), idsDigest(ids), "token ids of " + shown);
                assertEquals(row.get(3), vectorDigest(embedder.units(ids)), "vector of " + shown);
                texts++;
            }
        }
        assertTrue(sums > 0, "the fixture has fsum lines");
        return texts;
    }

    @Test
    void committedFixtureIsPythonsBitForBit() throws IOException {
        InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/embedding-fixture.jsonl"));
        assertEquals(600, check(new InputStreamReader(in, StandardCharsets.UTF_8)));
    }

    @Test
    void thirtyThousandGeneratedTextsArePythonsBitForBit() throws IOException, InterruptedException {
        Path fixture = Path.of("target", "embedding-fixture-" + LONG_COUNT + ".jsonl");
        if (!Files.isRegularFile(fixture)) {
            Path partial = Path.of("target", "embedding-fixture-" + LONG_COUNT + ".part");
            Files.createDirectories(partial.getParent());
            Process process = new ProcessBuilder("python3", "src/test/resources/make-embedding-fixture.py",
                "--count", String.valueOf(LONG_COUNT), "--seed", "2").redirectOutput(partial.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            assertTrue(process.waitFor(20, TimeUnit.MINUTES) && process.exitValue() == 0, "the fixture script failed");
            Files.move(partial, fixture);
        }
        assertEquals(LONG_COUNT, check(Files.newBufferedReader(fixture, StandardCharsets.UTF_8)));
    }

    @Test
    void knownTokens() {
        // From Python: WordLlamaEmbedder().tokens([...]).
        assertArrayEquals(new int[] {263, 1, 289}, embedder.bpe.encode("a<s>b"));
        assertArrayEquals(new int[] {259, 1, 259}, embedder.bpe.encode(" <s> "));
        assertArrayEquals(new int[] {29871, 263, 29871, 289, 29871}, embedder.bpe.encode(" a  b "));
        assertArrayEquals(new int[] {904, 29948, 13, 12, 243, 162, 155, 131}, embedder.bpe.encode("é\u00e9\n\t\uD83D\uDE00"));
        assertArrayEquals(new int[0], embedder.bpe.encode(""));
        assertArrayEquals(new int[Embedder.DIMENSION], embedder.grid(""));
    }

    @Test
    void aLongRunMergesInLinearithmicTime() {
        // 100,000 'a's: one word of 100,001 symbols; the heap makes it a few hundred thousand queue steps.
        int[] ids = embedder.bpe.encode("a".repeat(100_000));
        assertTrue(ids.length > 0 && ids.length < 100_000);
    }

    @Test
    void cosineIsTheExactDotProductOnTheGrid() {
        int[] a = new int[Embedder.DIMENSION];
        int[] b = new int[Embedder.DIMENSION];
        a[0] = 1 << 20;
        b[0] = 1 << 20;
        assertEquals(1.0, Embedder.cosine(a, b), 0.0);
        a[1] = 3;
        b[1] = -1;
        assertEquals(1.0 - 3 * 0x1p-40, Embedder.cosine(a, b), 0.0);
    }
}
