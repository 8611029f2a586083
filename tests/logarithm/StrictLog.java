// Java's StrictMath.log (fdlibm) of every double in a file: one 16-digit hex bit pattern a line in
// (args[0]), the bit pattern of StrictMath.log of it a line out (args[1]). Run by the single-file launcher:
// java StrictLog.java IN OUT.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

public class StrictLog {
    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.US_ASCII);
        StringBuilder out = new StringBuilder(lines.size() * 17);
        for (String line : lines) {
            if (line.isEmpty()) continue;
            double x = Double.longBitsToDouble(Long.parseUnsignedLong(line, 16));
            out.append(String.format("%016x", Double.doubleToRawLongBits(StrictMath.log(x)))).append('\n');
        }
        Files.writeString(Path.of(args[1]), out.toString(), StandardCharsets.US_ASCII);
    }
}
