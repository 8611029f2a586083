package org.lawindex;

import java.io.IOException;
import java.util.Random;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;

/** A shard of {@code docs} documents with nothing in them but their id as {@code order}, over random segments: what
 * the shared weight, scorer and floats are tested on (they read only the reader's leaves and sizes). */
final class Shard implements AutoCloseable {
    final Directory directory = new ByteBuffersDirectory();
    final DirectoryReader reader;

    Shard(int docs, Random random) throws IOException {
        IndexWriterConfig config = new IndexWriterConfig(new WhitespaceAnalyzer()).setMergePolicy(NoMergePolicy.INSTANCE);
        try (IndexWriter writer = new IndexWriter(directory, config)) {
            for (int doc = 0; doc < docs; doc++) {
                Document document = new Document();
                document.add(new NumericDocValuesField("order", doc));
                writer.addDocument(document);
                if (random.nextInt(25) == 0) {
                    writer.commit();
                }
            }
            writer.commit();
        }
        reader = DirectoryReader.open(directory);
    }

    @Override
    public void close() throws IOException {
        reader.close();
        directory.close();
    }
}
