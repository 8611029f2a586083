package org.lawindex;

import java.io.IOException;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;

/** Lucene 9 (OpenSearch 2.x): Weight#scorer is abstract; it is the scorer supplier's scorer. */
abstract class VersionedWeight extends Weight {
    protected VersionedWeight(Query query) {
        super(query);
    }

    @Override
    public abstract ScorerSupplier scorerSupplier(LeafReaderContext leaf) throws IOException;

    @Override
    public Scorer scorer(LeafReaderContext leaf) throws IOException {
        ScorerSupplier supplier = scorerSupplier(leaf);
        return supplier == null ? null : supplier.get(Long.MAX_VALUE);
    }
}
