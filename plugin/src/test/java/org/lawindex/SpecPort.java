package org.lawindex;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * spec/retrieve.md's indexOf, bm25, spelledAs and oneEditApart, ported line for line over laws already split
 * into words: the oracle the tests hold the plugin to. Its arithmetic is its own copy (Math.log's place taken
 * by StrictMath.log, which Bm25Test holds to V8's), so it cannot agree with the plugin by sharing a mistake.
 */
final class SpecPort {
    final List<List<String>> docs;
    final Map<String, Integer> frequency = new LinkedHashMap<>();
    final int size;
    final double average;

    /** `docs` in corpus order: each law's words (an empty list for a law that is not ranked). */
    SpecPort(List<List<String>> docs, List<Boolean> ranked) {
        this.docs = docs;
        int counted = 0;
        long sum = 0;
        for (int i = 0; i < docs.size(); i++) {
            Map<String, Integer> counts = new LinkedHashMap<>();
            for (String word : docs.get(i)) {
                counts.merge(word, 1, Integer::sum);
            }
            for (String word : counts.keySet()) {
                frequency.merge(word, 1, Integer::sum);
            }
            if (ranked.get(i)) {
                counted++;
                sum += docs.get(i).size();
            }
        }
        size = counted;
        average = (double) sum / Math.max(1, counted);
    }

    static boolean oneEditApart(String a, String b) {
        if (a.equals(b)) {
            return false;
        }
        int i = 0;
        while (i < a.length() && i < b.length() && a.charAt(i) == b.charAt(i)) {
            i += 1;
        }
        if (a.length() == b.length()) {
            return a.substring(Math.min(i + 1, a.length())).equals(b.substring(Math.min(i + 1, b.length())));
        }
        return a.length() > b.length()
            ? a.substring(i + 1).equals(b.substring(i))
            : a.substring(i).equals(b.substring(i + 1));
    }

    List<String> spelledAs(String word) {
        if (frequency.containsKey(word)) {
            return List.of(word);
        }
        if (word.length() < 4) {
            return List.of();
        }
        List<String> found = new ArrayList<>();
        for (String known : frequency.keySet()) {
            if (known.length() >= 4 && word.contains(known)) {
                found.add(known);
            } else if (word.length() >= 5 && Math.abs(known.length() - word.length()) <= 1 && oneEditApart(word, known)) {
                found.add(known);
            }
        }
        return found;
    }

    List<String> asked(List<String> words) {
        LinkedHashSet<String> asked = new LinkedHashSet<>();
        for (String word : words) {
            asked.addAll(spelledAs(word));
        }
        return new ArrayList<>(asked);
    }

    /** The spec's ranking: law indices, best first, with their float64 scores. */
    List<double[]> bm25(List<String> words) {
        List<String> asked = asked(words);
        double k1 = 1.2;
        double b = 0.75;
        List<double[]> scored = new ArrayList<>();
        for (int index = 0; index < docs.size(); index++) {
            Map<String, Integer> counts = new LinkedHashMap<>();
            for (String word : docs.get(index)) {
                counts.merge(word, 1, Integer::sum);
            }
            double score = 0;
            for (String word : asked) {
                Integer n = frequency.get(word);
                if (n == null) {
                    continue;
                }
                int tf = counts.getOrDefault(word, 0);
                if (tf == 0) {
                    continue;
                }
                double idf = StrictMath.log(1 + (size - n + 0.5) / (n + 0.5));
                score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * docs.get(index).size()) / average));
            }
            if (score > 0) {
                scored.add(new double[] {index, score});
            }
        }
        // Stable, as V8's sort is: ties keep corpus order.
        scored.sort(Comparator.comparingDouble((double[] s) -> -s[1]));
        return scored;
    }
}
