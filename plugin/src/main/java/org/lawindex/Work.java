package org.lawindex;

/**
 * The work one request's question does on one shard, counted and held to the request: memory it keeps is
 * charged to a breaker (OpenSearch's request circuit breaker on a node), released when the work is closed;
 * every lookup and every term visited is a step, and every {@link #CHECK_EVERY} steps the search task's
 * cancellation and the request's {@code timeout} are checked.
 *
 * <p>Where it came from: a question of one 1,500-letter token made the expansion keep every substring of
 * four letters or more (about a million strings of hundreds of characters) and the JVM of a 512 MB node died
 * of OutOfMemoryError. Now nothing grows without being charged first, so an over-budget request is refused
 * by the breaker (429, naming it) and the node goes on; and the counters are what the unit tests hold the
 * expansion's cost to (lookups, terms visited, bytes kept), never a time.
 */
public final class Work implements AutoCloseable {
    /**
     * Steps between two checks of cancellation: a check is one call through OpenSearch's reader (it makes a
     * terms enum), a step a seek in the term dictionary (about 1 microsecond); 1,024 steps is about a
     * millisecond between checks, at a cost too small to see.
     */
    public static final int CHECK_EVERY = 1024;

    /** Charges memory: OpenSearch's {@code CircuitBreaker#addEstimateBytesAndMaybeBreak} (negative: a release). */
    public interface Breaker {
        void charge(long bytes, String label);

        void release(long bytes);
    }

    /** A breaker that charges nothing (tests that count bytes only read {@link #peakBytes()}). */
    public static final Breaker UNLIMITED = new Breaker() {
        @Override
        public void charge(long bytes, String label) {}

        @Override
        public void release(long bytes) {}
    };

    private static final Runnable NEVER_CANCELLED = () -> {};

    private final Breaker breaker;
    private final Runnable checkCancelled;
    private long held;
    private long peak;
    private long lookups;
    private long termsVisited;
    private long postings;
    private long checks;
    private long steps;

    public Work(Breaker breaker, Runnable checkCancelled) {
        this.breaker = breaker == null ? UNLIMITED : breaker;
        this.checkCancelled = checkCancelled == null ? NEVER_CANCELLED : checkCancelled;
    }

    /** Work charged to nothing and never cancelled: what the plugin's tests count with. */
    public static Work uncharged() {
        return new Work(UNLIMITED, NEVER_CANCELLED);
    }

    /** {@code bytes} more kept until the work is closed, charged first (the breaker may refuse: 429). */
    public void charge(long bytes) {
        if (bytes <= 0) {
            return;
        }
        breaker.charge(bytes, "lawindex query");
        held += bytes;
        peak = Math.max(peak, held);
    }

    /** {@code bytes} given back before the work ends (an automaton dropped, say). */
    public void release(long bytes) {
        long back = Math.min(bytes, held);
        if (back > 0) {
            breaker.release(back);
            held -= back;
        }
    }

    /** One seek in a term dictionary (a substring or a word looked up). */
    public void lookup() {
        lookups++;
        step();
    }

    /** One term read from a terms enum (an automaton's match, a term of a walk). */
    public void termVisited() {
        termsVisited++;
        step();
    }

    /** One document read from a postings list. */
    public void posting() {
        postings++;
        step();
    }

    private void step() {
        if (++steps % CHECK_EVERY == 0) {
            checkCancelled();
        }
    }

    /** Throws if the search task was cancelled or its timeout has passed (OpenSearch's own exceptions). */
    public void checkCancelled() {
        checks++;
        checkCancelled.run();
    }

    public long lookups() {
        return lookups;
    }

    public long termsVisited() {
        return termsVisited;
    }

    public long postings() {
        return postings;
    }

    public long checks() {
        return checks;
    }

    /** The most bytes held (charged and not yet released) at any one time. */
    public long peakBytes() {
        return peak;
    }

    public long heldBytes() {
        return held;
    }

    /** Every byte still held given back to the breaker. */
    @Override
    public void close() {
        if (held > 0) {
            breaker.release(held);
            held = 0;
        }
    }

    /** Bytes a String of {@code chars} UTF-16 units costs on a 64-bit JVM, kept in a hash set or map. */
    static long stringBytes(int chars) {
        // String (24) + its byte[] (16 + up to 2 per char, Latin-1 or UTF-16) + a HashMap node (32) + its slot (8).
        return 80L + 2L * chars;
    }
}
