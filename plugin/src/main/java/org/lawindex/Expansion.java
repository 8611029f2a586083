package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The spec's {@code asked}: each of a question's words spelled as the laws spell them, each distinct word once. */
public final class Expansion {
    private Expansion() {}

    /**
     * {@code [...new Set(words(question).flatMap((word) => spelledAs(word, frequency)))]}: {@code words} are
     * the question's words (the field's analyzer is words()), in question order. A word asked again adds
     * nothing the first time did not (spelledAs depends on the word alone), so each distinct word is spelled
     * once: "fire" 50,000 times costs what "fire" once does.
     */
    public static List<String> asked(List<String> words, Vocabulary vocabulary) throws IOException {
        Set<String> distinct = new LinkedHashSet<>(words);
        Set<String> asked = new LinkedHashSet<>();
        for (String word : distinct) {
            asked.addAll(spelledAs(word, vocabulary));
        }
        return new ArrayList<>(asked);
    }

    /**
     * The laws' words {@code word} stands for: itself if the laws use it; else the known words of four
     * letters or more it contains and, for a word of five letters or more, the known words one edit away,
     * in the vocabulary's order. A word of fewer than four letters the laws do not use stands for none.
     */
    public static List<String> spelledAs(String word, Vocabulary vocabulary) throws IOException {
        if (vocabulary.has(word)) {
            return List.of(word);
        }
        if (word.length() < 4) {
            return List.of();
        }
        Set<String> found = new LinkedHashSet<>(vocabulary.contained(word));
        if (word.length() >= 5) {
            found.addAll(vocabulary.oneEditFrom(word));
        }
        return vocabulary.inOrder(found);
    }
}
