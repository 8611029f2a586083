package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A question with nothing to embed is one with no letter or digit as the spec's words() sees text: no [a-z0-9]
 * once lowercased (indexer/retrieval/words.py: {@code re.findall("[a-z0-9]+", text.lower())}). Python's lower()
 * makes [a-z0-9] of A-Z, a-z, 0-9, U+0130 and U+212A and of no other code point (Python 3.11, walked once); Java's
 * toLowerCase(Locale.ROOT) is held to that here on every code point.
 */
class NothingToEmbedTest {
    @Test
    void onlyAsciiLettersDigitsDottedCapitalIAndKelvinGiveSomethingToEmbed() {
        int something = 0;
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
            boolean expected = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9')
                || cp == 0x130 || cp == 0x212A;
            assertEquals(!expected, Embedder.nothingToEmbed(new String(Character.toChars(cp))), "U+" + Integer.toHexString(cp));
            something += expected ? 1 : 0;
        }
        assertEquals(26 * 2 + 10 + 2, something);
    }

    @Test
    void emptySpacesPunctuationControlsAndEmojiAreNothing() {
        for (String question : new String[] {"", " ", "   ", "\t\n\r", "?!.,;:-", "\u0000\u0001\u007f", "😀 🇺🇸", "\ud800",
            "é ß ж 中文", "<> ... ___", "\u00a0\u2003"}) {
            assertTrue(Embedder.nothingToEmbed(question), question);
        }
        for (String question : new String[] {"a", " Z ", "9", "the", "é a", "\u0130", "\u212A", "😀x", "<s>"}) {
            assertFalse(Embedder.nothingToEmbed(question), question);
        }
    }
}
