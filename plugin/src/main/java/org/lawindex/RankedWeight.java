package org.lawindex;

import java.io.IOException;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;

/** The weight of every lawindex query: a {@link RankedScorer} per leaf with matches, the ranking's explanations. */
final class RankedWeight extends VersionedWeight {
    final Ranked ranking;
    final Collected collected;

    RankedWeight(Query query, Ranked ranking, Collected collected) {
        super(query);
        this.ranking = ranking;
        this.collected = collected;
    }

    @Override
    public ScorerSupplier scorerSupplier(LeafReaderContext leaf) {
        int[] docs = collected.docs(leaf.ord);
        if (docs.length == 0) {
            return null;
        }
        Weight weight = this;
        return new ScorerSupplier() {
            @Override
            public Scorer get(long leadCost) {
                return new RankedScorer(weight, collected, leaf);
            }

            @Override
            public long cost() {
                return docs.length;
            }
        };
    }

    @Override
    public Explanation explain(LeafReaderContext leaf, int doc) throws IOException {
        return ranking.explain(leaf, doc, collected);
    }

    @Override
    public boolean isCacheable(LeafReaderContext leaf) {
        // Its scores depend on the whole shard (N, n, every row's vector, the other documents' floats).
        return false;
    }
}
