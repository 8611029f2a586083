package org.lawindex;

import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;

/**
 * A ranking as Lucene's collector is handed it: a float per matching document that keeps the exact order, and
 * each leaf's matching documents.
 *
 * <p>Lucene sees float scores and breaks ties by document id. So the documents are taken in the exact order (score
 * descending, then corpus order) and given floats from the last up: each the float nearest its exact score times the
 * boost, raised where needed to stay above the document after it (one ulp above it, or level with it when its id
 * already comes first). Two scores float64 tells apart but float32 would tie, and exact ties (corpus order decides),
 * both come out in the exact order whatever the segments and their order. {@code _score} is thus the exact score
 * times the boost, rounded to float, raised by as many ulps as documents below it tie with it in float (none in
 * practice). The boost is applied to the float64 score before it is rounded: a power of two (the query's own boost,
 * LawindexQueryBuilder) is then exact, and any boost from a query around this one keeps the order; a score that
 * would overflow a float is refused.
 */
final class Collected {
    /** The reader and boost the floats are made for. */
    final IndexReader reader;
    final float boost;
    /** Per global document: the float handed to the collector (NaN: no match). */
    private final float[] floats;
    /** Per leaf: its matching documents (leaf ids, ascending). */
    private final int[][] docs;
    private final float maxScore;

    private Collected(IndexReader reader, float boost, float[] floats, int[][] docs, float maxScore) {
        this.reader = reader;
        this.boost = boost;
        this.floats = floats;
        this.docs = docs;
        this.maxScore = maxScore;
    }

    static Collected of(Ranked ranking, IndexReader reader, float boost) {
        int[] ranked = ranking.ranked();
        float[] floats = floats(ranking, ranked, reader.maxDoc(), boost);
        return new Collected(reader, boost, floats, perLeaf(ranked, reader.leaves()),
            ranked.length == 0 ? 0f : floats[ranked[0]]);
    }

    /** The floats, from the last document up, each at least the one below it (see the class). */
    static float[] floats(Ranked ranking, int[] ranked, int maxDoc, float boost) {
        float[] floats = new float[maxDoc];
        Arrays.fill(floats, Float.NaN);
        for (int r = ranked.length - 1; r >= 0; r--) {
            int doc = ranked[r];
            float nearest = (float) (ranking.exact(doc) * boost);
            if (r < ranked.length - 1) {
                int below = ranked[r + 1];
                // The collector ranks by float, then by document id: level with the one below is enough when this
                // one's id is the smaller.
                float least = doc < below ? floats[below] : Math.nextUp(floats[below]);
                nearest = Math.max(nearest, least);
            }
            floats[doc] = nearest;
        }
        if (ranked.length > 0 && Float.isInfinite(floats[ranked[0]])) {
            throw new IllegalArgumentException("[lawindex] boost: a score " + ranking.exact(ranked[0]) + " times the boost "
                + boost + " overflows a float, so the order could not be kept; use a boost from 2^-20 to 2^20");
        }
        return floats;
    }

    /** Each leaf's matching documents, ascending (one sort of the matching documents' global ids). */
    static int[][] perLeaf(int[] ranked, List<LeafReaderContext> leaves) {
        int[] ascending = ranked.clone();
        Arrays.sort(ascending);
        int[][] docs = new int[leaves.size()][];
        int from = 0;
        for (int l = 0; l < leaves.size(); l++) {
            LeafReaderContext leaf = leaves.get(l);
            int limit = leaf.docBase + leaf.reader().maxDoc();
            int to = from;
            while (to < ascending.length && ascending[to] < limit) {
                to++;
            }
            docs[l] = new int[to - from];
            for (int i = from; i < to; i++) {
                docs[l][i - from] = ascending[i] - leaf.docBase;
            }
            from = to;
        }
        return docs;
    }

    /** The leaf's matching documents, ascending. */
    int[] docs(int leafOrd) {
        return docs[leafOrd];
    }

    float score(LeafReaderContext leaf, int doc) {
        return floats[leaf.docBase + doc];
    }

    float score(int global) {
        return floats[global];
    }

    boolean matches(int global) {
        return !Float.isNaN(floats[global]);
    }

    float maxScore() {
        return maxScore;
    }

    /** How many ulps a document's float was raised above the float nearest its exact score times the boost. */
    int raised(int global, double exact) {
        int ulps = 0;
        for (float f = (float) (exact * boost); f < floats[global]; f = Math.nextUp(f)) {
            ulps++;
        }
        return ulps;
    }
}
