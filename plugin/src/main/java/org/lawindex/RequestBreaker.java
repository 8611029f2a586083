package org.lawindex;

import org.opensearch.common.util.BigArrays;
import org.opensearch.core.common.breaker.CircuitBreaker;
import org.opensearch.core.indices.breaker.CircuitBreakerService;
import org.opensearch.index.query.QueryShardContext;

/**
 * OpenSearch's request circuit breaker (indices.breaker.request.limit, 60% of the heap by default), as the
 * query's {@link Work} charges it: the breaker the node's own aggregations charge, reached as they reach
 * it, through the shard context's BigArrays. Past its limit a charge throws CircuitBreakingException,
 * which OpenSearch answers 429 with the breaker's reason.
 */
final class RequestBreaker implements Work.Breaker {
    private final CircuitBreaker breaker;

    private RequestBreaker(CircuitBreaker breaker) {
        this.breaker = breaker;
    }

    static Work.Breaker of(QueryShardContext context) {
        return of(context, CircuitBreaker.REQUEST);
    }

    /** The node's fielddata breaker (indices.breaker.fielddata.limit, 40% of the heap by default): what OpenSearch
     * charges the field data it keeps per segment to, and what the plugin's per-segment vectors (GridVectors)
     * are charged to, until their segment closes. */
    static Work.Breaker fielddata(QueryShardContext context) {
        return of(context, CircuitBreaker.FIELDDATA);
    }

    private static Work.Breaker of(QueryShardContext context, String name) {
        BigArrays arrays = context.bigArrays();
        CircuitBreakerService service = arrays == null ? null : arrays.breakerService();
        CircuitBreaker breaker = service == null ? null : service.getBreaker(name);
        return breaker == null ? Work.UNLIMITED : new RequestBreaker(breaker);
    }

    @Override
    public void charge(long bytes, String label) {
        breaker.addEstimateBytesAndMaybeBreak(bytes, label);
    }

    @Override
    public void release(long bytes) {
        breaker.addWithoutBreaking(-bytes);
    }
}
