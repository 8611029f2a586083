package org.lawindex;

import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;

/** Lucene 10 (OpenSearch 3.x): a Scorer no longer holds its Weight. */
abstract class VersionedScorer extends Scorer {
    protected VersionedScorer(Weight weight) {
        super();
    }
}
