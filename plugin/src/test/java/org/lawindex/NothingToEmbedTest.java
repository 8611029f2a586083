package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A question with nothing to embed is one with no Unicode letter (L*) or decimal digit (Nd) once lowercased, as
 * lawindex's Python decides (indexer.retrieval.request.has_meaning), from Python's tables ({@link Meaningful};
 * tests/unit/test_plugin_meaningful.py holds them to Python's unicodedata). Here: the examples, and that the table
 * agrees with this JDK's Character on the ASCII and Latin-1 ranges, which no Unicode version has moved.
 */
class NothingToEmbedTest {
    @Test
    void emptySpacesPunctuationControlsSymbolsAndEmojiAreNothing() {
        for (String question : new String[] {"", " ", "   ", "\t\n\r", "?!.,;:-", "\u0000\u0001\u007f", "😀 🇺🇸", "\ud800",
            "<> ... ___", "\u00a0\u2003", "① Ⅳ ½ ²", "$ € ©"}) {
            assertTrue(Embedder.nothingToEmbed(question), question);
        }
        for (String question : new String[] {"a", " Z ", "9", "the", "é", "ß", "ж", "中文", "٣", "\u0130", "\u212A", "😀x",
            "<s>", "𝐀"}) {
            assertFalse(Embedder.nothingToEmbed(question), question);
        }
    }

    @Test
    void theTableIsTheJdksOnLatin1() {
        for (int cp = 0; cp < 0x100; cp++) {
            boolean jdk = Character.isLetter(cp) || Character.getType(cp) == Character.DECIMAL_DIGIT_NUMBER;
            assertEquals(jdk, Meaningful.has(cp), "U+" + Integer.toHexString(cp));
        }
        assertFalse(Meaningful.has(0x10FFFF));
        assertFalse(Meaningful.has(0xD800));
    }
}
