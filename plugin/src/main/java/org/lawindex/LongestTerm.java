package org.lawindex;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * The length in bytes of a segment's longest term of a field: no word longer than it plus one letter has a
 * known word one edit away, so a 100,000-letter token never builds a Levenshtein automaton (one of 100,000
 * positions holds hundreds of MB). Lucene keeps no such statistic, so it is read by one walk of the
 * segment's term dictionary, the first time a long word needs it, and remembered per segment core (dropped
 * when the segment closes): one int per segment and field, never anything per question.
 */
final class LongestTerm {
    /** Words of at most this many code points build their automaton without asking (a few KB each). */
    static final int ALWAYS_TRIED = 64;

    private static final Map<IndexReader.CacheKey, Map<String, Integer>> KNOWN = new ConcurrentHashMap<>();

    private LongestTerm() {}

    /** The longest term of {@code field} in the segment, in bytes (0 without the field). */
    static int of(LeafReader reader, String field, Work work) throws IOException {
        IndexReader.CacheHelper helper = reader.getCoreCacheHelper();
        Map<String, Integer> fields = helper == null ? null : KNOWN.get(helper.getKey());
        Integer known = fields == null ? null : fields.get(field);
        if (known != null) {
            return known;
        }
        int longest = 0;
        Terms terms = reader.terms(field);
        if (terms != null) {
            TermsEnum walk = terms.iterator();
            for (BytesRef term = walk.next(); term != null; term = walk.next()) {
                work.termVisited();
                longest = Math.max(longest, term.length);
            }
        }
        if (helper != null) {
            IndexReader.CacheKey key = helper.getKey();
            Map<String, Integer> made = KNOWN.computeIfAbsent(key, k -> {
                helper.addClosedListener(KNOWN::remove);
                return new ConcurrentHashMap<>();
            });
            made.put(field, longest);
        }
        return longest;
    }
}
