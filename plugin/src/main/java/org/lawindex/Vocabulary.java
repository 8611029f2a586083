package org.lawindex;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
    private final Work work;
    /** Per leaf: one terms enum for every seek of this question (null where the leaf lacks the field). */
    private final TermsEnum[] enums;
    /** The known words this question met: their count, and where they first appear once asked. */
    private final Map<String, Known> known = new HashMap<>();

    public Vocabulary(IndexReader reader, String field, String orderField) throws IOException {
        this(reader, field, orderField, Work.uncharged());
    }

    public Vocabulary(IndexReader reader, String field, String orderField, Work work) throws IOException {
        this.leaves = reader.leaves();
        this.field = field;
        this.orderField = orderField;
        this.work = work;
        this.enums = new TermsEnum[leaves.size()];
        for (int l = 0; l < leaves.size(); l++) {
            enums[l] = termsEnum(leaves.get(l).reader());
        }
    }

    public String field() {
        return field;
    }

    /**
     * How many live documents have {@code word} in the field: the spec's n (0 for a word the laws do not use).
     * Only known words are remembered (at most the field's vocabulary, charged): a word looked up and not
     * found keeps nothing.
     */
    public long count(String word) throws IOException {
        Known found = known.get(word);
        if (found != null) {
            return found.count;
        }
        BytesRef term = new BytesRef(word);
        long n = 0;
        for (int l = 0; l < leaves.size(); l++) {
            TermsEnum terms = enums[l];
            work.lookup();
            if (terms == null || !terms.seekExact(term)) {
                continue;
            }
            n += live(leaves.get(l), terms);
        }
        if (n > 0) {
            work.charge(Work.stringBytes(word.length()) + 48);
            known.put(word, new Known(n));
        }
        return n;
    }

    /** The live documents of the term {@code terms} is positioned on. */
    private long live(LeafReaderContext leaf, TermsEnum terms) throws IOException {
        Bits live = leaf.reader().getLiveDocs();
        if (live == null) {
            return terms.docFreq();
        }
        long n = 0;
        PostingsEnum postings = terms.postings(null, PostingsEnum.NONE);
        for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
            work.posting();
            if (live.get(doc)) {
                n += 1;
            }
        }
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

    /**
     * The known words of four letters or more that {@code word} contains, in no particular order.
     *
     * <p>Not by looking up every substring (n²/2 of them, each copied: a 1,500-letter token held ~1 GB): from
     * each start, one seek to the first term at or after the next four letters tells at once whether any term
     * begins with them and how far the word and that term agree; the next seek starts past that agreement.
     * So each start costs at most one seek per letter of the longest term (a term that begins there is no
     * longer than the longest term), and usually one: n x L seeks at most, on slices of the word's own UTF-8
     * bytes, with nothing kept but the words found.
     */
    public Set<String> contained(String word) throws IOException {
        Set<String> found = new LinkedHashSet<>();
        byte[] bytes = word.getBytes(StandardCharsets.UTF_8);
        work.charge(16L + bytes.length);
        BytesRef key = new BytesRef(bytes);
        for (TermsEnum terms : enums) {
            if (terms == null) {
                continue;
            }
            for (int start = 0; start + 4 <= bytes.length; start++) {
                if ((bytes[start] & 0xC0) == 0x80) {
                    continue; // inside a character: a known word starts at a character
                }
                int rest = bytes.length - start;
                // Four bytes at least: a word of four UTF-16 units has four UTF-8 bytes or more.
                for (int length = 4; length <= rest; ) {
                    key.offset = start;
                    key.length = length;
                    work.lookup();
                    if (terms.seekCeil(key) == TermsEnum.SeekStatus.END) {
                        break;
                    }
                    BytesRef term = terms.term();
                    int agree = agreement(term, bytes, start, rest);
                    int termLength = term.length; // the enum's bytes change with the next seek (has() seeks)
                    if (agree < length) {
                        break; // no term begins with these letters, so none with more of them
                    }
                    if (agree == termLength) {
                        // The term is the word's next term.length bytes: a word it contains (if it has four
                        // letters and a live law); the next candidate is one letter longer.
                        String part = term.utf8ToString();
                        if (part.length() >= 4 && !found.contains(part) && has(part)) {
                            work.charge(Work.stringBytes(part.length()));
                            found.add(part);
                        }
                        length = termLength + 1;
                    } else {
                        // The word's first `agree` bytes from here are a proper prefix of the first term at or
                        // after them: none of them is a term (it would come before that one).
                        length = agree + 1;
                    }
                }
            }
        }
        return found;
    }

    /** How many bytes {@code term} and {@code bytes[start, start + rest)} agree on from their start. */
    private static int agreement(BytesRef term, byte[] bytes, int start, int rest) {
        int most = Math.min(term.length, rest);
        int i = 0;
        while (i < most && term.bytes[term.offset + i] == bytes[start + i]) {
            i++;
        }
        return i;
    }

    /**
     * The known words one insertion, deletion or substitution from {@code word} (no transpositions), in no
     * particular order: Lucene's Levenshtein automaton of distance 1 run over the term dictionary, so a
     * million-word vocabulary is not walked word by word. It counts code points where the spec's
     * oneEditApart counts UTF-16 units; the two differ only past U+FFFF, and the analyzer's terms are
     * runs of [a-z0-9]. A word more than one letter longer than a segment's longest term has no neighbour
     * there, and builds no automaton (its size grows with the word).
     */
    public Set<String> oneEditFrom(String word) throws IOException {
        Set<String> found = new LinkedHashSet<>();
        int points = word.codePointCount(0, word.length());
        CompiledAutomaton automaton = null;
        long automatonBytes = 0;
        try {
            for (LeafReaderContext leaf : leaves) {
                Terms terms = leaf.reader().terms(field);
                if (terms == null) {
                    continue;
                }
                if (points > LongestTerm.ALWAYS_TRIED && points > LongestTerm.of(leaf.reader(), field, work) + 1) {
                    continue;
                }
                if (automaton == null) {
                    // Charged before it is built: about 3.3 KB a code point on Lucene 10, measured (ExpansionCostTest).
                    automatonBytes = AUTOMATON_BASE_BYTES + AUTOMATON_BYTES_PER_POINT * points;
                    work.charge(automatonBytes);
                    automaton = new CompiledAutomaton(new LevenshteinAutomata(word, false).toAutomaton(1), true, false);
                }
                TermsEnum matching = automaton.getTermsEnum(terms);
                for (BytesRef term = matching.next(); term != null; term = matching.next()) {
                    work.termVisited();
                    String near = term.utf8ToString();
                    if (!near.equals(word) && !found.contains(near) && has(near)) {
                        work.charge(Work.stringBytes(near.length()));
                        found.add(near);
                    }
                }
            }
        } finally {
            work.release(automatonBytes);
        }
        return found;
    }

    /** What one word's Levenshtein automaton of distance 1 holds: a base and a part per code point. */
    static final long AUTOMATON_BASE_BYTES = 16384;
    static final long AUTOMATON_BYTES_PER_POINT = 4096;

    /** {@code words} in the spec's vocabulary order (first appearance); each must be known. */
    public List<String> inOrder(Set<String> words) throws IOException {
        List<Seen> seen = new ArrayList<>();
        for (String word : words) {
            Known entry = known.get(word);
            if (entry == null) {
                count(word);
                entry = known.get(word);
            }
            if (entry == null) {
                throw new IllegalStateException("[" + word + "] is not a word of field [" + field + "]");
            }
            if (entry.first == null) {
                entry.first = firstSeen(word);
            }
            seen.add(entry.first);
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
            TermsEnum terms = enums[leaf.ord];
            work.lookup();
            if (terms == null || !terms.seekExact(term)) {
                continue;
            }
            Bits live = leaf.reader().getLiveDocs();
            SortedNumericDocValues orders = DocValues.getSortedNumeric(leaf.reader(), orderField);
            PostingsEnum postings = terms.postings(null, PostingsEnum.NONE);
            for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                work.posting();
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

    /** A known word met by this question: how many live laws have it, and (once asked) where it first appears. */
    private static final class Known {
        final long count;
        Seen first;

        Known(long count) {
            this.count = count;
        }
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
