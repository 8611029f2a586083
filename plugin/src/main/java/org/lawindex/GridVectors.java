package org.lawindex;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.BytesRef;

/**
 * One segment's rows with a vector, decoded once per segment core and kept until the core closes: each row's
 * leaf document id, its grid vector ({@code vector_grid}: one int32 grid unit a dimension, 256 for the road table, up
 * to 4,096 for an index of a user's own vectors) and its corpus order.
 *
 * <p>Why: read per question, the 6,000 vectors of a Texas-size state were 6 MB of binary doc values decompressed
 * every time, and their corpus orders 6,000 doc-values lookups; the query phase ranked every row by meaning in
 * 39 ms p50 where words took 1.9 ms (benchmarks/RESULTS.md, issue 28). A lawindex index is written once and never
 * changes, so a segment's vectors are as fixed as its terms: a core's decoded rows serve every question until
 * Lucene closes the core (merged away, or the index deleted), when a closed listener drops them. Deleted rows
 * are the reader's, not the core's: the ranking skips them per question by the reader's live docs.
 *
 * <p>Memory: {@link #rowBytes} a row (1,036 for 256 dimensions: 1,024 of grid units, 8 of order, 4 of id), charged before it is allocated to
 * the breaker given (the node's fielddata breaker, {@code indices.breaker.fielddata.limit}, which is what
 * OpenSearch charges its own per-segment field data to, and shows in {@code _nodes/stats/breaker}), and given back
 * when the core closes. The cache is bounded by the node setting {@code lawindex.vector_cache.size} (10% of the
 * heap by default: 51 MB of a 512 MB node, about 50,000 rows, eight Texases): past it the segments least recently
 * asked are dropped first, and a segment that does not fit at all is decoded for its request alone (charged to
 * the request breaker, released with it), as every question read them before. The bound is a quarter of the
 * fielddata breaker's default limit (40%), so 50 states asked by meaning on a small node answer as before and the
 * breaker keeps its room for OpenSearch's own field data; only a fielddata breaker that field data has already
 * filled refuses a segment's charge (429, naming the breaker). A segment is decoded by one request at a time; a
 * request cancelled while decoding keeps nothing and releases its charge.
 */
final class GridVectors {
    static final String FIELD = "vector_grid";
    /** Bytes a cached row of the road table's vectors costs (rowBytes of its 256 dimensions). */
    static final long ROW_BYTES = rowBytes(Embedder.DIMENSION);
    /** Rows decoded between two checks of the request's cancellation (a row is 1 KB decompressed and copied). */
    static final int CHECK_EVERY = 1024;

    /** Leaf document ids with a vector, ascending. */
    final int[] docs;
    /** {@code docs.length} rows of the question's dimension of grid units, row after row. */
    final int[] units;
    /** Each row's corpus order (the order field; Long.MAX_VALUE where it has none: after every row with one). */
    final long[] orders;
    /**
     * Leaf document ids of laws (a corpus order) without a vector, ascending: none in an index lawindex loads with
     * vectors. Such a law cannot be ranked by meaning, and leaving it out would move every row after it, so a
     * question that finds one live is refused (MeaningRanking).
     */
    final int[] bare;
    final long bytes;

    private GridVectors(int[] docs, int[] units, long[] orders, int[] bare, long bytes) {
        this.docs = docs;
        this.units = units;
        this.orders = orders;
        this.bare = bare;
        this.bytes = bytes;
    }

    int rows() {
        return docs.length;
    }

    /** Bytes a cached row of {@code dimension} grid units costs: its units, its corpus order, its document id. */
    static long rowBytes(int dimension) {
        return 4L * dimension + 8 + 4;
    }


    /** The cache's bound in bytes (lawindex.vector_cache.size; set by the plugin from the node's settings). */
    private static volatile long limit = 64L << 20;
    /** The bytes cached (every slot filled), and a clock of use for the least-recently-used eviction. */
    private static long held;
    private static long clock;
    private static final Object BOOK = new Object();

    /** The cached segments, by core and order field; what each was charged to is kept to release it. */
    private static final Map<Key, Slot> CACHE = new ConcurrentHashMap<>();
    /** The cores a closed listener is registered on (one per core, whatever its order fields). */
    private static final Map<IndexReader.CacheKey, Boolean> WATCHED = new ConcurrentHashMap<>();

    private static final class Key {
        final IndexReader.CacheKey core;
        final String orderField;
        final int dimension;

        Key(IndexReader.CacheKey core, String orderField, int dimension) {
            this.core = core;
            this.orderField = orderField;
            this.dimension = dimension;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key && ((Key) other).core == core && ((Key) other).orderField.equals(orderField)
                && ((Key) other).dimension == dimension;
        }

        @Override
        public int hashCode() {
            return 31 * (31 * System.identityHashCode(core) + orderField.hashCode()) + dimension;
        }
    }

    /** One cached segment: filled by the first request that decodes it to the end. */
    private static final class Slot {
        GridVectors vectors;
        Work.Breaker chargedTo;
        boolean closed;
        /** The clock when last asked (guarded by BOOK). */
        long used;
    }

    static void limit(long bytes) {
        limit = bytes;
    }

    /**
     * The segment's rows with a vector of {@code dimension} grid units (the question's: a stored vector of another
     * length is refused) and their orders: cached per core where the reader has one (charged to
     * {@code cacheBreaker}), else decoded for this request alone (charged to {@code work}'s breaker, released
     * with it). {@code work}'s cancellation is checked every {@link #CHECK_EVERY} rows decoded.
     */
    static GridVectors of(LeafReader reader, String orderField, int dimension, Work.Breaker cacheBreaker, Work work)
        throws IOException {
        IndexReader.CacheHelper helper = reader.getCoreCacheHelper();
        if (helper == null) {  // a reader whose core cannot be told apart: nothing kept
            return decode(reader, orderField, dimension, work, work::charge, work::release);
        }
        IndexReader.CacheKey core = helper.getKey();
        Key key = new Key(core, orderField, dimension);
        // Charged for every document before it is read: a segment past the bound is never cached.
        if (rowBytes(dimension) * reader.maxDoc() > limit) {
            return decode(reader, orderField, dimension, work, work::charge, work::release);
        }
        Slot slot = CACHE.computeIfAbsent(key, k -> new Slot());
        GridVectors vectors;
        synchronized (slot) {
            if (slot.vectors != null) {
                synchronized (BOOK) {
                    slot.used = ++clock;
                }
                return slot.vectors;
            }
            if (WATCHED.putIfAbsent(core, Boolean.TRUE) == null) {
                helper.addClosedListener(GridVectors::closed);
            }
            Work.Breaker breaker = Objects.requireNonNull(cacheBreaker);
            String label = "lawindex vector_grid of a segment";
            vectors = decode(reader, orderField, dimension, work, bytes -> breaker.charge(bytes, label), breaker::release);
            if (slot.closed) {  // the core closed while it was decoded: keep nothing
                breaker.release(vectors.bytes);
                return vectors;
            }
            slot.vectors = vectors;
            slot.chargedTo = breaker;
            synchronized (BOOK) {
                slot.used = ++clock;
                held += vectors.bytes;
            }
        }
        evictPastLimit(slot);
        return vectors;
    }

    /** While the cache holds more than its bound, the segment least recently asked (never {@code kept}) dropped. */
    private static void evictPastLimit(Slot kept) {
        while (true) {
            Key oldest = null;
            long oldestUse = Long.MAX_VALUE;
            synchronized (BOOK) {
                if (held <= limit) {
                    return;
                }
                // A scan of the cached segments (one a segment of each index asked: hundreds at most) per eviction.
                for (Map.Entry<Key, Slot> entry : CACHE.entrySet()) {
                    Slot slot = entry.getValue();
                    if (slot != kept && slot.used > 0 && slot.used < oldestUse) {
                        oldest = entry.getKey();
                        oldestUse = slot.used;
                    }
                }
            }
            if (oldest == null) {
                return;  // only `kept` is left: it fits the bound by itself (checked before it was decoded)
            }
            drop(oldest);
        }
    }

    /** A segment dropped from the cache and its bytes given back (a request still ranking with it keeps its arrays
     * until it ends). */
    private static void drop(Key key) {
        Slot slot = CACHE.remove(key);
        if (slot == null) {
            return;
        }
        synchronized (slot) {
            slot.closed = true;
            if (slot.vectors != null) {
                slot.chargedTo.release(slot.vectors.bytes);
                synchronized (BOOK) {
                    held -= slot.vectors.bytes;
                    slot.used = 0;
                }
                slot.vectors = null;
            }
        }
    }

    /** The core closed: its segments dropped and their bytes given back. */
    private static void closed(IndexReader.CacheKey core) {
        WATCHED.remove(core);
        for (Key key : CACHE.keySet()) {
            if (key.core == core) {
                drop(key);
            }
        }
    }

    /** The bytes every cached segment holds on this node (tests read it). */
    static long cachedBytes() {
        synchronized (BOOK) {
            return held;
        }
    }

    private interface Charge {
        void charge(long bytes);
    }

    private interface Release {
        void release(long bytes);
    }

    /**
     * The segment's rows read from its doc values: charged for every document of the segment first (a lawindex
     * index gives every row but its statistics document a vector), trimmed to the rows found and the rest given
     * back. On any failure (cancellation, a malformed vector, the breaker) the whole charge is given back.
     */
    private static GridVectors decode(LeafReader reader, String orderField, int dimension, Work work, Charge charge,
                                      Release release) throws IOException {
        BinaryDocValues values = reader.getBinaryDocValues(FIELD);
        int maxDoc = reader.maxDoc();
        if (values != null && (long) maxDoc * dimension > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a segment of " + maxDoc + " documents is past what the lawindex query ranks"
                + " by meaning (" + (Integer.MAX_VALUE / dimension) + " rows a segment of " + dimension + " dimensions)");
        }
        // Without the field, only the ids of the segment's laws (all of them bare) may be kept.
        long rowBytes = rowBytes(dimension);
        long charged = (values == null ? 4L : rowBytes) * maxDoc;
        charge.charge(charged);
        boolean kept = false;
        try {
            int[] docs = new int[values == null ? 0 : maxDoc];
            int[] units = new int[docs.length * dimension];
            long[] orders = new long[docs.length];
            int count = 0;
            if (values != null) {
                SortedNumericDocValues order = DocValues.getSortedNumeric(reader, orderField);
                for (int doc = values.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = values.nextDoc()) {
                    if (count % CHECK_EVERY == 0) {
                        work.checkCancelled();
                    }
                    read(values.binaryValue(), units, count * dimension, dimension);
                    docs[count] = doc;
                    orders[count] = order.advanceExact(doc) ? order.nextValue() : Long.MAX_VALUE;
                    count++;
                }
            }
            int[] bare = bare(reader, orderField, docs, count, work);
            long bytes = rowBytes * count + 4L * bare.length;
            GridVectors vectors = count == docs.length ? new GridVectors(docs, units, orders, bare, bytes)
                : new GridVectors(Arrays.copyOf(docs, count), Arrays.copyOf(units, count * dimension),
                    Arrays.copyOf(orders, count), bare, bytes);
            release.release(charged - bytes);
            kept = true;
            return vectors;
        } finally {
            if (!kept) {
                release.release(charged);
            }
        }
    }

    /**
     * The segment's laws (documents with a corpus order) that are not among {@code docs[0..count)}, the documents
     * with a vector (ascending): one pass over the order's doc values beside them. Fits the charge made for the
     * segment's every document (a law is either kind, never both).
     */
    private static int[] bare(LeafReader reader, String orderField, int[] docs, int count, Work work) throws IOException {
        SortedNumericDocValues laws = DocValues.getSortedNumeric(reader, orderField);
        int[] bare = new int[reader.maxDoc() - count];
        int found = 0;
        int at = 0;
        int seen = 0;
        for (int doc = laws.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = laws.nextDoc()) {
            if (seen++ % CHECK_EVERY == 0) {
                work.checkCancelled();
            }
            while (at < count && docs[at] < doc) {
                at++;
            }
            if (at < count && docs[at] == doc) {
                continue;
            }
            bare[found++] = doc;
        }
        return Arrays.copyOf(bare, found);
    }

    /**
     * One stored vector's grid units into {@code units} at {@code at}. OpenSearch's binary doc values hold a count
     * of values (vInt), then each value as its length (vInt) and bytes: one value of 4 bytes a dimension (1,024 for
     * the road table's 256), little-endian int32.
     */
    static void read(BytesRef stored, int[] units, int at, int dimension) {
        byte[] b = stored.bytes;
        int from = stored.offset;
        int[] next = new int[1];
        int values = vInt(b, from, next);
        from = next[0];
        int length = vInt(b, from, next);
        from = next[0];
        if (values != 1 || length != 4 * dimension) {
            throw new IllegalStateException("[" + FIELD + "] holds " + values + " value(s) of " + length
                + " bytes, not one of " + 4 * dimension + " (" + dimension + " little-endian int32)");
        }
        for (int d = 0; d < dimension; d++, from += 4) {
            units[at + d] = (b[from] & 0xff) | (b[from + 1] & 0xff) << 8 | (b[from + 2] & 0xff) << 16 | b[from + 3] << 24;
        }
    }

    private static int vInt(byte[] b, int at, int[] next) {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            byte one = b[at++];
            value |= (one & 0x7f) << shift;
            if (one >= 0) {
                next[0] = at;
                return value;
            }
        }
        throw new IllegalStateException("[" + FIELD + "] is not OpenSearch's binary doc values");
    }

    /** Row {@code row}'s dot product with the question's grid vector in grid units: exact in a long (below 2^48 for
     * vectors of norm 1), times 2^-40 the float64 cosine Python computes, to the bit. */
    long dot(int row, int[] question) {
        int at = row * question.length;
        long dot = 0;
        for (int d = 0; d < question.length; d++) {
            dot += (long) units[at + d] * question[d];
        }
        return dot;
    }
}
