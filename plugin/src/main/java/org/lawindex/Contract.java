package org.lawindex;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one rule set of a lawindex question, contract/request.json, as the plugin reads it: the repository's file,
 * bundled into the jar at build time (Maven's resources and indexer/node/plugin.py put it at
 * {@code org/lawindex/contract/request.json}), so the plugin, serve, the CLI and the TypeScript client refuse the
 * same parameters with the same messages. What the plugin checks from it: the way ({@code by}), which ways take
 * each fusion parameter, their ranges, and the two weights not both 0. A number in a message is written as
 * JavaScript writes it ({@link #plain}: {@code 0.000001}, {@code 1000000}, {@code 1e+40}), as every path writes it;
 * a value that is no number as the request spelled it.
 */
final class Contract {
    static final String RESOURCE = "/org/lawindex/contract/request.json";
    private static final Contract SHIPPED = load();

    /** One parameter's rule: its type ("integer", "weight", "string"), bounds, default and the ways that take it. */
    static final class Parameter {
        final String name;
        final String type;
        final double min;
        final double max;
        final Object fallback;
        final List<String> ways;

        Parameter(String name, Map<String, Object> rule) {
            this.name = name;
            this.type = (String) rule.get("type");
            this.min = number(rule.get("min"));
            this.max = number(rule.get("max"));
            this.fallback = rule.get("default");
            this.ways = strings(rule.get("ways"));
        }

        /** Whether a weight or an integer is in range: a weight 0 or from min to max; an integer from min to max. */
        boolean accepts(double value) {
            if ("weight".equals(type) && value == 0.0) {
                return true;
            }
            return value >= min && value <= max;
        }
    }

    final List<String> ways;
    final String defaultWay;
    final Map<String, Parameter> parameters;
    private final Map<String, String> messages;
    /** Each parameter's rule as the file has it (the vector's bounds are read from it). */
    private final Map<String, Map<String, Object>> raw = new LinkedHashMap<>();

    @SuppressWarnings("unchecked")
    private Contract(Map<String, Object> file) {
        ways = strings(file.get("ways"));
        defaultWay = (String) file.get("default_way");
        parameters = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : ((Map<String, Object>) file.get("parameters")).entrySet()) {
            parameters.put(entry.getKey(), new Parameter(entry.getKey(), (Map<String, Object>) entry.getValue()));
            raw.put(entry.getKey(), (Map<String, Object>) entry.getValue());
        }
        messages = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : ((Map<String, Object>) file.get("messages")).entrySet()) {
            messages.put(entry.getKey(), (String) entry.getValue());
        }
    }

    /** The contract the jar carries (read once per node). */
    static Contract shipped() {
        return SHIPPED;
    }

    @SuppressWarnings("unchecked")
    static Contract parse(String text) {
        return new Contract((Map<String, Object>) Json.parse(text));
    }

    private static Contract load() {
        try (InputStream in = Contract.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the lawindex plugin's jar lacks " + RESOURCE + " (contract/request.json)");
            }
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Parameter parameter(String name) {
        Parameter found = parameters.get(name);
        if (found == null) {
            throw new IllegalArgumentException("contract/request.json has no parameter " + name);
        }
        return found;
    }

    /** The message {@code key} with its {name}, {way}... filled from {@code values} (name, value pairs). */
    String message(String key, String... values) {
        String text = messages.get(key);
        if (text == null) {
            throw new IllegalArgumentException("contract/request.json has no message " + key);
        }
        for (int i = 0; i + 1 < values.length; i += 2) {
            text = text.replace("{" + values[i] + "}", values[i + 1]);
        }
        return text;
    }

    /**
     * Null when the way and the fusion parameters given are good, else the contract's message for the first one
     * that is not: the way, then a parameter given to a way that does not take it (in the file's order), then a
     * value out of range, then both weights 0. {@code given} maps each fusion parameter the request named to
     * its value: a Long (an integer), a Double (another number), or the request's text of anything else.
     */
    String refusal(String by, Map<String, Object> given, Map<String, String> spelled) {
        if (!ways.contains(by)) {
            return message("way", "value", by);
        }
        for (Parameter parameter : parameters.values()) {
            if (given.containsKey(parameter.name) && !parameter.ways.contains(by)) {
                return message("not_for_way", "name", parameter.name, "ways", either(parameter.ways), "way", by);
            }
        }
        for (Parameter parameter : parameters.values()) {
            if (given.containsKey(parameter.name) && !inRange(parameter, given.get(parameter.name))) {
                return message(parameter.type, "name", parameter.name, "min", plain(parameter.min),
                    "max", plain(parameter.max), "value", written(given.get(parameter.name), spelled.get(parameter.name)));
            }
        }
        double words = weight(given, "words_weight");
        double meaning = weight(given, "meaning_weight");
        if (words == 0.0 && meaning == 0.0) {
            return message("weights_both_zero");
        }
        return null;
    }

    /** The most values a question's own vector may have (max_length). */
    int vectorMaxLength() {
        return ((Number) raw.get("vector").get("max_length")).intValue();
    }

    /**
     * Null when a question's own vector ({@code vector}: an array of {@code count} values, the first
     * {@code written.length} of them read; each a Double or Long, or null where it is no number) is good for the way
     * {@code by}, else the contract's message, in Python's order (request.checked_vector): the way, the length,
     * each value in turn (a number, finite, within max_abs), then the largest at least min_largest. {@code spelled}
     * is the request's text of each value (an integer past a long's range is written as it was spelled).
     */
    String vectorRefusal(String by, int count, Object[] values, String[] spelled) {
        Parameter rule = parameter("vector");
        if (!rule.ways.contains(by)) {
            return message("not_for_way", "name", rule.name, "ways", String.join(", ", rule.ways), "way", by);
        }
        Map<String, Object> bounds = raw.get(rule.name);
        int least = ((Number) bounds.get("min_length")).intValue();
        int most = ((Number) bounds.get("max_length")).intValue();
        if (count < least || count > most) {
            return message("vector_length", "value", Integer.toString(count), "min", Integer.toString(least),
                "max", Integer.toString(most));
        }
        double maxAbs = number(bounds.get("max_abs"));
        double largest = 0.0;
        for (int i = 0; i < count; i++) {
            if (!(values[i] instanceof Number)) {
                return message("vector_number", "index", Integer.toString(i));
            }
            double value = ((Number) values[i]).doubleValue();
            if (!(value >= -maxAbs && value <= maxAbs)) {
                String written = values[i] instanceof Double ? plain(value) : spelled[i];
                return message("vector_range", "index", Integer.toString(i), "value", written, "max", plain(maxAbs));
            }
            largest = Math.max(largest, Math.abs(value));
        }
        double minLargest = number(bounds.get("min_largest"));
        if (largest < minLargest) {
            return message("vector_zero", "min", plain(minLargest));
        }
        return null;
    }

    private static boolean inRange(Parameter parameter, Object value) {
        if ("integer".equals(parameter.type)) {
            return value instanceof Long && parameter.accepts((Long) value);
        }
        if ("weight".equals(parameter.type)) {
            return (value instanceof Long || value instanceof Double) && parameter.accepts(((Number) value).doubleValue());
        }
        return true;
    }

    private double weight(Map<String, Object> given, String name) {
        Object value = given.get(name);
        return value instanceof Number ? ((Number) value).doubleValue() : number(parameter(name).fallback);
    }

    /** "hybrid"; "meaning or hybrid"; "words, meaning or hybrid". */
    static String either(List<String> ways) {
        if (ways.size() == 1) {
            return ways.get(0);
        }
        return String.join(", ", ways.subList(0, ways.size() - 1)) + " or " + ways.get(ways.size() - 1);
    }

    /**
     * A number as JavaScript's {@code String(number)} writes it, as lawindex's Python (request.js_number) and the
     * TypeScript client write it in the same messages: the shortest digits that read back as the number, in fixed
     * notation for a decimal exponent from -7 to 20 ({@code 0.000001}, {@code 1000000}), else {@code 1e+40}.
     */
    static String plain(double value) {
        if (value == 0.0 || !Double.isFinite(value)) {
            return value == 0.0 ? "0" : Double.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
        }
        BigDecimal shortest = shortest(Math.abs(value));
        String digits = shortest.unscaledValue().toString();
        int k = digits.length();
        int n = k - shortest.scale();  // ECMAScript's Number::toString: the point after the n-th digit
        String sign = value < 0 ? "-" : "";
        if (k <= n && n <= 21) {
            return sign + digits + "0".repeat(n - k);
        }
        if (0 < n && n <= 21) {
            return sign + digits.substring(0, n) + "." + digits.substring(n);
        }
        if (-6 < n && n <= 0) {
            return sign + "0." + "0".repeat(-n) + digits;
        }
        String body = k == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
        return sign + body + "e" + (n - 1 >= 0 ? "+" : "-") + Math.abs(n - 1);
    }

    /** The fewest significant digits that read back as {@code value} (> 0), the nearest of them: Python's repr. */
    private static BigDecimal shortest(double value) {
        BigDecimal exact = new BigDecimal(value);
        for (int precision = 1; precision < 17; precision++) {
            BigDecimal rounded = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (rounded.doubleValue() == value) {
                return rounded.stripTrailingZeros();
            }
        }
        return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
    }

    /** A value given as the contract's messages write it: a number as {@link #plain}, anything else as given. */
    static String written(Object value, String spelled) {
        if (value instanceof Double) {
            return plain((Double) value);
        }
        return value instanceof Long ? value.toString() : spelled;
    }

    private static double number(Object value) {
        return value == null ? Double.NaN : ((Number) value).doubleValue();
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object value) {
        List<String> out = new ArrayList<>();
        for (Object item : (List<Object>) value) {
            out.add((String) item);
        }
        return out;
    }
}
