package org.lawindex;

import java.util.Arrays;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Weight;

/**
 * One leaf's matching documents (ascending) with the floats {@link Collected} made for them. With TOP_SCORES (no
 * total hit count asked for) the collector tells it the least score it still needs, and the documents below it
 * are skipped.
 */
final class RankedScorer extends VersionedScorer {
    private final Collected collected;
    private final LeafReaderContext leaf;
    private final int[] docs;
    private final DocIdSetIterator iterator;
    private int at = -1;
    private float minCompetitive = 0f;

    RankedScorer(Weight weight, Collected collected, LeafReaderContext leaf) {
        super(weight);
        this.collected = collected;
        this.leaf = leaf;
        this.docs = collected.docs(leaf.ord);
        this.iterator = new DocIdSetIterator() {
            @Override
            public int docID() {
                return at < 0 ? -1 : at >= docs.length ? NO_MORE_DOCS : docs[at];
            }

            @Override
            public int nextDoc() {
                at++;
                return competitive();
            }

            @Override
            public int advance(int target) {
                int found = Arrays.binarySearch(docs, Math.max(at + 1, 0), docs.length, target);
                at = found >= 0 ? found : -found - 1;
                return competitive();
            }

            @Override
            public long cost() {
                return docs.length;
            }
        };
    }

    /** From {@code at} on, past the documents whose score cannot enter the collector's top hits any more. */
    private int competitive() {
        if (minCompetitive > 0) {
            while (at < docs.length && collected.score(leaf, docs[at]) < minCompetitive) {
                at++;
            }
        }
        return iterator.docID();
    }

    @Override
    public void setMinCompetitiveScore(float minScore) {
        minCompetitive = minScore;
    }

    @Override
    public int docID() {
        return iterator.docID();
    }

    @Override
    public DocIdSetIterator iterator() {
        return iterator;
    }

    @Override
    public float getMaxScore(int upTo) {
        return collected.maxScore();
    }

    @Override
    public float score() {
        return collected.score(leaf, docID());
    }
}
