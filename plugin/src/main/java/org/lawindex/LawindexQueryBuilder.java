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
                if (QUESTION.match(current, parser.getDeprecationHandler())) {
                    question = parser.text();
                } else if (FIELD.match(current, parser.getDeprecationHandler())) {
                    field = parser.text();
                } else if (ORDER.match(current, parser.getDeprecationHandler())) {
                    order = parser.text();
                } else if (BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                    boost = parser.floatValue();
                } else if (NAME_FIELD.match(current, parser.getDeprecationHandler())) {
                    queryName = parser.text();
                } else {
                    throw new ParsingException(parser.getTokenLocation(),
                        "[" + NAME + "] takes question, field, order, boost and _name; not [" + current + "]");
                }
            } else {
                throw new ParsingException(parser.getTokenLocation(),
                    "[" + NAME + "] [" + current + "] must be a string, not " + token);
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

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
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
