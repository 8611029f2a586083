package org.lawindex;

import java.io.IOException;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Explanation;

/**
 * A shard's whole ranking for one question, made before Lucene collects a hit: by words ({@link Ranking}), or by
 * meaning or hybrid ({@link MeaningRanking}). What the shared weight and scorer need of it: the matching documents
 * in the exact order (score descending, then corpus order), each one's exact float64 score, and an explanation of a
 * hit. {@link Collected} turns it into the floats Lucene's collector is handed.
 */
interface Ranked {
    /** Every matching document (global id), in the exact order. */
    int[] ranked();

    /** A matching document's exact float64 score. */
    double exact(int global);

    /** A hit's explanation, its score the float {@code collected} hands the collector ({@code doc}: of the leaf). */
    Explanation explain(LeafReaderContext leaf, int doc, Collected collected) throws IOException;
}
