package org.lawindex;

import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.Weight;

/** Lucene 9 (OpenSearch 2.x): a Scorer is made with its Weight. */
abstract class VersionedScorer extends Scorer {
    protected VersionedScorer(Weight weight) {
        super(weight);
    }
}
