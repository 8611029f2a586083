// Writes v8-bm25.tsv: the spec's idf and BM25 term computed by V8 (Node), the runtime the spec runs on, for
// arguments drawn by a fixed generator. Each double is written as the hex of its 64 bits, so the Java test
// compares bit for bit. Run: node src/test/resources/make-v8-bm25.js > src/test/resources/v8-bm25.tsv
let seed = 20261201;
function next() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
function bits(x) { const b = new DataView(new ArrayBuffer(8)); b.setFloat64(0, x); return b.getBigUint64(0).toString(16).padStart(16, "0"); }
const k1 = 1.2, b = 0.75;
const lines = [];
for (let i = 0; i < 6000; i++) {
  const size = 1 + Math.floor(next() ** 3 * 30000);
  const n = 1 + Math.floor(next() * size);
  const tf = 1 + Math.floor(next() ** 4 * 40);
  const length = tf + Math.floor(next() ** 2 * 300);
  // An average as the spec makes it: a sum of lengths over the ranked laws' count.
  const average = (Math.floor(next() * 200 * size) + size) / size;
  const idf = Math.log(1 + (size - n + 0.5) / (n + 0.5));
  const term = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / average));
  lines.push([size, n, tf, length, bits(average), bits(idf), bits(term)].join("\t"));
}
process.stdout.write("size\tn\ttf\tlength\taverage\tidf\tterm\n" + lines.join("\n") + "\n");
