package org.lawindex;

/**
 * The ways a {@code lawindex} query ranks, and hybrid's weighted reciprocal-rank fusion's defaults: those of
 * contract/request.json (ContractTest holds them equal; the bounds and messages are read from it: Contract), which
 * indexer/retrieval/answers.py mirrors (tests/unit/test_plugin_fusion.py).
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
}
