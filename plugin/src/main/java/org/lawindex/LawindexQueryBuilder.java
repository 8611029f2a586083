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

    private final String question;
    private final String field;
    private final String order;

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
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeString(question);
        out.writeString(field);
        out.writeString(order);
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field(QUESTION.getPreferredName(), question);
        builder.field(FIELD.getPreferredName(), field);
        builder.field(ORDER.getPreferredName(), order);
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    public static LawindexQueryBuilder fromXContent(XContentParser parser) throws IOException {
        String question = null;
        String field = null;
        String order = null;
        String queryName = null;
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
                boolean known = QUESTION.match(current, parser.getDeprecationHandler())
                    || FIELD.match(current, parser.getDeprecationHandler())
                    || ORDER.match(current, parser.getDeprecationHandler())
                    || NAME_FIELD.match(current, parser.getDeprecationHandler());
                if (!known) {
                    throw new ParsingException(parser.getTokenLocation(),
                        "[" + NAME + "] takes question, field, order, boost and _name; not [" + current + "]");
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
        LawindexQueryBuilder built = new LawindexQueryBuilder(question, field, order);
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

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        int limit = context.getIndexSettings().getValue(LawindexPlugin.MAX_QUESTION_LENGTH);
        if (question.length() > limit) {
            throw new IllegalArgumentException("[" + NAME + "] question is " + question.length() + " characters long, more than "
                + "the " + limit + " this index takes; the limit is the index setting ["
                + LawindexPlugin.MAX_QUESTION_LENGTH.getKey() + "]");
        }
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
        return question.equals(other.question) && field.equals(other.field) && order.equals(other.order);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(question, field, order);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
