package org.lawindex;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.opensearch.common.io.stream.BytesStreamOutput;
import org.opensearch.core.common.bytes.BytesReference;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.common.io.stream.Writeable;

/**
 * The lawindex query's wire form between nodes, versioned, so that two builds of the plugin in one cluster (a
 * rolling upgrade of lawindex) never misread each other. The form is:
 *
 * <ol>
 *   <li>the writer's wire version as a negative vInt ({@link #writeHeader}): a build from before wire versions
 *       wrote the question's length there, never negative, so each side tells the other apart;</li>
 *   <li>the fields of wire 1, fixed for good (question, field, order, by, rrf_k, words_weight, meaning_weight);</li>
 *   <li>the parameters added since ({@link #PARAMETERS}), only those the query sets, each as its name, the wire
 *       version that introduced it and its value's bytes, length-prefixed ({@link Out}).</li>
 * </ol>
 *
 * <p>A reader of any build reads the fields of wire 1 and then every parameter it knows; a parameter it does not
 * know (a newer build's) is a 400 that names it ({@link In#refuseUnknown}), never a misread stream. A parameter
 * the query does not set is not written, so an older node answers a newer build's query that does not use the new
 * parameter exactly. Before sending, the coordinating node refuses up front a parameter some node's build cannot
 * read ({@link #refusal}): every node carries its build's wire version as the node attribute
 * {@code node.attr.lawindex_wire} (LawindexPlugin#additionalSettings), in the cluster state.
 *
 * <p>Adding a parameter: declare it here with the next wire version (for instance
 * {@code static final Parameter VECTOR = new Parameter("vector", 2)}, listed in {@link #PARAMETERS}), raise
 * {@link #VERSION} to it, write it with {@link Out#put} when the query sets it and read it with {@link In#value}.
 * docs/plugin.md lists the versions.
 */
final class Wire {
    /** This build's wire version: 2 (wire 1, the first versioned form, had the fields of wire 1 and no parameter
     * after; wire 2 added {@link #VECTOR}). */
    static final int VERSION = 2;
    /** The node attribute that carries a node's wire version: {@code node.attr.lawindex_wire}. */
    static final String ATTRIBUTE = "lawindex_wire";
    /** The most parameters a stream may carry past wire 1: what a reader reads before it refuses the stream. */
    static final int MOST_PARAMETERS = 64;

    /** A parameter added after wire 1: its name (the query's key, as a 400 names it) and the wire version that
     * introduced it. */
    static final class Parameter {
        final String name;
        final int since;

        Parameter(String name, int since) {
            if (since < 2) {
                throw new IllegalArgumentException("a parameter past wire 1 is introduced at wire 2 or later, not " + since);
            }
            this.name = name;
            this.since = since;
        }

        @Override
        public String toString() {
            return name + " (wire " + since + ")";
        }
    }

    /** The question's own vector (issue 46): wire 2. */
    static final Parameter VECTOR = new Parameter("vector", 2);
    /** Every parameter this build knows past wire 1, in the order they were added. */
    static final List<Parameter> PARAMETERS = List.of(VECTOR);

    private Wire() {}

    /** The writer's version, first: negative, where a build before wire versions wrote a length (never negative). */
    static void writeHeader(StreamOutput out, int version) throws IOException {
        out.writeVInt(-version);
    }

    /** The writer's wire version; a stream from a build before wire versions is a 400 that says so. */
    static int readHeader(StreamInput in) throws IOException {
        int mark = in.readVInt();
        if (mark >= 0) {
            throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] the query came from a node whose lawindex plugin"
                + " was built before wire versions (it carries none); upgrade the lawindex plugin on every node to one build");
        }
        if (mark == Integer.MIN_VALUE) {
            throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] not a lawindex wire version: " + mark);
        }
        return -mark;
    }

    /** The parameters past wire 1 a query writes: those it sets, in declaration order. */
    static final class Out {
        private final Map<Parameter, Writeable> given = new LinkedHashMap<>();

        /** `parameter`'s value, written by `value` (only when the query sets the parameter). */
        Out put(Parameter parameter, Writeable value) {
            given.put(parameter, value);
            return this;
        }

        void writeTo(StreamOutput out) throws IOException {
            out.writeVInt(given.size());
            for (Map.Entry<Parameter, Writeable> entry : given.entrySet()) {
                out.writeString(entry.getKey().name);
                out.writeVInt(entry.getKey().since);
                try (BytesStreamOutput value = new BytesStreamOutput()) {
                    value.setVersion(out.getVersion());
                    entry.getValue().writeTo(value);
                    out.writeBytesReference(value.bytes());
                }
            }
        }
    }

    /** The parameters past wire 1 a stream carries, read whole (each value's bytes), then taken by name. */
    static final class In {
        private final Map<String, BytesReference> values = new LinkedHashMap<>();
        private final Map<String, Integer> since = new LinkedHashMap<>();
        private final org.opensearch.Version streamVersion;

        In(StreamInput in) throws IOException {
            streamVersion = in.getVersion();
            int count = in.readVInt();
            if (count < 0 || count > MOST_PARAMETERS) {
                throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] the query's wire form carries " + count
                    + " parameters past wire 1; at most " + MOST_PARAMETERS + " are read");
            }
            for (int i = 0; i < count; i++) {
                String name = in.readString();
                since.put(name, in.readVInt());
                values.put(name, in.readBytesReference());
            }
        }

        /** A 400 naming the first parameter this build does not know (`known`): a newer build's. */
        In refuseUnknown(Collection<Parameter> known, int writer) {
            List<String> names = new ArrayList<>();
            for (Parameter parameter : known) {
                names.add(parameter.name);
            }
            for (Map.Entry<String, Integer> entry : since.entrySet()) {
                if (!names.contains(entry.getKey())) {
                    throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] [" + entry.getKey() + "] needs lawindex wire"
                        + " version " + entry.getValue() + ", but this node's lawindex plugin reads wire " + VERSION + " (the query came"
                        + " from a build of wire " + writer + "): upgrade the lawindex plugin on every node, or ask without ["
                        + entry.getKey() + "]");
                }
            }
            return this;
        }

        /** `parameter`'s value, read by `reader`, or `absent` when the stream does not carry it. */
        <T> T value(Parameter parameter, Writeable.Reader<T> reader, T absent) throws IOException {
            BytesReference bytes = values.get(parameter.name);
            if (bytes == null) {
                return absent;
            }
            try (StreamInput value = bytes.streamInput()) {
                value.setVersion(streamVersion);
                return reader.read(value);
            }
        }
    }

    /**
     * Why the coordinating node refuses a query before sending it, or null: a parameter the query sets (`given`,
     * by name) that some node's build cannot read. `nodes` is every node that may hold a shard, by name, with its
     * wire version (0 for a node whose plugin carries none: built before wire versions). One pass over the
     * parameters and one over the nodes.
     */
    static String refusal(Collection<String> given, List<Parameter> declared, Map<String, Integer> nodes) {
        int oldest = Integer.MAX_VALUE;
        String oldestNode = null;
        for (Map.Entry<String, Integer> node : nodes.entrySet()) {
            if (node.getValue() < oldest) {
                oldest = node.getValue();
                oldestNode = node.getKey();
            }
        }
        if (oldestNode == null) {
            return null;
        }
        if (oldest < 1) {
            return "node [" + oldestNode + "] runs a lawindex plugin built before wire versions (it has no node.attr." + ATTRIBUTE
                + "), or none: it cannot read this build's query; upgrade the lawindex plugin on every node to one build";
        }
        for (Parameter parameter : declared) {
            if (given.contains(parameter.name) && parameter.since > oldest) {
                return "[" + parameter.name + "] needs lawindex wire version " + parameter.since + " on every node that holds"
                    + " shards, but node [" + oldestNode + "] runs a lawindex plugin of wire " + oldest + " (an older build):"
                    + " upgrade the plugin on that node, or ask without [" + parameter.name + "]";
            }
        }
        return null;
    }

    /** A node's wire version from its attributes: 0 when it carries none (a build before wire versions, or no
     * lawindex plugin), and 0 for a value that is no whole number. */
    static int of(Map<String, String> attributes) {
        String value = attributes.get(ATTRIBUTE);
        if (value == null) {
            return 0;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
