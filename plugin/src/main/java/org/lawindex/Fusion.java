package org.lawindex;

/**
 * The ways a {@code lawindex} query ranks, and hybrid's weighted reciprocal-rank fusion's parameters: their
 * defaults mirror indexer/retrieval/answers.py (RRF_K and the weights; tests/unit/test_plugin_fusion.py holds the
 * two equal) and their bounds are docs/fusion.md's.
 */
final class Fusion {
    static final String WORDS = "words";
    static final String MEANING = "meaning";
    static final String HYBRID = "hybrid";
    static final int RRF_K = 5;
    static final double WORDS_WEIGHT = 1.0;
    static final double MEANING_WEIGHT = 4.0;
    static final int MAX_RRF_K = 10_000;

    private Fusion() {
    }

    /** Null when the parameters are good, else the message of the 400 naming the one that is not. */
    static String refusal(String by, Integer rrfK, Double wordsWeight, Double meaningWeight) {
        if (!WORDS.equals(by) && !MEANING.equals(by) && !HYBRID.equals(by)) {
            return "[by] must be words, meaning or hybrid, not [" + by + "]";
        }
        if (!HYBRID.equals(by)) {
            String extra = rrfK != null ? "rrf_k" : wordsWeight != null ? "words_weight" : meaningWeight != null ? "meaning_weight" : null;
            return extra == null ? null : "[" + extra + "] is only for [by]: hybrid, not " + by;
        }
        if (rrfK != null && (rrfK < 1 || rrfK > MAX_RRF_K)) {
            return "[rrf_k] must be an integer from 1 to " + MAX_RRF_K + ", not " + rrfK;
        }
        for (String name : new String[] {"words_weight", "meaning_weight"}) {
            Double weight = name.equals("words_weight") ? wordsWeight : meaningWeight;
            if (weight != null && !(Double.isFinite(weight) && weight >= 0.0)) {
                return "[" + name + "] must be a finite number >= 0, not " + weight;
            }
        }
        double words = wordsWeight == null ? WORDS_WEIGHT : wordsWeight;
        double meaning = meaningWeight == null ? MEANING_WEIGHT : meaningWeight;
        if (words == 0.0 && meaning == 0.0) {
            return "[words_weight] and [meaning_weight] are both 0: at least one must be above 0";
        }
        return null;
    }
}
