package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.search.MatchNoDocsQuery;
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
 * {@code order}) is the numeric field holding each law's corpus order, which breaks ties.
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
                if (QUESTION.match(current, parser.getDeprecationHandler())) {
                    question = parser.text();
                } else if (FIELD.match(current, parser.getDeprecationHandler())) {
                    field = parser.text();
                } else if (ORDER.match(current, parser.getDeprecationHandler())) {
                    order = parser.text();
                } else if (BY.match(current, parser.getDeprecationHandler())) {
                    by = parser.text();
                } else if (RRF_K.match(current, parser.getDeprecationHandler())) {
                    rrfK = integer(parser, current);
                } else if (WORDS_WEIGHT.match(current, parser.getDeprecationHandler())) {
                    wordsWeight = number(parser, current);
                } else if (MEANING_WEIGHT.match(current, parser.getDeprecationHandler())) {
                    meaningWeight = number(parser, current);
                } else if (BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                    boost = parser.floatValue();
                } else if (NAME_FIELD.match(current, parser.getDeprecationHandler())) {
                    queryName = parser.text();
                } else {
                    throw new ParsingException(parser.getTokenLocation(),
                        "[" + NAME + "] takes question, by, rrf_k, words_weight, meaning_weight, field, order, boost and _name; not ["
                            + current + "]");
                }
            } else {
                throw new ParsingException(parser.getTokenLocation(),
                    "[" + NAME + "] [" + current + "] must be a string, not " + token);
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
        if (Fusion.WORDS.equals(by)) {
            return wordsQuery(context);
        }
        // The node embeds the question itself (Embedder: bit-equal to lawindex's Python embedder).
        int[] grid = Embedder.shipped().grid(question);
        Query words = Fusion.HYBRID.equals(by) ? wordsQuery(context) : null;
        return new MeaningQuery(question, grid, order, Fusion.HYBRID.equals(by),
            words instanceof LawindexQuery ? (LawindexQuery) words : null, rrfK, wordsWeight, meaningWeight);
    }

    private Query wordsQuery(QueryShardContext context) throws IOException {
        MappedFieldType type = context.fieldMapper(field);
        if (type == null) {
            return new MatchNoDocsQuery("field [" + field + "] is not mapped");
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
        return new LawindexQuery(field, order, words(context.getSearchAnalyzer(type), field, question),
            (LawindexSimilarity) similarity);
    }

    /** The question's words: the field's search analyzer, which for lawindex's field is the spec's words(). */
    static List<String> words(Analyzer analyzer, String field, String question) throws IOException {
        List<String> words = new ArrayList<>();
        try (TokenStream stream = analyzer.tokenStream(field, question)) {
            CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
            stream.reset();
            while (stream.incrementToken()) {
                words.add(term.toString());
            }
            stream.end();
        }
        return words;
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
