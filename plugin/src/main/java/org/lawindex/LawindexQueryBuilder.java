package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.similarities.Similarity;
import org.opensearch.core.ParseField;
import org.opensearch.core.common.ParsingException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.mapper.TextSearchInfo;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryShardContext;
import org.opensearch.index.similarity.NonNegativeScoresSimilarity;
import org.opensearch.index.similarity.SimilarityProvider;

/**
 * {@code {"lawindex": {"question": "...", "field": "words", "order": "order"}}}: the spec's bm25() for a
 * question. {@code field} (default {@code words}, lawindex's ranked field) must be a text field scored by a
 * {@code lawindex_bm25} similarity; its search analyzer is the spec's words(). {@code order} (default
 * {@code order}) is the numeric field holding each law's corpus order, which breaks ties. Every bad parameter
 * is a 400 that names it (parsing here, the fields in doToQuery, OrderField), and a question longer than the
 * index's {@code index.lawindex.max_question_length} a 400 that names the setting.
 */
public final class LawindexQueryBuilder extends AbstractQueryBuilder<LawindexQueryBuilder> {
    public static final String NAME = "lawindex";
    public static final String DEFAULT_FIELD = "words";
    public static final String DEFAULT_ORDER = "order";
    private static final ParseField QUESTION = new ParseField("question");
    private static final ParseField FIELD = new ParseField("field");
    private static final ParseField ORDER = new ParseField("order");
    private static final ParseField BY = new ParseField("by");
    private static final ParseField RRF_K = new ParseField("rrf_k");
    private static final ParseField WORDS_WEIGHT = new ParseField("words_weight");
    private static final ParseField MEANING_WEIGHT = new ParseField("meaning_weight");

    private final String question;
    private final String field;
    private final String order;
    private String by = Fusion.WORDS;
    private int rrfK = Fusion.RRF_K;
    private double wordsWeight = Fusion.WORDS_WEIGHT;
    private double meaningWeight = Fusion.MEANING_WEIGHT;

    /** By meaning or hybrid (Fusion), parameters already checked. */
    public LawindexQueryBuilder way(String by, int rrfK, double wordsWeight, double meaningWeight) {
        this.by = by;
        this.rrfK = rrfK;
        this.wordsWeight = wordsWeight;
        this.meaningWeight = meaningWeight;
        return this;
    }

    public LawindexQueryBuilder(String question, String field, String order) {
        if (question == null) {
            throw new IllegalArgumentException("[" + NAME + "] requires a question");
        }
        this.question = question;
        this.field = field == null ? DEFAULT_FIELD : field;
        this.order = order == null ? DEFAULT_ORDER : order;
    }

    public LawindexQueryBuilder(StreamInput in) throws IOException {
        super(in);
        question = in.readString();
        field = in.readString();
        order = in.readString();
        by = in.readString();
        rrfK = in.readInt();
        wordsWeight = in.readDouble();
        meaningWeight = in.readDouble();
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeString(question);
        out.writeString(field);
        out.writeString(order);
        out.writeString(by);
        out.writeInt(rrfK);
        out.writeDouble(wordsWeight);
        out.writeDouble(meaningWeight);
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field(QUESTION.getPreferredName(), question);
        builder.field(FIELD.getPreferredName(), field);
        builder.field(ORDER.getPreferredName(), order);
        if (!Fusion.WORDS.equals(by)) {
            builder.field(BY.getPreferredName(), by);
        }
        if (Fusion.HYBRID.equals(by)) {
            builder.field(RRF_K.getPreferredName(), rrfK);
            builder.field(WORDS_WEIGHT.getPreferredName(), wordsWeight);
            builder.field(MEANING_WEIGHT.getPreferredName(), meaningWeight);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    public static LawindexQueryBuilder fromXContent(XContentParser parser) throws IOException {
        String question = null;
        String field = null;
        String order = null;
        String queryName = null;
        String by = Fusion.WORDS;
        Integer rrfK = null;
        Double wordsWeight = null;
        Double meaningWeight = null;
        float boost = DEFAULT_BOOST;
        String current = null;
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            if (token == XContentParser.Token.FIELD_NAME) {
                current = parser.currentName();
            } else if (token.isValue()) {
                if (BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                    boost = parser.floatValue();
                    continue;
                }
                // The fusion's numbers: each checked where it is read (integer, number), a 400 naming it.
                if (RRF_K.match(current, parser.getDeprecationHandler())) {
                    rrfK = integer(parser, current);
                    continue;
                }
                if (WORDS_WEIGHT.match(current, parser.getDeprecationHandler())) {
                    wordsWeight = number(parser, current);
                    continue;
                }
                if (MEANING_WEIGHT.match(current, parser.getDeprecationHandler())) {
                    meaningWeight = number(parser, current);
                    continue;
                }
                boolean known = QUESTION.match(current, parser.getDeprecationHandler())
                    || FIELD.match(current, parser.getDeprecationHandler())
                    || ORDER.match(current, parser.getDeprecationHandler())
                    || BY.match(current, parser.getDeprecationHandler())
                    || NAME_FIELD.match(current, parser.getDeprecationHandler());
                if (!known) {
                    throw new ParsingException(parser.getTokenLocation(),
                        "[" + NAME + "] takes question, by, rrf_k, words_weight, meaning_weight, field, order, boost and _name; not ["
                            + current + "]");
                }
                // "question": 30 was once taken as "30": a number, a boolean or null is not a question.
                if (token != XContentParser.Token.VALUE_STRING) {
                    throw new ParsingException(parser.getTokenLocation(),
                        "[" + NAME + "] [" + current + "] must be a string, not " + describe(token));
                }
                if (QUESTION.match(current, parser.getDeprecationHandler())) {
                    question = parser.text();
                } else if (FIELD.match(current, parser.getDeprecationHandler())) {
                    field = parser.text();
                } else if (ORDER.match(current, parser.getDeprecationHandler())) {
                    order = parser.text();
                } else if (BY.match(current, parser.getDeprecationHandler())) {
                    by = parser.text();
                } else {
                    queryName = parser.text();
                }
            } else {
                throw new ParsingException(parser.getTokenLocation(),
                    "[" + NAME + "] [" + current + "] must be a string, not " + describe(token));
            }
        }
        if (question == null) {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] requires [question], a string");
        }
        String refused = Fusion.refusal(by, rrfK, wordsWeight, meaningWeight);
        if (refused != null) {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] " + refused);
        }
        LawindexQueryBuilder built = new LawindexQueryBuilder(question, field, order).way(by,
            rrfK == null ? Fusion.RRF_K : rrfK, wordsWeight == null ? Fusion.WORDS_WEIGHT : wordsWeight,
            meaningWeight == null ? Fusion.MEANING_WEIGHT : meaningWeight);
        built.boost(boost);
        built.queryName(queryName);
        return built;
    }

    /** A JSON token as a user reads it: "a number", "an object"... */
    private static String describe(XContentParser.Token token) {
        switch (token) {
            case VALUE_NUMBER:
                return "a number";
            case VALUE_BOOLEAN:
                return "a boolean";
            case VALUE_NULL:
                return "null";
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "an array";
            default:
                return token.toString();
        }
    }

    private static int integer(XContentParser parser, String name) throws IOException {
        if (parser.currentToken() != XContentParser.Token.VALUE_NUMBER
            || (parser.numberType() != XContentParser.NumberType.INT && parser.numberType() != XContentParser.NumberType.LONG)
            || parser.longValue() < Integer.MIN_VALUE || parser.longValue() > Integer.MAX_VALUE) {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [" + name + "] must be an integer from 1 to "
                + Fusion.MAX_RRF_K + ", not " + parser.text());
        }
        return (int) parser.longValue();
    }

    private static double number(XContentParser parser, String name) throws IOException {
        if (parser.currentToken() != XContentParser.Token.VALUE_NUMBER) {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [" + name + "] must be a finite number >= 0, not "
                + parser.text());
        }
        return parser.doubleValue();
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        int limit = context.getIndexSettings().getValue(LawindexPlugin.MAX_QUESTION_LENGTH);
        if (question.length() > limit) {
            throw new IllegalArgumentException("[" + NAME + "] question is " + question.length() + " characters long, more than "
                + "the " + limit + " this index takes; the limit is the index setting ["
                + LawindexPlugin.MAX_QUESTION_LENGTH.getKey() + "]");
        }
        if (Fusion.WORDS.equals(by)) {
            return wordsQuery(context);
        }
        OrderField.check(context, order); // ties in corpus order, by meaning too
        // The node embeds the question itself (Embedder: bit-equal to lawindex's Python embedder).
        int[] grid = Embedder.shipped().grid(question);
        Query words = Fusion.HYBRID.equals(by) ? wordsQuery(context) : null;
        return new MeaningQuery(question, grid, order, Fusion.HYBRID.equals(by),
            words instanceof LawindexQuery ? (LawindexQuery) words : null, rrfK, wordsWeight, meaningWeight,
            RequestBreaker.of(context), RequestBreaker.fielddata(context));
    }

    private Query wordsQuery(QueryShardContext context) throws IOException {
        MappedFieldType type = context.fieldMapper(field);
        if (type == null) {
            // A misspelt field once answered 200 with no hits, as if no law shared a word.
            throw new IllegalArgumentException("[" + NAME + "] field [" + field + "] is not mapped in this index; the "
                + "question is asked of lawindex's ranked field, [" + DEFAULT_FIELD + "]");
        }
        TextSearchInfo search = type.getTextSearchInfo();
        SimilarityProvider provider = search == null ? null : search.getSimilarity();
        Similarity similarity = provider == null ? null : provider.get();
        // OpenSearch wraps a plugin's similarity in one that refuses negative scores.
        if (similarity instanceof NonNegativeScoresSimilarity) {
            similarity = ((NonNegativeScoresSimilarity) similarity).getDelegate();
        }
        if (!(similarity instanceof LawindexSimilarity)) {
            throw new IllegalArgumentException("[" + NAME + "] field [" + field + "] is not scored by a "
                + LawindexSimilarity.TYPE + " similarity (it has " + (provider == null ? "the index's default" : "[" + provider.name() + "]")
                + "); create the index with index.similarity.lawindex.type: " + LawindexSimilarity.TYPE
                + " and \"similarity\": \"lawindex\" on the field");
        }
        OrderField.check(context, order);
        return new LawindexQuery(field, order, words(context.getSearchAnalyzer(type), field, question),
            (LawindexSimilarity) similarity, RequestBreaker.of(context));
    }

    /**
     * The question's distinct words in question order: the field's search analyzer, which for lawindex's field
     * is the spec's words(). A word asked again changes nothing of the spec's answer (see Expansion#asked).
     */
    static List<String> words(Analyzer analyzer, String field, String question) throws IOException {
        Set<String> words = new LinkedHashSet<>();
        try (TokenStream stream = analyzer.tokenStream(field, question)) {
            CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
            stream.reset();
            while (stream.incrementToken()) {
                words.add(term.toString());
            }
            stream.end();
        }
        return new ArrayList<>(words);
    }

    @Override
    protected boolean doEquals(LawindexQueryBuilder other) {
        return question.equals(other.question) && field.equals(other.field) && order.equals(other.order)
            && by.equals(other.by) && rrfK == other.rrfK && Double.compare(wordsWeight, other.wordsWeight) == 0
            && Double.compare(meaningWeight, other.meaningWeight) == 0;
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(question, field, order, by, rrfK, wordsWeight, meaningWeight);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
