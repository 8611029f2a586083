// V8's Math.log of every double in a file: one 16-digit hex bit pattern a line in (argv[2]), the bit
// pattern of Math.log of it a line out (argv[3]). Bits, not decimals, so that nothing is rounded on the way.
import { readFileSync, writeFileSync } from "node:fs";

const cell = new DataView(new ArrayBuffer(8));
const out = [];
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (line === "") continue;
  cell.setBigUint64(0, BigInt("0x" + line));
  cell.setFloat64(0, Math.log(cell.getFloat64(0)));
  out.push(cell.getBigUint64(0).toString(16).padStart(16, "0"));
}
writeFileSync(process.argv[3], out.join("\n") + "\n");
