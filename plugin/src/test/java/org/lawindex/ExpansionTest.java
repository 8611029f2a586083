package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/** The plugin's expansion (the term dictionary, live documents only) against the spec's spelledAs, word for word. */
class ExpansionTest {
    @Test
    void spelledAsIsTheSpecsOnGeneratedVocabularies() throws IOException {
        int words = 0;
        int expanded = 0;
        for (long seed = 1; seed <= 12; seed++) {
            Random random = new Random(seed);
            List<Boolean> ranked = new ArrayList<>();
            List<List<String>> docs = Fixture.corpus(random, 250, ranked);
            try (Fixture fixture = new Fixture(docs, ranked, seed)) {
                Vocabulary vocabulary = fixture.vocabulary();
                for (int q = 0; q < 200; q++) {
                    String word = Fixture.questionWord(random, docs);
                    List<String> expected = fixture.spec.spelledAs(word);
                    assertEquals(expected, Expansion.spelledAs(word, vocabulary), "seed " + seed + ", word " + word);
                    words++;
                    if (expected.size() > 1) {
                        expanded++;
                    }
                }
                for (String word : fixture.spec.frequency.keySet()) {
                    assertEquals((long) fixture.spec.frequency.get(word), vocabulary.count(word), word);
                }
                assertEquals(0, vocabulary.count("qqqqq"), "a deleted document's word is no word of the laws");
            }
        }
        // The generator must reach the case that needs ordering: several expansions of one word.
        assertTrue(expanded > 100, "only " + expanded + " words expanded to several");
        System.out.println("ExpansionTest: " + words + " words equal the spec's spelledAs, " + expanded + " with several expansions");
    }

    @Test
    void theLettersCountAsTheSpecSays() throws IOException {
        List<List<String>> docs = List.of(List.of("behind", "fire", "hydrant", "far"), List.of("park", "bus", "far"));
        try (Fixture fixture = new Fixture(docs, List.of(true, true), 7)) {
            Vocabulary vocabulary = fixture.vocabulary();
            assertEquals(List.of("behind"), Expansion.spelledAs("behing", vocabulary));
            assertEquals(List.of("fire", "hydrant"), Expansion.spelledAs("firehydrant", vocabulary));
            // Four letters: containment only; "fare" is one edit from "far", but edits need five letters.
            assertEquals(List.of(), Expansion.spelledAs("fare", vocabulary));
            assertEquals(List.of(), Expansion.spelledAs("bu", vocabulary));
            // No transpositions.
            assertEquals(List.of(), Expansion.spelledAs("behnid", vocabulary));
        }
    }
}
