package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;

/**
 * Laws (already split into words) in an in-memory Lucene index as lawindex's loader lays them out: the field
 * `words` with positions, scored by the similarity, and `order`, the corpus order. Written in a shuffled
 * order over several segments, with deleted documents among them, so that nothing can lean on document ids
 * being corpus order.
 */
final class Fixture implements AutoCloseable {
    final Directory directory = new ByteBuffersDirectory();
    final DirectoryReader reader;
    final SpecPort spec;
    final LawindexSimilarity similarity;

    Fixture(List<List<String>> docs, List<Boolean> ranked, long seed) throws IOException {
        spec = new SpecPort(docs, ranked);
        similarity = new LawindexSimilarity(1.2, 0.75, (long) spec.size, spec.average);
        Random random = new Random(seed);
        List<Integer> shuffled = shuffled(docs.size(), random);
        try (IndexWriter writer = new IndexWriter(directory, config(similarity))) {
            int written = 0;
            for (int order : shuffled) {
                Document doc = new Document();
                doc.add(new NumericDocValuesField("order", order));
                doc.add(new StoredField("order", order));
                if (!docs.get(order).isEmpty()) {
                    doc.add(new TextField("words", String.join(" ", docs.get(order)), Field.Store.NO));
                }
                writer.addDocument(doc);
                // A law that was replaced: its words must count nowhere (not in n, not in the vocabulary).
                if (random.nextInt(8) == 0) {
                    Document gone = new Document();
                    gone.add(new StringField("gone", "yes", Field.Store.NO));
                    gone.add(new NumericDocValuesField("order", -1));
                    gone.add(new TextField("words", "qqqqq " + String.join(" ", docs.get(order)), Field.Store.NO));
                    writer.addDocument(gone);
                }
                if (++written % 40 == 0) {
                    writer.commit();
                }
            }
            writer.deleteDocuments(new Term("gone", "yes"));
            writer.commit();
        }
        reader = DirectoryReader.open(directory);
    }

    /** 0 to {@code count - 1} in a random order. */
    static List<Integer> shuffled(int count, Random random) {
        List<Integer> shuffled = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            shuffled.add(i);
        }
        Collections.shuffle(shuffled, random);
        return shuffled;
    }

    /** How the plugin's test indexes are written: scored by {@code similarity}, segments never merged. */
    static IndexWriterConfig config(LawindexSimilarity similarity) {
        return new IndexWriterConfig(new WhitespaceAnalyzer()).setSimilarity(similarity).setMergePolicy(NoMergePolicy.INSTANCE);
    }

    Vocabulary vocabulary() throws IOException {
        return new Vocabulary(reader, "words", "order");
    }

    @Override
    public void close() throws IOException {
        reader.close();
        directory.close();
    }

    /** A generated corpus: words over a small alphabet (so that many are contained in or one edit from others),
     * lengths past 40, unranked laws, laws whose words are all gone (ranked, no field), and exact duplicates. */
    static List<List<String>> corpus(Random random, int laws, List<Boolean> ranked) {
        List<String> vocabulary = new ArrayList<>();
        String letters = "abcdefg";
        for (int i = 0; i < 160; i++) {
            int length = 2 + random.nextInt(7);
            StringBuilder word = new StringBuilder();
            for (int j = 0; j < length; j++) {
                word.append(letters.charAt(random.nextInt(letters.length())));
            }
            vocabulary.add(word.toString());
        }
        List<List<String>> docs = new ArrayList<>();
        for (int i = 0; i < laws; i++) {
            int kind = random.nextInt(20);
            if (kind == 0 && !docs.isEmpty()) {
                docs.add(new ArrayList<>(docs.get(random.nextInt(docs.size()))));
                ranked.add(true);
                continue;
            }
            List<String> words = new ArrayList<>();
            boolean isRanked = kind != 1;
            int length = kind == 2 ? 0 : 1 + random.nextInt(random.nextInt(4) == 0 ? 90 : 25);
            if (isRanked) {
                for (int j = 0; j < length; j++) {
                    // Zipf-like: a few words everywhere, most rare.
                    int pick = (int) Math.floor(Math.pow(random.nextDouble(), 2.5) * vocabulary.size());
                    words.add(vocabulary.get(pick));
                }
            }
            docs.add(words);
            ranked.add(isRanked);
        }
        return docs;
    }

    /** A learner's word: a known word, one with a letter changed, added or dropped, two glued, or noise. */
    static String questionWord(Random random, List<List<String>> docs) {
        List<String> known = new ArrayList<>();
        for (List<String> doc : docs) {
            known.addAll(doc);
        }
        String word = known.isEmpty() ? "abcde" : known.get(random.nextInt(known.size()));
        String letters = "abcdefgh";
        int i = random.nextInt(word.length() + 1);
        switch (random.nextInt(6)) {
            case 0:
                return word;
            case 1:
                return word.substring(0, i) + letters.charAt(random.nextInt(letters.length())) + word.substring(i);
            case 2:
                return i < word.length() ? word.substring(0, i) + word.substring(i + 1) : word + "h";
            case 3:
                return i < word.length() ? word.substring(0, i) + letters.charAt(random.nextInt(letters.length())) + word.substring(i + 1) : word;
            case 4:
                return word + known.get(random.nextInt(known.size()));
            default:
                StringBuilder noise = new StringBuilder();
                for (int j = 0; j < 3 + random.nextInt(6); j++) {
                    noise.append(letters.charAt(random.nextInt(letters.length())));
                }
                return noise.toString();
        }
    }
}
