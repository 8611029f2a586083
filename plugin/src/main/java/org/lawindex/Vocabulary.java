package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.FieldInfo;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.automaton.CompiledAutomaton;
import org.apache.lucene.util.automaton.LevenshteinAutomata;

/**
 * The spec's vocabulary (its {@code frequency} map) read from a field's term dictionary: which words the
 * laws use (a term with at least one live document), how many laws use each (its live document count, the
 * spec's n), and the order the spec's map holds them in: the order of first appearance, that is the corpus
 * order of the first law that has the word, then the word's first position in that law.
 *
 * <p>Corpus order is the {@code order} field's value (the law's line in its corpus file, written by the
 * loader); a document without it comes after every one with it, in document order. Positions are needed
 * only to order two words first seen in the same law; a field indexed without positions cannot, and such a
 * question is refused with a message rather than answered in a guessed order.
 */
public final class Vocabulary {
    private final List<LeafReaderContext> leaves;
    private final String field;
    private final String orderField;
    private final Map<String, Long> counts = new HashMap<>();

    public Vocabulary(IndexReader reader, String field, String orderField) {
        this.leaves = reader.leaves();
        this.field = field;
        this.orderField = orderField;
    }

    public String field() {
        return field;
    }

    /** How many live documents have {@code word} in the field: the spec's n (0 for a word the laws do not use). */
    public long count(String word) throws IOException {
        Long known = counts.get(word);
        if (known != null) {
            return known;
        }
        BytesRef term = new BytesRef(word);
        long n = 0;
        for (LeafReaderContext leaf : leaves) {
            TermsEnum terms = termsEnum(leaf.reader());
            if (terms == null || !terms.seekExact(term)) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            if (live == null) {
                n += terms.docFreq();
                continue;
            }
            PostingsEnum postings = terms.postings(null, PostingsEnum.NONE);
            for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                if (live.get(doc)) {
                    n += 1;
                }
            }
        }
        counts.put(word, n);
        return n;
    }

    /** Whether the laws use {@code word}: {@code vocabulary.has(word)}. */
    public boolean has(String word) throws IOException {
        return count(word) > 0;
    }

    private TermsEnum termsEnum(LeafReader reader) throws IOException {
        Terms terms = reader.terms(field);
        return terms == null ? null : terms.iterator();
    }

    /** The known words of four letters or more that {@code word} contains, in no particular order. */
    public Set<String> contained(String word) throws IOException {
        Set<String> found = new LinkedHashSet<>();
        for (int start = 0; start < word.length(); start++) {
            for (int end = start + 4; end <= word.length(); end++) {
                String part = word.substring(start, end);
                if (!found.contains(part) && has(part)) {
                    found.add(part);
                }
            }
        }
        return found;
    }

    /**
     * The known words one insertion, deletion or substitution from {@code word} (no transpositions), in no
     * particular order: Lucene's Levenshtein automaton of distance 1 run over the term dictionary, so a
     * million-word vocabulary is not walked word by word. It counts code points where the spec's
     * oneEditApart counts UTF-16 units; the two differ only past U+FFFF, and the analyzer's terms are
     * runs of [a-z0-9].
     */
    public Set<String> oneEditFrom(String word) throws IOException {
        Set<String> found = new LinkedHashSet<>();
        CompiledAutomaton automaton = new CompiledAutomaton(new LevenshteinAutomata(word, false).toAutomaton(1), true, false);
        for (LeafReaderContext leaf : leaves) {
            Terms terms = leaf.reader().terms(field);
            if (terms == null) {
                continue;
            }
            TermsEnum matching = automaton.getTermsEnum(terms);
            for (BytesRef term = matching.next(); term != null; term = matching.next()) {
                String known = term.utf8ToString();
                if (!known.equals(word) && !found.contains(known) && has(known)) {
                    found.add(known);
                }
            }
        }
        return found;
    }

    /** {@code words} in the spec's vocabulary order (first appearance); each must be known. */
    public List<String> inOrder(Set<String> words) throws IOException {
        List<Seen> seen = new ArrayList<>();
        for (String word : words) {
            seen.add(firstSeen(word));
        }
        Collections.sort(seen);
        for (int i = 1; i < seen.size(); i++) {
            Seen before = seen.get(i - 1);
            Seen after = seen.get(i);
            if (before.order == after.order && before.doc == after.doc && (before.position < 0 || after.position < 0)) {
                throw new IllegalArgumentException(
                    "field [" + field + "] is indexed without positions, so the spec's order of [" + before.word + "] and ["
                        + after.word + "], both first used by the same law, cannot be known; index it with "
                        + "\"index_options\": \"positions\"");
            }
        }
        List<String> ordered = new ArrayList<>(seen.size());
        for (Seen s : seen) {
            ordered.add(s.word);
        }
        return ordered;
    }

    /** Where a word first appears: (the first law's corpus order, its document, the word's first position there). */
    private Seen firstSeen(String word) throws IOException {
        BytesRef term = new BytesRef(word);
        long bestOrder = Long.MAX_VALUE;
        int bestDoc = Integer.MAX_VALUE;
        LeafReaderContext bestLeaf = null;
        for (LeafReaderContext leaf : leaves) {
            TermsEnum terms = termsEnum(leaf.reader());
            if (terms == null || !terms.seekExact(term)) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            SortedNumericDocValues orders = DocValues.getSortedNumeric(leaf.reader(), orderField);
            PostingsEnum postings = terms.postings(null, PostingsEnum.NONE);
            for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                if (live != null && !live.get(doc)) {
                    continue;
                }
                long order = orders.advanceExact(doc) ? orders.nextValue() : Long.MAX_VALUE;
                int global = leaf.docBase + doc;
                if (order < bestOrder || (order == bestOrder && global < bestDoc)) {
                    bestOrder = order;
                    bestDoc = global;
                    bestLeaf = leaf;
                }
            }
        }
        if (bestLeaf == null) {
            throw new IllegalStateException("[" + word + "] is not a word of field [" + field + "]");
        }
        int position = -1;
        FieldInfo info = bestLeaf.reader().getFieldInfos().fieldInfo(field);
        if (info != null && info.getIndexOptions().compareTo(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS) >= 0) {
            TermsEnum terms = termsEnum(bestLeaf.reader());
            terms.seekExact(term);
            PostingsEnum postings = terms.postings(null, PostingsEnum.POSITIONS);
            if (postings.advance(bestDoc - bestLeaf.docBase) == bestDoc - bestLeaf.docBase) {
                position = postings.nextPosition();
            }
        }
        return new Seen(word, bestOrder, bestDoc, position);
    }

    private static final class Seen implements Comparable<Seen> {
        final String word;
        final long order;
        final int doc;
        final int position;

        Seen(String word, long order, int doc, int position) {
            this.word = word;
            this.order = order;
            this.doc = doc;
            this.position = position;
        }

        @Override
        public int compareTo(Seen other) {
            if (order != other.order) {
                return Long.compare(order, other.order);
            }
            if (doc != other.doc) {
                return Integer.compare(doc, other.doc);
            }
            return Integer.compare(position, other.position);
        }
    }
}
