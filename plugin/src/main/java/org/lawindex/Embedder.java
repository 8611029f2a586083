package org.lawindex;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The question's vector, bit-equal to lawindex's Python embedder (indexer/retrieval/embedding.py): lawindex's
 * own 256-d table of WordLlama's tokens (models/lawindex-road-256.safetensors), its tokens by {@link Bpe}, then
 *
 * <ul>
 *   <li>the mean of the tokens' rows (float16 in the table, widened exactly), summed in float64 token by token
 *       in the text's order and divided by the count;</li>
 *   <li>the norm: the correctly rounded sum of the squares ({@link #fsum}, Python's math.fsum), its sqrt;</li>
 *   <li>each component divided by the norm, times 2^20, rounded half to even: the vector on the 2^-20 grid,
 *       kept here as those integers ({@link #DIMENSION} grid units; the zero vector for a text with no tokens).</li>
 * </ul>
 *
 * <p>The model is read once per node from the two files the plugin's jar carries (the {@code wordllama}
 * wheel's tokenizer.json, 1.8 MB, and lawindex's table, safetensors, 16 MB of float16: indexer/node/plugin.py
 * puts them there), and kept as float16 bits: 16 MB of heap, not the 32 MB of float32.
 */
final class Embedder {
    static final int DIMENSION = 256;
    /** The model's name, as lawindex's load records it in an index's {@code _meta.lawindex.meaning}. */
    static final String MODEL = "lawindex-road-256";
    static final int GRID_BITS = 20;
    static final double GRID = 1 << GRID_BITS;
    static final String TOKENIZER = "wordllama/l2_supercat_tokenizer_config.json";
    static final String WEIGHTS = "models/lawindex-road-256.safetensors";
    private static final double[] HALF = halves();

    final Bpe bpe;
    private final short[] matrix;
    private final int rows;
    /**
     * The first 12 hex digits of the table file's SHA-256: the part of lawindex's {@code version} (the wordllama
     * package's, {@code +}, this) that says which table an index's rows were embedded with.
     */
    final String digest;

    Embedder(Bpe bpe, short[] matrix, int rows, String digest) {
        this.bpe = bpe;
        this.matrix = matrix;
        this.rows = rows;
        this.digest = digest;
    }

    /** The embedder from the bytes of a tokenizer.json (the wordllama wheel's) and of a safetensors table. */
    @SuppressWarnings("unchecked")
    static Embedder read(byte[] tokenizer, byte[] weights) {
        Bpe bpe = new Bpe((Map<String, Object>) Json.parse(new String(tokenizer, StandardCharsets.UTF_8)));
        ByteBuffer buffer = ByteBuffer.wrap(weights).order(ByteOrder.LITTLE_ENDIAN);
        long headerLength = buffer.getLong(0);
        if (headerLength < 2 || headerLength > weights.length - 8) {
            throw new IllegalArgumentException("not a safetensors file (header length " + headerLength + ")");
        }
        Map<String, Object> header = (Map<String, Object>) Json.parse(
            new String(weights, 8, (int) headerLength, StandardCharsets.UTF_8));
        Map<String, Object> tensor = (Map<String, Object>) header.get("embedding.weight");
        if (tensor == null || !"F16".equals(tensor.get("dtype"))) {
            throw new IllegalArgumentException("the weights have no float16 embedding.weight: " + header.keySet());
        }
        List<Object> shape = (List<Object>) tensor.get("shape");
        List<Object> offsets = (List<Object>) tensor.get("data_offsets");
        int rows = ((Long) shape.get(0)).intValue();
        if (((Long) shape.get(1)).intValue() != DIMENSION || rows < bpe.vocabularySize) {
            throw new IllegalArgumentException("the embedding is " + shape + ", not [>= " + bpe.vocabularySize + ", " + DIMENSION + "]");
        }
        long start = 8 + headerLength + (Long) offsets.get(0);
        long end = 8 + headerLength + (Long) offsets.get(1);
        if (end - start != 2L * rows * DIMENSION || end > weights.length) {
            throw new IllegalArgumentException("the embedding's data is " + (end - start) + " bytes, not " + 2L * rows * DIMENSION);
        }
        short[] matrix = new short[rows * DIMENSION];
        buffer.position((int) start);
        buffer.slice().order(ByteOrder.LITTLE_ENDIAN).asShortBuffer().get(matrix);
        return new Embedder(bpe, matrix, rows, digest(weights));
    }

    /** The first 12 hex digits of the SHA-256 of {@code bytes} (lawindex's Python: {@code hexdigest()[:12]}). */
    static String digest(byte[] bytes) {
        try {
            byte[] sum = java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
            StringBuilder hex = new StringBuilder();
            for (int i = 0; i < 6; i++) {
                hex.append(String.format(Locale.ROOT, "%02x", sum[i] & 0xff));
            }
            return hex.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this Java", e);
        }
    }

    /** The embedder from the plugin jar's copies of its files (once per node: see {@link #shipped}). */
    static Embedder fromJar() throws IOException {
        return read(resource(TOKENIZER), resource(WEIGHTS));
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = Embedder.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("the plugin jar has no " + name + " (built without the embedder's files?)");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 20);
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    private static final class Shipped {
        static final Embedder EMBEDDER;
        static final RuntimeException FAILURE;

        static {
            Embedder embedder = null;
            RuntimeException failure = null;
            try {
                embedder = fromJar();
            } catch (IOException | RuntimeException e) {
                failure = new IllegalStateException("the lawindex plugin cannot read its embedder: " + e.getMessage(), e);
            }
            EMBEDDER = embedder;
            FAILURE = failure;
        }
    }

    /** The node's embedder, read from the jar on first use (0.3 s), the same object after. */
    static Embedder shipped() {
        if (Shipped.FAILURE != null) {
            throw Shipped.FAILURE;
        }
        return Shipped.EMBEDDER;
    }

    /**
     * True for a question with nothing to embed, which is near no row (docs/plugin.md; the rule lawindex's Python
     * shares): no letter or digit once lowercased, as the spec's words() sees text (a run of [a-z0-9] after
     * lowercasing). Empty, spaces, punctuation, controls, emoji: nothing. Lowercasing gives [a-z0-9] only from
     * those characters themselves, A-Z, U+0130 (to "i" and a dot) and U+212A (Kelvin, to "k"), in Java as in
     * Python (EmbedderTest walks every code point); the text is lowercased here all the same.
     */
    static boolean nothingToEmbed(String question) {
        String lower = question.toLowerCase(Locale.ROOT);
        for (int i = 0; i < lower.length(); i++) {
            char c = lower.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                return false;
            }
        }
        return true;
    }

    /** The text's vector as grid units (component * 2^20, integers within +-2^20). */
    int[] grid(String text) {
        return grid(bpe.encode(text));
    }

    int[] grid(int[] ids) {
        double[] units = units(ids);
        int[] out = new int[DIMENSION];
        for (int d = 0; d < DIMENSION; d++) {
            out[d] = (int) units[d];
        }
        return out;
    }

    /**
     * The grid units as the doubles Python's np.round gives (a unit rounded from a small negative is -0.0,
     * which Python's float32 vector keeps; as an integer it is 0, the same in every dot product).
     */
    double[] units(int[] ids) {
        double[] out = new double[DIMENSION];
        if (ids.length == 0) {
            return out;
        }
        double[] sums = new double[DIMENSION];
        for (int id : ids) {
            // HF's ids are always inside the vocabulary; Python clamps into the matrix all the same.
            int row = Math.min(Math.max(id, 0), rows - 1) * DIMENSION;
            for (int d = 0; d < DIMENSION; d++) {
                sums[d] += HALF[matrix[row + d] & 0xffff];
            }
        }
        double count = ids.length;
        for (int d = 0; d < DIMENSION; d++) {
            sums[d] = sums[d] / count;
        }
        return onGrid(sums);
    }

    /**
     * A vector of any length as grid units (doubles, as {@link #units}): each value divided by the correctly rounded
     * norm (fsum of the float64 squares, its square root) and times 2^20, rounded half to even; the zero vector for
     * a norm of 0. Python's embedding.normalised, to the bit: a text's mean sums, and a vector given as numbers.
     */
    static double[] onGrid(double[] values) {
        double[] out = new double[values.length];
        double[] squares = new double[values.length];
        for (int d = 0; d < values.length; d++) {
            squares[d] = values[d] * values[d];
        }
        double norm = Math.sqrt(fsum(squares));
        if (!(norm > 0.0)) {
            return out;
        }
        for (int d = 0; d < values.length; d++) {
            out[d] = Math.rint(values[d] / norm * GRID);
        }
        return out;
    }

    /** A vector given as numbers (a question's own: the contract bounds them, so no square overflows) as grid units. */
    static int[] gridOf(double[] values) {
        double[] units = onGrid(values);
        int[] out = new int[units.length];
        for (int d = 0; d < units.length; d++) {
            out[d] = (int) units[d];
        }
        return out;
    }

    /**
     * The correctly rounded sum of finite doubles, as CPython's math.fsum computes it: Shewchuk's exact
     * partials (non-overlapping, increasing magnitude), then their sum rounded once, half to even.
     */
    static double fsum(double[] values) {
        double[] partials = new double[32];
        int n = 0;
        for (double value : values) {
            double x = value;
            int i = 0;
            for (int j = 0; j < n; j++) {
                double y = partials[j];
                if (Math.abs(x) < Math.abs(y)) {
                    double t = x;
                    x = y;
                    y = t;
                }
                double hi = x + y;
                double lo = y - (hi - x);
                if (lo != 0.0) {
                    partials[i++] = lo;
                }
                x = hi;
            }
            if (i == partials.length) {
                partials = java.util.Arrays.copyOf(partials, i * 2);
            }
            partials[i] = x;
            n = i + 1;
        }
        double hi = 0.0;
        if (n > 0) {
            hi = partials[--n];
            double lo = 0.0;
            while (n > 0) {
                double x = hi;
                double y = partials[--n];
                hi = x + y;
                double yr = hi - x;
                lo = y - yr;
                if (lo != 0.0) {
                    break;
                }
            }
            // Half-way cases: make the rounding of hi + lo + (the partials below) correct (CPython's note).
            if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
                double y = lo * 2.0;
                double x = hi + y;
                double yr = x - hi;
                if (y == yr) {
                    hi = x;
                }
            }
        }
        return hi;
    }

    /** Every float16 bit pattern as the double it is exactly (Java 17 has no Float.float16ToFloat). */
    private static double[] halves() {
        double[] table = new double[1 << 16];
        for (int bits = 0; bits < table.length; bits++) {
            int sign = (bits >>> 15) == 0 ? 1 : -1;
            int exponent = (bits >>> 10) & 0x1f;
            int fraction = bits & 0x3ff;
            double value;
            if (exponent == 0) {
                value = fraction * 0x1p-24;  // subnormal: fraction * 2^-14 * 2^-10
            } else if (exponent == 0x1f) {
                value = fraction == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
            } else {
                value = (1024 + fraction) * Math.scalb(1.0, exponent - 25);
            }
            table[bits] = sign * value;
        }
        return table;
    }

    /** The cosine of two grid vectors: their exact integer dot product (< 2^48), times 2^-40. */
    static double cosine(int[] a, int[] b) {
        long dot = 0;
        for (int d = 0; d < DIMENSION; d++) {
            dot += (long) a[d] * b[d];
        }
        return dot * 0x1p-40;
    }
}
