package org.lawindex;

import org.apache.lucene.search.Query;
import org.apache.lucene.search.Weight;

/** Lucene 10 (OpenSearch 3.x): Weight#scorer is final and calls scorerSupplier, which subclasses give. */
abstract class VersionedWeight extends Weight {
    protected VersionedWeight(Query query) {
        super(query);
    }
}
