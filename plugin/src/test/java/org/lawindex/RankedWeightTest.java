package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.Weight;
import org.junit.jupiter.api.Test;
import org.opensearch.search.query.QueryPhase;

/** The weight, scorer and query every lawindex query shares: {@link RankedWeight}, {@link RankedScorer},
 * {@link RankedQuery}. */
class RankedWeightTest {
    /** A ranked query over a given ranking, counting the rankings it makes; {@code timeout}: it times out. */
    private static final class Given extends RankedQuery {
        final CollectedTest.Given ranking;
        final boolean timeout;
        int made;

        Given(CollectedTest.Given ranking, boolean timeout) {
            this.ranking = ranking;
            this.timeout = timeout;
        }

        @Override
        Ranked ranking(IndexSearcher searcher) {
            made++;
            if (timeout) {
                throw new QueryPhase.TimeExceededException();
            }
            return ranking;
        }

        @Override
        public String toString(String field) {
            return "given";
        }

        @Override
        public void visit(QueryVisitor visitor) {
            visitor.visitLeaf(this);
        }

        @Override
        public boolean equals(Object other) {
            return this == other;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }
    }

    private static CollectedTest.Given every(int maxDoc, int step) {
        double[] exact = new double[maxDoc];
        List<Integer> matching = new ArrayList<>();
        for (int doc = 0; doc < maxDoc; doc += step) {
            exact[doc] = 1.0 + (doc * 7919 % 101);
            matching.add(doc);
        }
        return CollectedTest.Given.of(exact, new long[maxDoc], matching);
    }

    private static RankedWeight weight(Shard shard, CollectedTest.Given ranking) {
        return new RankedWeight(new Given(ranking, false), ranking, Collected.of(ranking, shard.reader, 1f));
    }

    @Test
    void theScorerWalksEachLeafsMatchesWithTheirFloats() throws IOException {
        try (Shard shard = new Shard(300, new Random(3))) {
            RankedWeight weight = weight(shard, every(300, 4));
            Collected collected = weight.collected;
            int seen = 0;
            for (LeafReaderContext leaf : shard.reader.leaves()) {
                ScorerSupplier supplier = weight.scorerSupplier(leaf);
                if (collected.docs(leaf.ord).length == 0) {
                    assertNull(supplier);
                    continue;
                }
                assertEquals(collected.docs(leaf.ord).length, supplier.cost());
                Scorer scorer = supplier.get(Long.MAX_VALUE);
                assertEquals(-1, scorer.docID());
                assertEquals(collected.maxScore(), scorer.getMaxScore(DocIdSetIterator.NO_MORE_DOCS));
                for (int doc : collected.docs(leaf.ord)) {
                    assertEquals(doc, scorer.iterator().nextDoc());
                    assertEquals(collected.score(leaf, doc), scorer.score());
                    assertEquals(collected.score(leaf, doc), weight.explain(leaf, doc).getValue().floatValue());
                    seen++;
                }
                assertEquals(DocIdSetIterator.NO_MORE_DOCS, scorer.iterator().nextDoc());
                assertTrue(!weight.isCacheable(leaf));
            }
            assertEquals(weight.ranking.ranked().length, seen);
        }
    }

    @Test
    void advanceAndTheLeastCompetitiveScoreSkipWhatCannotCount() throws IOException {
        try (Shard shard = new Shard(300, new Random(3))) {
            RankedWeight weight = weight(shard, every(300, 4));
            Collected collected = weight.collected;
            LeafReaderContext leaf = shard.reader.leaves().get(0);
            int[] docs = collected.docs(leaf.ord);
            Scorer scorer = weight.scorerSupplier(leaf).get(1);
            assertEquals(docs[1], scorer.iterator().advance(docs[0] + 1));
            float least = collected.score(leaf, docs[docs.length - 1]) + 50f;
            scorer.setMinCompetitiveScore(least);
            for (int doc = scorer.iterator().nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = scorer.iterator().nextDoc()) {
                assertTrue(scorer.score() >= least);
            }
        }
    }

    @Test
    void theQueryRanksOncePerReaderAndBoostAndAnswersNothingPastTheTimeout() throws IOException {
        try (Shard shard = new Shard(120, new Random(4))) {
            IndexSearcher searcher = new IndexSearcher(shard.reader);
            Given query = new Given(every(120, 2), false);
            Weight first = query.createWeight(searcher, ScoreMode.COMPLETE, 1f);
            Weight again = query.createWeight(searcher, ScoreMode.COMPLETE, 1f);
            assertEquals(1, query.made);
            assertSame(((RankedWeight) first).collected, ((RankedWeight) again).collected);
            RankedWeight boosted = (RankedWeight) query.createWeight(searcher, ScoreMode.COMPLETE, 4f);
            assertEquals(2, query.made);
            assertEquals(4 * ((RankedWeight) first).collected.maxScore(), boosted.collected.maxScore());
            TopDocs top = searcher.search(query, 200);
            assertEquals(60, top.scoreDocs.length);
            Given late = new Given(every(120, 2), true);
            Weight none = late.createWeight(searcher, ScoreMode.COMPLETE, 1f);
            for (LeafReaderContext leaf : shard.reader.leaves()) {
                assertNull(none.scorerSupplier(leaf));
            }
        }
    }
}
