package org.lawindex;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.opensearch.common.lifecycle.LifecycleComponent;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.unit.ByteSizeValue;
import org.opensearch.index.IndexModule;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SearchPlugin;

/**
 * The lawindex plugin: the {@code lawindex_bm25} similarity and the {@code lawindex} query, and the node attribute
 * {@code node.attr.lawindex_wire} that tells every node which wire form of the query this node reads (Wire).
 */
public final class LawindexPlugin extends Plugin implements SearchPlugin {
    /**
     * The longest question (in UTF-16 units, as Java and JavaScript count) the lawindex query takes on an
     * index; a longer one is a 400 that names this setting. 1,000,000 by default: the expansion's cost is
     * linear in the question's length (Vocabulary), so a million characters is seconds at worst (benchmarks/
     * RESULTS.md), and every question the spec answers in reasonable time is answered; past it a request
     * has no business asking. Dynamic, per index, as index.max_regex_length.
     */
    public static final Setting<Integer> MAX_QUESTION_LENGTH = Setting.intSetting("index.lawindex.max_question_length",
        1_000_000, 0, Setting.Property.Dynamic, Setting.Property.IndexScope);

    /**
     * The most heap the per-segment vectors of the query by meaning may keep (GridVectors: 1,036 bytes a row, a
     * Texas of 6,000 laws 6 MB): 10% of the heap by default, 51 MB of a 512 MB node. Past it the segments least
     * recently asked are dropped, and a segment that does not fit is read per question. A node setting, as
     * indices.fielddata.cache.size.
     */
    public static final Setting<ByteSizeValue> VECTOR_CACHE_SIZE = Setting.memorySizeSetting("lawindex.vector_cache.size",
        "10%", Setting.Property.NodeScope);

    public LawindexPlugin(Settings settings) {
        GridVectors.limit(VECTOR_CACHE_SIZE.get(settings).getBytes());
    }

    /** This node's wire version as a node attribute, which every node's DiscoveryNode carries in the cluster state. */
    @Override
    public Settings additionalSettings() {
        // loadFromMap: Builder#put's overloads name log4j's Level, which the build does not compile against.
        return Settings.builder().loadFromMap(Map.of("node.attr." + Wire.ATTRIBUTE, Integer.toString(Wire.VERSION))).build();
    }

    /** ClusterNodes: the cluster's nodes and their wire versions, for the coordinating node's check. */
    @Override
    public Collection<Class<? extends LifecycleComponent>> getGuiceServiceClasses() {
        return List.of(ClusterNodes.class);
    }

    @Override
    public List<Setting<?>> getSettings() {
        return List.of(MAX_QUESTION_LENGTH, VECTOR_CACHE_SIZE);
    }

    @Override
    public void onIndexModule(IndexModule module) {
        module.addSimilarity(LawindexSimilarity.TYPE, (settings, version, scripts) -> LawindexSimilarity.fromSettings(asMap(settings)));
    }

    private static Map<String, String> asMap(Settings settings) {
        Map<String, String> map = new HashMap<>();
        for (String key : settings.keySet()) {
            map.put(key, settings.get(key));
        }
        return map;
    }

    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(new QuerySpec<>(LawindexQueryBuilder.NAME, LawindexQueryBuilder::new,
            parser -> LawindexQueryBuilder.fromXContent(parser, ClusterNodes::wireVersions)));
    }
}
