package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.automaton.CompiledAutomaton;
import org.apache.lucene.util.automaton.LevenshteinAutomata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The expansion's cost, counted (seeks in the term dictionary, terms visited, bytes held), never timed: on
 * words of 10 to 100,000 letters and a vocabulary of a million words, it stays within the question's length
 * times the longest term, where the expansion this replaced looked up (and kept) every substring of four
 * letters or more: n²/2 of them, 5,000,000,000 for 100,000 letters.
 */
class ExpansionCostTest {
    private static final int[] LENGTHS = {10, 100, 1_000, 10_000, 100_000};
    /** The million-word vocabulary's words are 3 to 12 letters long: its longest term. */
    private static final int LONGEST = 12;
    private static final int MILLION = 1_000_000;

    private static Directory directory;
    private static DirectoryReader reader;
    private static List<String> sample;

    @BeforeAll
    static void aMillionWords() throws IOException {
        directory = new ByteBuffersDirectory();
        Random random = new Random(26);
        Set<String> words = new LinkedHashSet<>();
        while (words.size() < MILLION) {
            words.add(letters(random, 3 + random.nextInt(LONGEST - 2)));
        }
        // The longest word is exactly LONGEST letters (the bounds below are in terms of it).
        words.add("z".repeat(LONGEST));
        IndexWriterConfig config = new IndexWriterConfig(new WhitespaceAnalyzer()).setRAMBufferSizeMB(1024);
        sample = new ArrayList<>();
        try (IndexWriter writer = new IndexWriter(directory, config)) {
            StringBuilder text = new StringBuilder();
            int order = 0;
            int inDoc = 0;
            for (String word : words) {
                text.append(word).append(' ');
                if (sample.size() < 2000 && random.nextInt(500) == 0) {
                    sample.add(word);
                }
                if (++inDoc == 1000) {
                    writer.addDocument(law(order++, text.toString()));
                    text.setLength(0);
                    inDoc = 0;
                }
            }
            if (inDoc > 0) {
                writer.addDocument(law(order, text.toString()));
            }
            writer.forceMerge(1);
        }
        reader = DirectoryReader.open(directory);
    }

    private static Document law(int order, String text) {
        Document doc = new Document();
        doc.add(new NumericDocValuesField("order", order));
        doc.add(new TextField("words", text, Field.Store.NO));
        return doc;
    }

    @AfterAll
    static void close() throws IOException {
        reader.close();
        directory.close();
    }

    private static String letters(Random random, int length) {
        StringBuilder word = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            word.append((char) ('a' + random.nextInt(26)));
        }
        return word.toString();
    }

    /** A token of `length` letters made of the vocabulary's own words, glued. */
    private static String knownWords(Random random, int length) {
        StringBuilder token = new StringBuilder();
        while (token.length() < length) {
            token.append(sample.get(random.nextInt(sample.size())));
        }
        return token.substring(0, length);
    }

    @Test
    void containedSeeksAtMostOncePerLetterOfTheLongestTermFromEachStart() throws IOException {
        Random random = new Random(1);
        for (int length : LENGTHS) {
            for (String kind : List.of("random", "known words", "periodic")) {
                String word = kind.equals("random") ? letters(random, length)
                    : kind.equals("known words") ? knownWords(random, length)
                    : "abcdefg".repeat(length / 7 + 1).substring(0, length);
                Work work = Work.uncharged();
                Vocabulary vocabulary = new Vocabulary(reader, "words", "order", work);
                Set<String> found = vocabulary.contained(word);
                long bound = (long) length * (LONGEST - 2);
                assertTrue(work.lookups() <= bound, kind + " of " + length + ": " + work.lookups() + " seeks > " + bound);
                // Held: the word's bytes and the words found, each no longer than the longest term.
                long held = 16L + length + (long) found.size() * (Work.stringBytes(LONGEST) + 48);
                assertTrue(work.peakBytes() <= 2 * held, kind + " of " + length + ": " + work.peakBytes() + " bytes");
                System.out.println("contained, " + kind + ", " + length + " letters: " + work.lookups() + " seeks (the "
                    + "old way: " + ((long) length - 3) * (length - 2) / 2 + " substrings kept), " + found.size()
                    + " words, " + work.peakBytes() + " bytes at most");
            }
        }
    }

    @Test
    void aWordLongerThanEveryTermBuildsNoAutomaton() throws IOException {
        Random random = new Random(2);
        // The first long word walks the segment's terms once for its longest term; no other word does.
        new Vocabulary(reader, "words", "order", Work.uncharged()).oneEditFrom(letters(random, 200));
        for (int length : LENGTHS) {
            Work work = Work.uncharged();
            Vocabulary vocabulary = new Vocabulary(reader, "words", "order", work);
            String word = letters(random, length);
            Set<String> near = vocabulary.oneEditFrom(word);
            if (length > LONGEST + 1) {
                assertEquals(Set.of(), near);
                assertEquals(0, work.termsVisited(), length + " letters");
                assertEquals(0, work.peakBytes(), length + " letters: an automaton was charged");
            }
            assertTrue(work.termsVisited() <= 30L * length, length + ": " + work.termsVisited());
        }
    }

    @Test
    void spelledAsOnLongWordsIsTheSpecs() throws IOException {
        // The spec's own loop (SpecPort) over a generated vocabulary, on long tokens of its words and noise.
        Random random = new Random(3);
        List<Boolean> ranked = new ArrayList<>();
        List<List<String>> docs = Fixture.corpus(random, 250, ranked);
        try (Fixture fixture = new Fixture(docs, ranked, 3)) {
            List<String> known = new ArrayList<>(fixture.spec.frequency.keySet());
            for (int length : new int[] {10, 100, 1_000, 10_000, 30_000}) {
                StringBuilder glued = new StringBuilder();
                while (glued.length() < length) {
                    glued.append(random.nextInt(3) == 0 ? "h" : known.get(random.nextInt(known.size())));
                }
                String word = glued.substring(0, length);
                Work work = Work.uncharged();
                assertEquals(fixture.spec.spelledAs(word), Expansion.spelledAs(word, new Vocabulary(fixture.reader, "words",
                    "order", work)), length + " letters");
                assertTrue(work.lookups() <= 8L * length * fixture.reader.leaves().size(), length + ": " + work.lookups());
            }
        }
    }

    @Test
    void aRepeatedWordIsSpelledOnce() throws IOException {
        String word = letters(new Random(4), 5_000);
        Work once = Work.uncharged();
        Expansion.asked(List.of(word), new Vocabulary(reader, "words", "order", once));
        Work often = Work.uncharged();
        List<String> words = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            words.add(word);
        }
        Expansion.asked(words, new Vocabulary(reader, "words", "order", often));
        assertEquals(once.lookups(), often.lookups());
    }

    @Test
    void cancellationIsCheckedAsTheWorkGoes() throws IOException {
        RuntimeException cancelled = new RuntimeException("cancelled");
        int[] checks = {0};
        // Cancelled at the third check: the expansion of a 100,000-letter token stops within 3 x 1,024 steps.
        Work work = new Work(Work.UNLIMITED, () -> {
            if (++checks[0] == 3) {
                throw cancelled;
            }
        });
        Vocabulary vocabulary = new Vocabulary(reader, "words", "order", work);
        String word = letters(new Random(5), 100_000);
        assertSame(cancelled, assertThrows(RuntimeException.class, () -> Expansion.spelledAs(word, vocabulary)));
        assertTrue(work.lookups() <= 3L * Work.CHECK_EVERY, work.lookups() + " lookups");
    }

    @Test
    void theBreakerRefusesAndEveryByteIsGivenBack() throws IOException {
        long[] charged = {0};
        RuntimeException tripped = new RuntimeException("breaker");
        Work.Breaker breaker = new Work.Breaker() {
            @Override
            public void charge(long bytes, String label) {
                if (charged[0] + bytes > 50_000) {
                    throw tripped;
                }
                charged[0] += bytes;
            }

            @Override
            public void release(long bytes) {
                charged[0] -= bytes;
            }
        };
        // The vocabulary's own words glued: every one found is charged, and 100,000 letters hold more than 50 KB.
        String word = knownWords(new Random(6), 100_000);
        try (Work work = new Work(breaker, null)) {
            Vocabulary vocabulary = new Vocabulary(reader, "words", "order", work);
            assertSame(tripped, assertThrows(RuntimeException.class, () -> Expansion.spelledAs(word, vocabulary)));
        }
        assertEquals(0, charged[0], "bytes left charged after the work closed");
    }

    @Test
    void anAutomatonHoldsWhatItIsChargedAtMost() {
        // The charge for a word's Levenshtein automaton (Vocabulary.AUTOMATON_*) covers what Lucene builds.
        Random random = new Random(7);
        for (int length : new int[] {5, 12, 64, 200, 1000}) {
            String word = letters(random, length);
            CompiledAutomaton automaton = new CompiledAutomaton(new LevenshteinAutomata(word, false).toAutomaton(1), true, false);
            long charged = Vocabulary.AUTOMATON_BASE_BYTES + Vocabulary.AUTOMATON_BYTES_PER_POINT * length;
            assertTrue(automaton.ramBytesUsed() <= charged, length + ": " + automaton.ramBytesUsed() + " > " + charged);
            System.out.println("automaton of " + length + " letters: " + automaton.ramBytesUsed() + " bytes, charged " + charged);
        }
    }
}
