package org.lawindex;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * WordLlama's tokenizer, token for token as Hugging Face {@code tokenizers} runs its tokenizer.json (the one
 * the {@code wordllama} wheel ships, read whole here; anything it configures that this class does not do is
 * refused when it is read, never silently tokenised otherwise):
 *
 * <ol>
 *   <li>the added tokens ({@code <unk>}, {@code <s>}, {@code </s>}, not normalized) are found in the raw text,
 *       leftmost then longest, and become their ids, even without special tokens asked for: "a<s>b" is
 *       [▁a, &lt;s&gt;, ▁b];</li>
 *   <li>each stretch of text between them, when not empty, is normalized: "▁" prepended, every " " (U+0020)
 *       replaced by "▁"; there is no pre-tokenizer, so the whole stretch is one word for the model;</li>
 *   <li>the model, BPE: each character its vocabulary id, else its UTF-8 bytes' {@code <0xNN>} ids (byte
 *       fallback); then the merges, the pair of lowest rank first and, among equal ranks, the leftmost
 *       (HF's word.rs, merge_all); no dropout, no continuing-subword prefix, no end-of-word suffix.</li>
 * </ol>
 *
 * <p>A stretch is one word however long (a 100,000-character question is one word of 100,001 symbols), so the
 * merges are done as HF does them, with a priority queue of candidate pairs over a linked list of symbols:
 * each merge pops one entry and pushes at most two, so a word of n symbols costs O(n log n), never the O(n^2)
 * of rescanning the word for its best pair after each merge.
 *
 * <p>A lone surrogate (a {@code \ud800} escape in the request's JSON: not a character, and not text Python's
 * {@code tokenizers} takes at all) is read as U+FFFD, as {@code lawindex serve} reads it.
 */
final class Bpe {
    static final String WORD_START = "\u2581";
    /** Each table entry's key is (left id, right id) + 1 (0: empty); its value (rank << 32) | merged id. */
    private final long[] mergeKeys;
    private final long[] mergeValues;
    private final int mergeMask;
    private final Map<Integer, Integer> characters = new HashMap<>();
    private final int[] byteIds = new int[256];
    private final String[] added;
    private final int[] addedIds;
    final int vocabularySize;

    @SuppressWarnings("unchecked")
    Bpe(Map<String, Object> json) {
        Map<String, Object> model = (Map<String, Object>) json.get("model");
        require("model.type", model.get("type"), "BPE");
        require("model.byte_fallback", model.get("byte_fallback"), Boolean.TRUE);
        require("model.dropout", model.get("dropout"), null);
        require("model.continuing_subword_prefix", model.get("continuing_subword_prefix"), null);
        require("model.end_of_word_suffix", model.get("end_of_word_suffix"), null);
        require("model.ignore_merges", model.get("ignore_merges"), Boolean.FALSE);
        require("pre_tokenizer", json.get("pre_tokenizer"), null);
        checkNormalizer((Map<String, Object>) json.get("normalizer"));
        Map<String, Object> vocab = (Map<String, Object>) model.get("vocab");
        Map<String, Integer> ids = new HashMap<>(vocab.size() * 2);
        int largest = -1;
        for (Map.Entry<String, Object> entry : vocab.entrySet()) {
            int id = ((Long) entry.getValue()).intValue();
            ids.put(entry.getKey(), id);
            largest = Math.max(largest, id);
            String token = entry.getKey();
            if (token.codePointCount(0, token.length()) == 1) {
                characters.put(token.codePointAt(0), id);
            }
        }
        vocabularySize = largest + 1;
        for (int b = 0; b < 256; b++) {
            Integer id = ids.get(String.format("<0x%02X>", b));
            if (id == null) {
                throw new IllegalArgumentException("the tokenizer has no byte token <0x" + String.format("%02X", b) + ">");
            }
            byteIds[b] = id;
        }
        List<Object> merges = (List<Object>) model.get("merges");
        int capacity = Integer.highestOneBit(Math.max(4, merges.size() * 2)) * 2;
        mergeKeys = new long[capacity];
        mergeValues = new long[capacity];
        mergeMask = capacity - 1;
        for (int rank = 0; rank < merges.size(); rank++) {
            Object merge = merges.get(rank);
            String left;
            String right;
            if (merge instanceof String) {
                String pair = (String) merge;
                int space = pair.indexOf(' ');
                left = pair.substring(0, space);
                right = pair.substring(space + 1);
            } else {
                List<Object> pair = (List<Object>) merge;
                left = (String) pair.get(0);
                right = (String) pair.get(1);
            }
            Integer a = ids.get(left);
            Integer b = ids.get(right);
            Integer merged = ids.get(left + right);
            if (a == null || b == null || merged == null) {
                throw new IllegalArgumentException("merge " + rank + " (" + left + " " + right + ") is not in the vocabulary");
            }
            // A later merge of the same pair replaces an earlier one, as HF's HashMap collect does.
            put(pair(a, b), ((long) rank << 32) | merged);
        }
        List<Object> addedTokens = (List<Object>) json.get("added_tokens");
        added = new String[addedTokens.size()];
        addedIds = new int[addedTokens.size()];
        for (int i = 0; i < added.length; i++) {
            Map<String, Object> token = (Map<String, Object>) addedTokens.get(i);
            require("added_tokens.normalized", token.get("normalized"), Boolean.FALSE);
            require("added_tokens.single_word", token.get("single_word"), Boolean.FALSE);
            require("added_tokens.lstrip", token.get("lstrip"), Boolean.FALSE);
            require("added_tokens.rstrip", token.get("rstrip"), Boolean.FALSE);
            added[i] = (String) token.get("content");
            addedIds[i] = ((Long) token.get("id")).intValue();
        }
    }

    @SuppressWarnings("unchecked")
    private static void checkNormalizer(Map<String, Object> normalizer) {
        require("normalizer.type", normalizer.get("type"), "Sequence");
        List<Object> steps = (List<Object>) normalizer.get("normalizers");
        if (steps.size() != 2) {
            throw new IllegalArgumentException("the tokenizer's normalizer is not Prepend then Replace: " + normalizer);
        }
        Map<String, Object> prepend = (Map<String, Object>) steps.get(0);
        Map<String, Object> replace = (Map<String, Object>) steps.get(1);
        require("normalizer Prepend", prepend.get("type"), "Prepend");
        require("normalizer Prepend.prepend", prepend.get("prepend"), WORD_START);
        require("normalizer Replace", replace.get("type"), "Replace");
        require("normalizer Replace.pattern", replace.get("pattern"), Map.of("String", " "));
        require("normalizer Replace.content", replace.get("content"), WORD_START);
    }

    private static void require(String what, Object found, Object expected) {
        if (!java.util.Objects.equals(found, expected)) {
            throw new IllegalArgumentException("the tokenizer's " + what + " is " + found + ", not " + expected
                + " (the plugin's Bpe implements WordLlama's tokenizer.json as shipped)");
        }
    }

    private static long pair(int left, int right) {
        return (((long) left << 32) | (right & 0xffffffffL)) + 1;
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & mask;
    }

    private void put(long key, long value) {
        int i = slot(key, mergeMask);
        while (mergeKeys[i] != 0 && mergeKeys[i] != key) {
            i = (i + 1) & mergeMask;
        }
        mergeKeys[i] = key;
        mergeValues[i] = value;
    }

    /** (rank << 32) | merged id of the pair, or -1 when the pair does not merge. */
    private long merge(int left, int right) {
        long key = pair(left, right);
        int i = slot(key, mergeMask);
        while (mergeKeys[i] != 0) {
            if (mergeKeys[i] == key) {
                return mergeValues[i];
            }
            i = (i + 1) & mergeMask;
        }
        return -1;
    }

    /** The text with each lone surrogate as U+FFFD (a pair stays the one character it is). */
    static String withoutLoneSurrogates(String text) {
        char[] chars = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                if (chars == null) {
                    chars = text.toCharArray();
                }
                chars[i] = '\uFFFD';
            }
        }
        return chars == null ? text : new String(chars);
    }

    /** The text's token ids, as {@code Tokenizer.encode(text, add_special_tokens=False).ids} gives them. */
    int[] encode(String question) {
        String text = withoutLoneSurrogates(question);
        Ids out = new Ids(Math.max(16, text.length()));
        int stretch = 0;
        int i = 0;
        while (i < text.length()) {
            int found = -1;
            for (int t = 0; t < added.length; t++) {
                if (text.startsWith(added[t], i) && (found < 0 || added[t].length() > added[found].length())) {
                    found = t;
                }
            }
            if (found < 0) {
                i++;
                continue;
            }
            word(text, stretch, i, out);
            out.add(addedIds[found]);
            i += added[found].length();
            stretch = i;
        }
        word(text, stretch, text.length(), out);
        return out.toArray();
    }

    /** The tokens of text[from, to): normalized, its symbols, then merged. */
    private void word(String text, int from, int to, Ids out) {
        if (from == to) {
            return;  // HF's Prepend adds nothing to an empty string: no tokens
        }
        String normalized = WORD_START + text.substring(from, to).replace(" ", WORD_START);
        int[] symbols = new int[normalized.length() * 4 + 1];
        int count = 0;
        for (int i = 0; i < normalized.length(); ) {
            int codePoint = normalized.codePointAt(i);
            int width = Character.charCount(codePoint);
            Integer id = characters.get(codePoint);
            if (id != null) {
                symbols[count++] = id;
            } else {
                for (byte b : normalized.substring(i, i + width).getBytes(StandardCharsets.UTF_8)) {
                    symbols[count++] = byteIds[b & 0xff];
                }
            }
            i += width;
        }
        mergeAll(symbols, count, out);
    }

    /**
     * HF's merge_all: a queue of (rank, position) pairs, lowest rank first, then leftmost; an entry whose pair
     * has since changed is skipped. Keys pack rank (< 2^17), position (< 2^31) and merged id (< 2^15).
     */
    private void mergeAll(int[] c, int count, Ids out) {
        int[] next = new int[count];
        int[] prev = new int[count];
        boolean[] gone = new boolean[count];
        for (int i = 0; i < count; i++) {
            prev[i] = i - 1;
            next[i] = i + 1 < count ? i + 1 : -1;
        }
        Heap queue = new Heap(count);
        for (int i = 0; i + 1 < count; i++) {
            long m = merge(c[i], c[i + 1]);
            if (m >= 0) {
                queue.push(entry(m, i));
            }
        }
        while (!queue.isEmpty()) {
            long top = queue.pop();
            int pos = (int) ((top >>> 15) & 0x7fffffffL);
            int newId = (int) (top & 0x7fff);
            if (gone[pos] || next[pos] == -1) {
                continue;
            }
            int right = next[pos];
            long now = merge(c[pos], c[right]);
            if (now < 0 || (int) now != newId) {
                continue;  // an expired entry: the pair at pos has changed since it was queued
            }
            c[pos] = newId;
            next[pos] = next[right];
            gone[right] = true;
            if (next[right] != -1) {
                prev[next[right]] = pos;
            }
            if (prev[pos] >= 0) {
                long m = merge(c[prev[pos]], c[pos]);
                if (m >= 0) {
                    queue.push(entry(m, prev[pos]));
                }
            }
            if (next[pos] != -1) {
                long m = merge(c[pos], c[next[pos]]);
                if (m >= 0) {
                    queue.push(entry(m, pos));
                }
            }
        }
        for (int i = 0; i < count; i++) {
            if (!gone[i]) {
                out.add(c[i]);
            }
        }
    }

    private static long entry(long merge, int pos) {
        long rank = merge >>> 32;
        long newId = merge & 0xffffffffL;
        if (rank >= (1L << 17) || newId >= (1L << 15)) {
            throw new IllegalStateException("a merge's rank or id does not fit the queue's key");
        }
        return (rank << 46) | ((long) pos << 15) | newId;
    }

    /** A min-heap of longs. */
    private static final class Heap {
        private long[] keys;
        private int size;

        Heap(int capacity) {
            keys = new long[Math.max(16, capacity)];
        }

        boolean isEmpty() {
            return size == 0;
        }

        void push(long key) {
            if (size == keys.length) {
                keys = Arrays.copyOf(keys, size * 2);
            }
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (keys[parent] <= key) {
                    break;
                }
                keys[i] = keys[parent];
                i = parent;
            }
            keys[i] = key;
        }

        long pop() {
            long top = keys[0];
            long last = keys[--size];
            int i = 0;
            while (true) {
                int child = 2 * i + 1;
                if (child >= size) {
                    break;
                }
                if (child + 1 < size && keys[child + 1] < keys[child]) {
                    child++;
                }
                if (keys[child] >= last) {
                    break;
                }
                keys[i] = keys[child];
                i = child;
            }
            keys[i] = last;
            return top;
        }
    }

    /** A growing list of ints. */
    static final class Ids {
        private int[] ids;
        private int size;

        Ids(int capacity) {
            ids = new int[capacity];
        }

        void add(int id) {
            if (size == ids.length) {
                ids = Arrays.copyOf(ids, size * 2);
            }
            ids[size++] = id;
        }

        int[] toArray() {
            return Arrays.copyOf(ids, size);
        }
    }
}
