package renard;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * Configuration (SPEC §1): flags, {@code RENARD_*} variables, defaults. A flag wins over its
 * variable, a variable over the default; an empty variable is unset. Every error is one line
 * naming the flag (or variable) and the reason ({@link Invalid}); the caller prints it, exits 2.
 */
final class Config {
    /** A bad command line; the message is the whole stderr line. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String line) {
            super(line, null, false, false);
        }
    }

    static final String USAGE = String.join("\n",
            "usage: renard [--flag VALUE | --flag=VALUE]...",
            "",
            "Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N",
            "(uniform, or FNV-1a-64 of ?seed=S mod N + 1).",
            "",
            "  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)",
            "  --count N                RENARD_COUNT            default 21 (1 to 1000000)",
            "  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png",
            "  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024)",
            "  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)",
            "  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)",
            "  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)",
            "  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)",
            "  --help                   print this text",
            "  --version                print the version",
            "");

    /** The flags that take a value and their variables. */
    private static final String[][] FLAGS = {
        {"--listen", "RENARD_LISTEN"}, {"--count", "RENARD_COUNT"}, {"--location", "RENARD_LOCATION"},
        {"--threads", "RENARD_THREADS"}, {"--header-timeout", "RENARD_HEADER_TIMEOUT"},
        {"--idle-timeout", "RENARD_IDLE_TIMEOUT"}, {"--max-connections", "RENARD_MAX_CONNECTIONS"},
        {"--drain-timeout", "RENARD_DRAIN_TIMEOUT"},
    };

    /** Address to listen on; port 0 picks a free port. */
    final InetSocketAddress listen;
    /** N: k is drawn from 1..N. */
    final int count;
    /** Location template: visible ASCII, holds {@code {n}}. */
    final byte[] location;
    /** Event-loop threads. */
    final int threads;
    /** Absolute deadline for a request head, in nanoseconds. */
    final long headerTimeoutNanos;
    /** Idle connection / stalled response limit, in nanoseconds. */
    final long idleTimeoutNanos;
    /** Open connections allowed across all threads. */
    final int maxConnections;
    /** Drain window after SIGTERM/SIGINT before the header timeout caps it, in nanoseconds. */
    final long drainTimeoutNanos;

    private Config(String[] values, int cpus) throws Invalid {
        listen = value(0, values, "127.0.0.1:8080", Config::parseListen);
        count = value(1, values, "21", v -> parseInteger(v, 1_000_000));
        location = value(2, values, "https://avatar.example.org/Renard-{n}.png", Config::parseLocation);
        threads = value(3, values, Integer.toString(Math.max(1, Math.min(cpus, 1024))), v -> parseInteger(v, 1024));
        headerTimeoutNanos = value(4, values, "10", v -> parseSeconds(v, false));
        idleTimeoutNanos = value(5, values, "60", v -> parseSeconds(v, false));
        maxConnections = value(6, values, "10000", v -> parseInteger(v, 1_000_000));
        drainTimeoutNanos = value(7, values, "1", v -> parseSeconds(v, true));
    }

    /**
     * Read the command line {@code args} and the variables through {@code env}. Returns null
     * when {@code --help} or {@code --version} was printed to {@code stdout}.
     */
    static Config parse(String[] args, Function<String, String> env, int cpus, StringBuilder stdout) throws Invalid {
        String[] values = new String[FLAGS.length * 2]; // [2i]: the value, [2i+1]: its source's name
        for (int a = 0; a < args.length; a++) {
            String arg = args[a];
            if (arg.equals("--help")) {
                stdout.append(USAGE);
                return null;
            }
            if (arg.equals("--version")) {
                stdout.append("renard ").append(Main.VERSION).append('\n');
                return null;
            }
            if (!arg.startsWith("--")) {
                throw new Invalid("renard: " + quoted(arg) + ": unexpected argument (renard takes only flags; see --help)");
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            int slot = -1;
            for (int f = 0; f < FLAGS.length; f++) {
                if (FLAGS[f][0].equals(name)) slot = f;
            }
            if (slot < 0) throw new Invalid("renard: " + name + ": unknown flag (see --help)");
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (a + 1 < args.length) {
                value = args[++a];
            } else {
                throw new Invalid("renard: " + name + ": missing value");
            }
            values[2 * slot] = value;
            values[2 * slot + 1] = name;
        }
        for (int f = 0; f < FLAGS.length; f++) {
            String variable = env.apply(FLAGS[f][1]);
            if (values[2 * f] == null && variable != null && !variable.isEmpty()) {
                values[2 * f] = variable;
                values[2 * f + 1] = FLAGS[f][1];
            }
        }
        return new Config(values, cpus);
    }

    /** A parser of one value: the reason when it is refused. */
    private interface ValueParser<T> {
        T parse(String value) throws IllegalArgumentException;
    }

    private static <T> T value(int slot, String[] values, String fallback, ValueParser<T> parser) throws Invalid {
        String raw = values[2 * slot];
        if (raw == null) return parser.parse(fallback);
        try {
            return parser.parse(raw);
        } catch (IllegalArgumentException e) {
            throw new Invalid("renard: " + values[2 * slot + 1] + ": " + e.getMessage() + " (got " + quoted(raw) + ")");
        }
    }

    /** {@code s} in double quotes, with anything but printable ASCII escaped. */
    static String quoted(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c == '"' || c == '\\') out.append('\\').append((char) c);
            else if (c == '\n') out.append("\\n");
            else if (c == '\r') out.append("\\r");
            else if (c == '\t') out.append("\\t");
            else if (c >= 0x20 && c < 0x7f) out.append((char) c);
            else out.append(String.format("\\x%02x", c));
        }
        return out.append('"').toString();
    }

    /** A numeric {@code A.B.C.D:PORT} or {@code [IPv6]:PORT}; never a name lookup. */
    static InetSocketAddress parseListen(String v) {
        final String reason = "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535";
        int colon = v.lastIndexOf(':');
        if (colon < 0) throw new IllegalArgumentException(reason);
        String host = v.substring(0, colon), port = v.substring(colon + 1);
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')
                || Integer.parseInt(port) > 65535) {
            throw new IllegalArgumentException(reason);
        }
        boolean ipv6 = host.length() > 2 && host.startsWith("[") && host.endsWith("]")
                && host.substring(1, host.length() - 1).chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0)
                && host.indexOf(':') > 0;
        if (!ipv6 && !isIpv4(host)) throw new IllegalArgumentException(reason);
        try {
            InetAddress address = InetAddress.getByName(ipv6 ? host.substring(1, host.length() - 1) : host);
            return new InetSocketAddress(address, Integer.parseInt(port));
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(reason);
        }
    }

    /** Four decimal octets 0–255 without leading zeros. */
    private static boolean isIpv4(String host) {
        String[] parts = host.split("\\.", -1);
        if (parts.length != 4) return false;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9')
                    || (part.length() > 1 && part.charAt(0) == '0') || Integer.parseInt(part) > 255) {
                return false;
            }
        }
        return true;
    }

    /** A decimal integer from 1 to {@code max}, digits only. */
    static int parseInteger(String v, int max) {
        if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(c -> c >= '0' && c <= '9')
                || Integer.parseInt(v) < 1 || Integer.parseInt(v) > max) {
            throw new IllegalArgumentException("must be an integer from 1 to " + max);
        }
        return Integer.parseInt(v);
    }

    /**
     * Decimal seconds {@code DIGITS[.DIGITS]} up to 86400, in nanoseconds (a positive value
     * below a nanosecond counts as one); greater than 0 unless {@code zeroAllowed}.
     */
    static long parseSeconds(String v, boolean zeroAllowed) {
        String reason = zeroAllowed
                ? "must be a decimal number of seconds from 0 to 86400"
                : "must be a decimal number of seconds greater than 0 and at most 86400";
        int dot = v.indexOf('.');
        String whole = dot < 0 ? v : v.substring(0, dot), fraction = dot < 0 ? "" : v.substring(dot + 1);
        boolean digits = whole.chars().allMatch(c -> c >= '0' && c <= '9') && fraction.chars().allMatch(c -> c >= '0' && c <= '9');
        if (whole.isEmpty() || whole.length() > 5 || !digits || (dot >= 0 && fraction.isEmpty())) {
            throw new IllegalArgumentException(reason);
        }
        long nanos = Long.parseLong(whole) * 1_000_000_000L;
        for (int i = 0; i < 9; i++) {
            nanos += (i < fraction.length() ? fraction.charAt(i) - '0' : 0) * POWERS[8 - i];
        }
        boolean belowResolution = nanos == 0 && fraction.chars().anyMatch(c -> c != '0');
        if (belowResolution) nanos = 1;
        if ((nanos == 0 && !zeroAllowed) || nanos > 86_400_000_000_000L) throw new IllegalArgumentException(reason);
        return nanos;
    }

    private static final long[] POWERS = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000};

    /** 1 to 2048 octets in 0x21–0x7E, with {@code {n}} at least once. */
    static byte[] parseLocation(String v) {
        byte[] bytes = v.getBytes(StandardCharsets.UTF_8);
        if (bytes.length == 0 || bytes.length > 2048) throw new IllegalArgumentException("must be 1 to 2048 octets long");
        for (byte b : bytes) {
            if (b < 0x21 || b > 0x7e) {
                throw new IllegalArgumentException("must be visible ASCII only (0x21-0x7E: no space, no control octets)");
            }
        }
        if (!v.contains("{n}")) throw new IllegalArgumentException("must contain {n}");
        return bytes;
    }
}
