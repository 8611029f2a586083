package org.lawindex;

import java.io.IOException;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Weight;
import org.opensearch.search.query.QueryPhase;

/**
 * What the lawindex queries (by words: {@link LawindexQuery}; by meaning and hybrid: {@link MeaningQuery}) share:
 * each makes its shard's whole ranking ({@link #ranking}) when the weight is made, in the query phase, where
 * OpenSearch's reader checks the task's cancellation and the request's {@code timeout}; one {@link RankedWeight}
 * serves them all. The weight (the ranking and its floats) is kept for the reader and boost last asked, so that the fetch
 * phase's explain of each hit (a weight per hit: 6,000 hits of a 6,000-row state were once 6,000 rankings, 60 s)
 * reuses the query phase's.
 */
abstract class RankedQuery extends Query {
    /** The weight last made: its ranking and floats, for the reader and boost its Collected names. */
    private RankedWeight made;

    /** The shard's whole ranking for the searcher's reader; QueryPhase.TimeExceededException past the timeout. */
    abstract Ranked ranking(IndexSearcher searcher) throws IOException;

    @Override
    public final Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) throws IOException {
        IndexReader reader = searcher.getIndexReader();
        RankedWeight last;
        synchronized (this) {
            last = made;
        }
        if (last == null || last.collected.reader != reader || Float.compare(last.collected.boost, boost) != 0) {
            Ranked ranking;
            try {
                ranking = ranking(searcher);
            } catch (QueryPhase.TimeExceededException e) {
                // The request's timeout passed while the question was ranked. Thrown from here it would fail the
                // shard (500); a weight that matches nothing lets the search go on to its first leaf, where
                // OpenSearch checks the timeout again and answers as for any query: timed_out, no hits.
                return new MatchNoDocsQuery("lawindex: the request's timeout passed").createWeight(searcher, scoreMode, boost);
            }
            last = new RankedWeight(this, ranking, Collected.of(ranking, reader, boost));
            synchronized (this) {
                made = last;
            }
        }
        return last;
    }
}
