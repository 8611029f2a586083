package org.lawindex;

import java.util.Set;

import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.mapper.NumberFieldMapper;
import org.opensearch.index.query.QueryShardContext;

/**
 * The {@code order} parameter: a whole-number field with doc values, each law's corpus order, which breaks
 * ties. Checked before anything runs: {@code "order": "kind"} (a keyword) once reached Lucene's doc values
 * and answered HTTP 500 ("unexpected docvalues type SORTED_SET").
 */
final class OrderField {
    private static final Set<String> WHOLE = Set.of("long", "integer", "short", "byte");

    private OrderField() {}

    static void check(QueryShardContext context, String order) {
        MappedFieldType type = context.fieldMapper(order);
        String expected = "; it must be a whole-number field (long, integer, short or byte) with doc values holding each "
            + "law's corpus order, lawindex's [" + LawindexQueryBuilder.DEFAULT_ORDER + "]";
        if (type == null) {
            throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] order field [" + order + "] is not mapped"
                + expected);
        }
        if (!(type instanceof NumberFieldMapper.NumberFieldType) || !WHOLE.contains(type.typeName())) {
            throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] order field [" + order + "] is a ["
                + type.typeName() + "] field" + expected);
        }
        if (!type.hasDocValues()) {
            throw new IllegalArgumentException("[" + LawindexQueryBuilder.NAME + "] order field [" + order
                + "] has no doc values" + expected);
        }
    }
}
