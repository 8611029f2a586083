package org.lawindex;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.opensearch.common.settings.Settings;
import org.opensearch.index.IndexModule;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SearchPlugin;

/** The lawindex plugin: the {@code lawindex_bm25} similarity and the {@code lawindex} query. */
public final class LawindexPlugin extends Plugin implements SearchPlugin {
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
        return List.of(new QuerySpec<>(LawindexQueryBuilder.NAME, LawindexQueryBuilder::new, LawindexQueryBuilder::fromXContent));
    }
}
