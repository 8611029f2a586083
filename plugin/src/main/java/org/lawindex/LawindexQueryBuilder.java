package org.lawindex;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

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
import org.opensearch.index.mapper.DocumentMapper;
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
    private static final ParseField VECTOR = new ParseField("vector");

    private final String question;
    private final String field;
    private final String order;
    private String by = Fusion.WORDS;
    private int rrfK = Fusion.RRF_K;
    private double wordsWeight = Fusion.WORDS_WEIGHT;
    private double meaningWeight = Fusion.MEANING_WEIGHT;
    /** The question's own vector (by meaning or hybrid), checked by the contract; null: the node embeds the text. */
    private double[] vector;

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

    public String question() {
        return question;
    }

    /** The question's own vector (already checked by the contract), or null for none. */
    public LawindexQueryBuilder vector(double[] vector) {
        this.vector = vector == null ? null : vector.clone();
        return this;
    }

    double[] vector() {
        return vector == null ? null : vector.clone();
    }

    /** The query as another node sent it (Wire): its wire version, the fields of wire 1, then the parameters added
     * since that the sender set; one this build does not know is a 400 naming it. */
    public LawindexQueryBuilder(StreamInput in) throws IOException {
        super(in);
        int wire = Wire.readHeader(in);
        question = in.readString();
        field = in.readString();
        order = in.readString();
        by = in.readString();
        rrfK = in.readInt();
        wordsWeight = in.readDouble();
        meaningWeight = in.readDouble();
        Wire.In added = new Wire.In(in).refuseUnknown(Wire.PARAMETERS, wire);
        // Each parameter past wire 1: added.value(Wire.X, reader, its default).
        vector = added.value(Wire.VECTOR, StreamInput::readDoubleArray, null);
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        Wire.writeHeader(out, Wire.VERSION);
        out.writeString(question);
        out.writeString(field);
        out.writeString(order);
        out.writeString(by);
        out.writeInt(rrfK);
        out.writeDouble(wordsWeight);
        out.writeDouble(meaningWeight);
        Wire.Out added = new Wire.Out();
        // Each parameter past wire 1 the query sets: added.put(Wire.X, its writer).
        if (vector != null) {
            double[] given = vector;
            added.put(Wire.VECTOR, o -> o.writeDoubleArray(given));
        }
        added.writeTo(out);
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
        if (vector != null) {
            builder.startArray(VECTOR.getPreferredName());
            for (double value : vector) {
                builder.value(value);
            }
            builder.endArray();
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    public static LawindexQueryBuilder fromXContent(XContentParser parser) throws IOException {
        return fromXContent(parser, Map::of);
    }

    /**
     * The query as a request spells it, on the coordinating node: `nodes` gives every node that may hold a shard
     * with its wire version (ClusterNodes#wireVersions), and a parameter some node's build cannot read is a 400
     * naming the parameter and the node (Wire#refusal), before anything is sent.
     */
    public static LawindexQueryBuilder fromXContent(XContentParser parser, Supplier<Map<String, Integer>> nodes) throws IOException {
        Parsed parsed = new Parsed();
        String current = null;
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            if (token == XContentParser.Token.FIELD_NAME) {
                current = parser.currentName();
                parsed.given.add(current);
            } else if (VECTOR.match(current, parser.getDeprecationHandler())) {
                parsed.vector(parser, token);
            } else if (token.isValue()) {
                parsed.read(parser, current, token);
            } else if (FUSION.contains(current)) {
                // "rrf_k": [5], "words_weight": {}: the contract's message for the parameter, the value described.
                Contract.Parameter rule = Contract.shipped().parameter(current);
                throw refused(parser, Contract.shipped().message(rule.type, "name", current, "min", Contract.plain(rule.min),
                    "max", Contract.plain(rule.max), "value", describe(token)));
            } else if (BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                throw refused(parser, BOOST_RULE + describe(token));
            } else if (STRINGS.contains(current)) {
                throw refused(parser, "[" + current + "] must be a string, not " + describe(token));
            } else {
                throw unknown(parser, current);
            }
        }
        String refusal = Wire.refusal(parsed.given, Wire.PARAMETERS, nodes.get());
        if (refusal != null) {
            throw refused(parser, refusal);
        }
        return parsed.built(parser);
    }

    /** What a {@code lawindex} object said, read key by key; each value checked as it is read, a 400 naming it. */
    private static final class Parsed {
        String question;
        String field;
        String order;
        String queryName;
        String by = Contract.shipped().defaultWay;
        float boost = DEFAULT_BOOST;
        /** The fusion parameters given: their values (Long, Double, or the text of anything else) and text. */
        final Map<String, Object> fusion = new LinkedHashMap<>();
        final Map<String, String> spelled = new LinkedHashMap<>();
        /** The vector given: how many values, the first max_length + 1 of them (Long, Double or null), as spelled. */
        int vectorCount = -1;
        Object[] vectorValues;
        String[] vectorSpelled;
        boolean vectorNotArray;

        /** {@code "vector": [numbers]}: each value read as the contract checks it, at most max_length + 1 kept. */
        void vector(XContentParser parser, XContentParser.Token token) throws IOException {
            if (token != XContentParser.Token.START_ARRAY) {
                vectorNotArray = true;
                parser.skipChildren();
                return;
            }
            int kept = Contract.shipped().vectorMaxLength() + 1;
            List<Object> values = new ArrayList<>();
            List<String> texts = new ArrayList<>();
            int count = 0;
            XContentParser.Token item;
            while ((item = parser.nextToken()) != XContentParser.Token.END_ARRAY) {
                Object value = null;
                String text = null;
                if (item == XContentParser.Token.VALUE_NUMBER) {
                    value = number(parser);
                    text = parser.text();
                    if (value instanceof String) {  // an integer past a long: its double is BigInteger's (Infinity past float64)
                        value = new BigInteger(text);
                    }
                } else if (item == XContentParser.Token.START_ARRAY || item == XContentParser.Token.START_OBJECT) {
                    parser.skipChildren();
                }
                if (count < kept) {
                    values.add(value);
                    texts.add(text);
                }
                count++;
            }
            vectorCount = count;
            vectorValues = values.toArray();
            vectorSpelled = texts.toArray(new String[0]);
        }
        /** Every key given (a value, an array or an object), for the wire's check (Wire#refusal). */
        final Set<String> given = new LinkedHashSet<>();

        void read(XContentParser parser, String name, XContentParser.Token token) throws IOException {
            if (BOOST_FIELD.match(name, parser.getDeprecationHandler())) {
                boost = boost(parser);
            } else if (FUSION.contains(name)) {
                fusion.put(name, number(parser));
                spelled.put(name, parser.text());
            } else {
                text(parser, name, token);
            }
        }

        /** question, field, order, by and _name: strings ("question": 30 was once taken as "30"). */
        private void text(XContentParser parser, String name, XContentParser.Token token) throws IOException {
            if (!STRINGS.contains(name)) {
                throw unknown(parser, name);
            }
            if (token != XContentParser.Token.VALUE_STRING) {
                throw refused(parser, "[" + name + "] must be a string, not " + describe(token));
            }
            String value = parser.text();
            if (QUESTION.match(name, parser.getDeprecationHandler())) {
                question = value;
            } else if (FIELD.match(name, parser.getDeprecationHandler())) {
                field = value;
            } else if (ORDER.match(name, parser.getDeprecationHandler())) {
                order = value;
            } else if (BY.match(name, parser.getDeprecationHandler())) {
                by = value;
            } else {
                queryName = value;
            }
        }

        LawindexQueryBuilder built(XContentParser parser) {
            if (question == null) {
                throw refused(parser, "requires [question], a string");
            }
            String refusal = Contract.shipped().refusal(by, fusion, spelled);
            if (refusal != null) {
                throw refused(parser, refusal);
            }
            double[] given = null;
            if (vectorNotArray) {
                throw refused(parser, Contract.shipped().message("vector_type"));
            }
            if (vectorCount >= 0) {
                String wrong = Contract.shipped().vectorRefusal(by, vectorCount, vectorValues, vectorSpelled);
                if (wrong != null) {
                    throw refused(parser, wrong);
                }
                given = new double[vectorCount];
                for (int i = 0; i < vectorCount; i++) {
                    given[i] = ((Number) vectorValues[i]).doubleValue();
                }
            }
            LawindexQueryBuilder built = new LawindexQueryBuilder(question, field, order).way(by,
                fusion.containsKey("rrf_k") ? ((Long) fusion.get("rrf_k")).intValue() : Fusion.RRF_K,
                weight("words_weight", Fusion.WORDS_WEIGHT), weight("meaning_weight", Fusion.MEANING_WEIGHT));
            built.vector = given;
            built.boost(boost);
            built.queryName(queryName);
            return built;
        }

        private double weight(String name, double fallback) {
            return fusion.containsKey(name) ? ((Number) fusion.get(name)).doubleValue() : fallback;
        }
    }

    private static final Set<String> STRINGS = Set.of("question", "field", "order", "by", "_name");
    private static final Set<String> FUSION = Set.of("rrf_k", "words_weight", "meaning_weight");

    private static ParsingException unknown(XContentParser parser, String name) {
        return refused(parser, "takes question, by, rrf_k, words_weight, meaning_weight, vector, field, order, boost and _name; not ["
            + name + "]");
    }

    private static ParsingException refused(XContentParser parser, String why) {
        return new ParsingException(parser.getTokenLocation(), "[" + NAME + "] " + why);
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

    /** A number as the contract checks it: a Long for an integer, a Double for another number, else its text. */
    private static Object number(XContentParser parser) throws IOException {
        if (parser.currentToken() != XContentParser.Token.VALUE_NUMBER) {
            return parser.text();
        }
        XContentParser.NumberType type = parser.numberType();
        if (type == XContentParser.NumberType.INT || type == XContentParser.NumberType.LONG) {
            return parser.longValue();
        }
        if (type == XContentParser.NumberType.BIG_INTEGER) {
            return parser.text();
        }
        return parser.doubleValue();
    }

    /**
     * The query's {@code boost}: 1 or a power of two from 2^-20 to 2^20. Multiplying a score by a power of two is
     * exact (no float64 score lawindex makes is near overflow or underflow after it), so the spec's order holds;
     * any other factor can round two scores to one ({@code boost: 3e38} made every words score Infinity).
     */
    static float boost(XContentParser parser) throws IOException {
        double value;
        try {
            value = parser.doubleValue();  // a number, or a string of one, as OpenSearch reads every boost
        } catch (IllegalArgumentException | IOException | IllegalStateException e) {
            value = Double.NaN;
        }
        if (!exactBoost(value)) {
            throw refused(parser, BOOST_RULE + parser.text());
        }
        return (float) value;
    }

    static final String BOOST_RULE = "boost: must be 1 or a power of two from 2^-20 to 2^20 (a score times a power of two is"
        + " exact, so the order cannot change), not ";

    static boolean exactBoost(double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            return false;
        }
        int exponent = Math.getExponent(value);
        return exponent >= -20 && exponent <= 20 && value == Math.scalb(1.0, exponent);
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        int limit = context.getIndexSettings().getValue(LawindexPlugin.MAX_QUESTION_LENGTH);
        if (question.length() > limit) {
            throw new IllegalArgumentException("[" + NAME + "] question is " + question.length() + " characters long, more than "
                + "the " + limit + " this index takes; the limit is the index setting ["
                + LawindexPlugin.MAX_QUESTION_LENGTH.getKey() + "]");
        }
        MappedFieldType type = mapped(context);
        if (Fusion.WORDS.equals(by)) {
            return wordsQuery(context, type);
        }
        OrderField.check(context, order); // ties in corpus order, by meaning too
        int[] grid = grid(context);
        LawindexQuery words = Fusion.HYBRID.equals(by) ? wordsQuery(context, type) : null;
        return new MeaningQuery(question, grid, order, Fusion.HYBRID.equals(by), words, rrfK, wordsWeight, meaningWeight,
            RequestBreaker.of(context), RequestBreaker.fielddata(context));
    }

    /**
     * The question's grid vector. Its own ({@code vector}), of the length of the index's vectors, put on the grid as a
     * row's is ({@link Embedder#gridOf}); else, where the index's questions are embedded by the node (the road table),
     * the node's embedding of the text (bit-equal to lawindex's Python embedder), a question with nothing to embed (no
     * letter or digit) near no row (hybrid is then words' part alone); an index whose vectors the node cannot make a
     * question's of ({@code questions: client}: a transformer's, a user's own) needs the vector: a 400 naming it.
     */
    private int[] grid(QueryShardContext context) {
        Meaning meaning = Meaning.of(context);
        if (vector != null) {
            if (vector.length != meaning.dimension) {
                throw new IllegalArgumentException("[" + NAME + "] " + Contract.shipped().message("vector_dimension", "value",
                    Integer.toString(vector.length), "dimension", Integer.toString(meaning.dimension)));
            }
            return Embedder.gridOf(vector);
        }
        if (!meaning.questionsOnNode) {
            throw new IllegalArgumentException("[" + NAME + "] " + Contract.shipped().message("vector_needed", "index",
                context.index().getName(), "model", meaning.model));
        }
        Embedder shipped = Embedder.shipped();
        if (!meaning.madeBy(shipped.digest)) {
            // The rows came from another table (or model) than the one this node embeds with: its question's vector
            // would rank against rows it is not comparable with. Never silently: the question's vector is needed.
            throw new IllegalArgumentException("[" + NAME + "] " + Contract.shipped().message("vector_needed", "index",
                context.index().getName(), "model", meaning.model + "@" + meaning.version + " (this node embeds with "
                    + Embedder.MODEL + " of table " + shipped.digest + ")"));
        }
        return Embedder.nothingToEmbed(question) ? new int[Embedder.DIMENSION] : Embedder.shipped().grid(question);
    }

    /** An index's meaning as its {@code _meta.lawindex.meaning} records it (lawindex's load writes it). */
    static final class Meaning {
        final String model;
        /** The model's version as the load recorded it (null where it did not: an older load, the road table's). */
        final String version;
        final int dimension;
        final boolean questionsOnNode;

        Meaning(String model, String version, int dimension, boolean questionsOnNode) {
            this.model = model;
            this.version = version;
            this.dimension = dimension;
            this.questionsOnNode = questionsOnNode;
        }

        /** True when the index's rows were embedded with the road table whose digest is {@code digest}: the node
         * then embeds a question as lawindex embedded the rows (a record without a version: the road table's). */
        boolean madeBy(String digest) {
            return Embedder.MODEL.equals(model) && (version == null || version.endsWith("+" + digest));
        }

        /** The index's; an index without the record (an older load, a hand-made index): the road table's. */
        static Meaning of(QueryShardContext context) {
            DocumentMapper mapper = context.getMapperService() == null ? null : context.getMapperService().documentMapper();
            Map<String, Object> meta = mapper == null ? null : mapper.meta();
            return of(meta);
        }

        static Meaning of(Map<String, Object> meta) {
            Object lawindex = meta == null ? null : meta.get("lawindex");
            Object meaning = lawindex instanceof Map ? ((Map<?, ?>) lawindex).get("meaning") : null;
            if (!(meaning instanceof Map)) {
                return new Meaning(Embedder.MODEL, null, Embedder.DIMENSION, true);
            }
            Map<?, ?> record = (Map<?, ?>) meaning;
            Object model = record.get("model");
            Object dimension = record.get("dimension");
            Object version = record.get("version");
            return new Meaning(model instanceof String ? (String) model : Embedder.MODEL,
                version instanceof String ? (String) version : null,
                dimension instanceof Number ? ((Number) dimension).intValue() : Embedder.DIMENSION,
                !"client".equals(record.get("questions")));
        }
    }

    /** The field asked: mapped, on every way (a misspelt field once answered 200 with no hits by words, with hits
     * by meaning). */
    private MappedFieldType mapped(QueryShardContext context) {
        MappedFieldType type = context.fieldMapper(field);
        if (type == null) {
            throw new IllegalArgumentException("[" + NAME + "] field [" + field + "] is not mapped in this index; the "
                + "question is asked of lawindex's ranked field, [" + DEFAULT_FIELD + "]");
        }
        return type;
    }

    private LawindexQuery wordsQuery(QueryShardContext context, MappedFieldType type) throws IOException {
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
            && Double.compare(meaningWeight, other.meaningWeight) == 0 && Arrays.equals(vector, other.vector);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(question, field, order, by, rrfK, wordsWeight, meaningWeight, Arrays.hashCode(vector));
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
