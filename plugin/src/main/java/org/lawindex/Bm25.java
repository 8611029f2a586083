package org.lawindex;

/**
 * The spec's BM25 arithmetic (spec/retrieve.md, bm25()), written once: the idf and the term score in
 * float64, each expression in the order and grouping JavaScript evaluates it, so every result is V8's
 * bit for bit. Java's double arithmetic is IEEE 754 (strict since Java 17), and StrictMath.log is fdlibm's
 * e_log.c, as V8's Math.log is; Math.log may be an intrinsic that differs in the last bit.
 */
public final class Bm25 {
    /** The spec's k1 and b. */
    public static final double K1 = 1.2;
    public static final double B = 0.75;

    private Bm25() {}

    /** {@code Math.log(1 + (size - n + 0.5) / (n + 0.5))}: size ranked laws, n of them with the word. */
    public static double idf(long size, long n) {
        double laws = size;
        double with = n;
        return StrictMath.log(1 + (laws - with + 0.5) / (with + 0.5));
    }

    /**
     * {@code (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average))}: one word's part of a
     * law's score, the law {@code length} words long, the word {@code tf} times in it.
     */
    public static double term(double idf, double tf, double length, double average, double k1, double b) {
        return (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average));
    }
}
