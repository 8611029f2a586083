package org.lawindex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * No method or constructor of the plugin's sources (src/main and each Lucene line's src/lucene*) is over
 * {@link #MOST} lines, from its first line (annotations included) to its closing brace (issue 45: the ranking factories were
 * 129 and 126 lines doing five jobs each). Read as text: comments, strings and characters blanked, then each brace
 * whose header ends in a parameter list (and is no class, control statement or lambda) opens a method.
 */
class MethodLengthTest {
    static final int MOST = 80;
    private static final Pattern CONTROL = Pattern.compile("^(if|for|while|switch|catch|synchronized|try|else|do|return|finally)\\b");
    private static final Pattern TYPE = Pattern.compile("\\b(class|interface|enum|record|new)\\b");
    private static final Pattern NAME = Pattern.compile("(\\w+)\\s*\\(");

    /** Each method's length in lines, as "length file:line name". */
    static List<String> methods(Path file) throws IOException {
        String text = blanked(Files.readString(file, StandardCharsets.UTF_8));
        List<String> found = new ArrayList<>();
        Deque<int[]> open = new ArrayDeque<>();  // {is a method, first line}
        Deque<String> names = new ArrayDeque<>();
        int line = 1;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '{') {
                String head = text.substring(start, i).strip();
                int first = line - (int) head.chars().filter(ch -> ch == '\n').count();
                Matcher name = NAME.matcher(signature(head));
                open.push(new int[] {isMethod(head) ? 1 : 0, first});
                names.push(name.find() ? name.group(1) : "?");
                start = i + 1;
            } else if (c == '}') {
                int[] block = open.pop();
                String name = names.pop();
                if (block[0] == 1) {
                    found.add((line - block[1] + 1) + " " + file.getFileName() + ":" + block[1] + " " + name);
                }
                start = i + 1;
            } else if (c == ';') {
                start = i + 1;
            } else if (c == '\n') {
                line++;
            }
        }
        return found;
    }

    /** A header without its annotations. */
    static String signature(String head) {
        return head.replaceAll("@\\w+(\\([^)]*\\))?\\s*", "").strip();
    }

    static boolean isMethod(String head) {
        String signature = signature(head);
        boolean parameters = signature.endsWith(")") || signature.matches("(?s).*\\)\\s*throws\\s+[\\w.,\\s]+");
        return parameters && !CONTROL.matcher(signature).find() && !TYPE.matcher(signature).find()
            && !signature.contains("->") && !signature.startsWith("=");
    }

    /** The text with comments removed and string and char literals emptied, its line breaks kept. */
    static String blanked(String text) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            if (text.startsWith("//", i)) {
                int end = text.indexOf('\n', i);
                i = end < 0 ? text.length() : end;
            } else if (text.startsWith("/*", i)) {
                int end = text.indexOf("*/", i + 2) + 2;
                text.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
                i = end;
            } else if (text.charAt(i) == '"' || text.charAt(i) == '\'') {
                char quote = text.charAt(i);
                int j = i + 1;
                while (text.charAt(j) != quote) {
                    j += text.charAt(j) == '\\' ? 2 : 1;
                }
                out.append(quote).append(quote);
                i = j + 1;
            } else {
                out.append(text.charAt(i++));
            }
        }
        return out.toString();
    }

    private static List<String> all() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path root : new Path[] {Path.of("src", "main", "java"), Path.of("src", "lucene9", "java"), Path.of("src", "lucene10", "java")}) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java")).sorted()::iterator) {
                    found.addAll(methods(file));
                }
            }
        }
        found.sort((a, b) -> Integer.compare(Integer.parseInt(b.split(" ")[0]), Integer.parseInt(a.split(" ")[0])));
        return found;
    }

    @Test
    void noMethodIsOver80Lines() throws IOException {
        List<String> methods = all();
        assertTrue(methods.size() > 200, methods.size() + " methods found: the reader is broken");
        System.out.println("MethodLengthTest: " + methods.size() + " methods, the longest " + methods.get(0));
        List<String> over = new ArrayList<>();
        for (String method : methods) {
            if (Integer.parseInt(method.split(" ")[0]) > MOST) {
                over.add(method);
            }
        }
        assertEquals(List.of(), over, "methods over " + MOST + " lines");
    }

    @Test
    void theReaderCountsAMethodFromItsSignatureToItsBrace() throws IOException {
        Path file = Files.createTempFile("Sample", ".java");
        Files.writeString(file, String.join("\n",
            "class Sample {",
            "    @Override",
            "    public int a(int x,",
            "                 int y) throws java.io.IOException {",
            "        if (x > 0) { return \"}\".length(); } // }",
            "        Runnable r = () -> { };",
            "        return new Object() { int b() { return '{'; } }.b();",
            "    }",
            "    static { }",
            "}"));
        List<String> found = methods(file);
        Files.delete(file);
        assertEquals(List.of("1 " + file.getFileName() + ":7 b", "7 " + file.getFileName() + ":2 a"), found);
    }
}
