package org.lawindex;

import java.util.LinkedHashMap;
import java.util.Map;

import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.inject.Inject;
import org.opensearch.common.lifecycle.AbstractLifecycleComponent;

/**
 * The node's view of the cluster's nodes, for the wire check (Wire#refusal): made by the node's injector with its
 * ClusterService (LawindexPlugin#getGuiceServiceClasses; createComponents takes a Client of another class on
 * each OpenSearch line, and the plugin class extends Plugin itself). One node per JVM, as OpenSearch runs.
 */
public final class ClusterNodes extends AbstractLifecycleComponent {
    private static volatile ClusterService service;

    @Inject
    public ClusterNodes(ClusterService clusterService) {
        service = clusterService;
    }

    /** Every node that may hold a shard (data and search nodes), by name, with its wire version (Wire#of); none
     * before the node has its cluster service (and in unit tests). One pass over the cluster's nodes. */
    static Map<String, Integer> wireVersions() {
        Map<String, Integer> versions = new LinkedHashMap<>();
        ClusterService known = service;
        if (known == null) {
            return versions;
        }
        for (DiscoveryNode node : known.state().nodes()) {
            if (node.isDataNode() || node.isSearchNode()) {
                versions.put(node.getName(), Wire.of(node.getAttributes()));
            }
        }
        return versions;
    }

    @Override
    protected void doStart() {}

    @Override
    protected void doStop() {}

    @Override
    protected void doClose() {}
}
