// A single-node OpenSearch made of its published jars, for development and tests on machines without
// Docker. indexer/node.py compiles this file on first use against the jars Maven copied for one
// version, and runs it detached:
//
//   java -Xms512m -Xmx512m -cp 'LIB/*:CLASSES' Launcher path.home=H path.data=D http.port=9200 ...
//
// Every argument is one node setting, key=value. The node logs to ${path.logs}/opensearch.log.
//
// It constructs org.opensearch.node.Node the way the test framework's MockNode does. That skips the
// bootstrap checks and the security manager (Java 24+ has none to install). One source serves 2.x and
// 3.x: the protected constructor is found by reflection because its plugin argument changed type —
// Collection<Class<? extends Plugin>> up to 3.0, Collection<PluginInfo> from 3.1 — and so did the
// plugin class names (Netty4Plugin -> Netty4ModulePlugin, CommonAnalysisPlugin -> CommonAnalysisModulePlugin).

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;

public final class Launcher {

    // Each plugin under its 3.1+ name first, then its 2.x name.
    private static final String[][] PLUGINS = {
        { "org.opensearch.transport.Netty4ModulePlugin", "org.opensearch.transport.Netty4Plugin" },
        { "org.opensearch.analysis.common.CommonAnalysisModulePlugin", "org.opensearch.analysis.common.CommonAnalysisPlugin" },
    };

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        List<String[]> pairs = new ArrayList<>();
        String home = null;
        String logs = null;
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                System.err.println("Launcher: expected key=value, got: " + arg);
                System.exit(2);
            }
            String key = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            if (key.equals("path.home")) home = value;
            if (key.equals("path.logs")) logs = value;
            pairs.add(new String[] { key, value });
        }
        if (home == null) {
            System.err.println("Launcher: path.home=... is required");
            System.exit(2);
        }
        Path logDir = Paths.get(logs != null ? logs : home + "/logs");
        // Before any OpenSearch class touches log4j: everything goes to one file, not to a terminal
        // that the detached node no longer has.
        configureLogging(Paths.get(home), logDir);
        run(pairs);
    }

    private static void configureLogging(Path home, Path logDir) throws IOException {
        Files.createDirectories(logDir);
        Path config = home.resolve("config");
        Files.createDirectories(config);
        Path file = config.resolve("lawindex-log4j2.properties");
        String logFile = logDir.resolve("opensearch.log").toAbsolutePath().toString().replace("\\", "/");
        String properties = String.join(
            "\n",
            "status = error",
            "appender.file.type = File",
            "appender.file.name = file",
            "appender.file.fileName = " + logFile,
            "appender.file.append = true",
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d{ISO8601}][%-5p][%c{1.}] %m%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.file.ref = file",
            ""
        );
        Files.write(file, properties.getBytes(StandardCharsets.UTF_8));
        System.setProperty("log4j2.configurationFile", file.toAbsolutePath().toString());
        // log4j's own shutdown hook would stop the file appender before the node logs its close.
        System.setProperty("log4j.shutdownHookEnabled", "false");
        System.setProperty("log4j2.disable.jmx", "true");
    }

    private static void run(List<String[]> pairs) throws Exception {
        org.opensearch.common.settings.Settings.Builder builder = org.opensearch.common.settings.Settings.builder();
        for (String[] pair : pairs) {
            builder.put(pair[0], pair[1]);
        }
        org.opensearch.common.settings.Settings settings = builder.build();
        org.opensearch.env.Environment environment = org.opensearch.node.InternalSettingsPreparer.prepareEnvironment(
            settings,
            Collections.emptyMap(),
            null,
            () -> "lawindex"
        );

        Constructor<?> constructor = nodeConstructor();
        Type element = ((ParameterizedType) constructor.getGenericParameterTypes()[1]).getActualTypeArguments()[0];
        boolean takesPluginInfo = element instanceof Class<?> && ((Class<?>) element).getName().equals("org.opensearch.plugins.PluginInfo");
        List<Object> plugins = new ArrayList<>();
        for (String[] names : PLUGINS) {
            Class<?> plugin = firstClass(names);
            plugins.add(takesPluginInfo ? pluginInfo(plugin) : plugin);
        }
        constructor.setAccessible(true);
        org.opensearch.node.Node node = (org.opensearch.node.Node) constructor.newInstance(environment, plugins, true);

        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                org.apache.logging.log4j.LogManager.shutdown();
                closed.countDown();
            }
        }, "lawindex-node-close"));
        node.start();
        // The node's threads are daemons: without this wait the JVM would exit right after start().
        closed.await();
    }

    /** The protected Node(Environment, Collection<...>, boolean) of this version. */
    private static Constructor<?> nodeConstructor() {
        for (Constructor<?> c : org.opensearch.node.Node.class.getDeclaredConstructors()) {
            Class<?>[] types = c.getParameterTypes();
            if (types.length == 3
                && types[0] == org.opensearch.env.Environment.class
                && types[1] == java.util.Collection.class
                && types[2] == boolean.class) {
                return c;
            }
        }
        throw new IllegalStateException("no Node(Environment, Collection, boolean) constructor in this OpenSearch");
    }

    private static Class<?> firstClass(String[] names) throws ClassNotFoundException {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // try the other name
            }
        }
        throw new ClassNotFoundException(String.join(" or ", names));
    }

    /** A PluginInfo for a plugin already on the classpath, as MockNode builds one (3.1+). */
    private static Object pluginInfo(Class<?> plugin) throws Exception {
        Class<?> info = Class.forName("org.opensearch.plugins.PluginInfo");
        for (Constructor<?> c : info.getConstructors()) {
            Class<?>[] t = c.getParameterTypes();
            if (t.length == 9 && t[3] == org.opensearch.Version.class && t[7] == List.class && t[8] == boolean.class) {
                return c.newInstance(
                    plugin.getName(),
                    "classpath plugin",
                    "NA",
                    org.opensearch.Version.CURRENT,
                    "1.8",
                    plugin.getName(),
                    null,
                    Collections.emptyList(),
                    false
                );
            }
        }
        throw new IllegalStateException("no 9-argument PluginInfo constructor in this OpenSearch");
    }
}
