package renard;

import java.io.FileInputStream;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * renard: answers {@code GET /} with a 302 to a random avatar (spec/SPEC.md).
 *
 * <p>{@code main} reads as the story: configuration, listeners, one event loop per thread,
 * and on SIGTERM/SIGINT a drain that ends the process with status 0 (SPEC §7.6).
 */
public final class Main {
    static final String VERSION = "0.1.0";
    /** Stack of each event loop's thread, in bytes: the loop is shallow. */
    private static final long LOOP_STACK = 256 * 1024;

    private static volatile boolean stopping;

    private Main() {}

    public static void main(String[] args) {
        StringBuilder stdout = new StringBuilder();
        Config config;
        try {
            config = Config.parse(args, System::getenv, Runtime.getRuntime().availableProcessors(), stdout);
        } catch (Config.Invalid e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        if (config == null) { // --help or --version
            System.out.print(stdout);
            System.out.flush();
            System.exit(0);
            return;
        }

        // One SO_REUSEPORT listener per thread, all on the port the first one got.
        ServerSocketChannel[] listeners = new ServerSocketChannel[config.threads];
        InetSocketAddress address = config.listen;
        for (int t = 0; t < config.threads; t++) {
            try {
                listeners[t] = bind(address);
                if (t == 0) address = (InetSocketAddress) listeners[0].getLocalAddress();
            } catch (IOException e) {
                System.err.println("renard: --listen: cannot bind " + format(address) + ": " + e.getMessage());
                System.exit(1);
                return;
            }
        }

        Responses responses = new Responses(config.location, config.count);
        AtomicInteger open = new AtomicInteger();
        CountDownLatch listenersOpen = new CountDownLatch(config.threads);
        ByteBuffer seeds = entropy(8 * config.threads);
        Loop[] loops = new Loop[config.threads];
        Thread[] threads = new Thread[config.threads];
        try {
            for (int t = 0; t < config.threads; t++) {
                loops[t] = new Loop(config, responses, listeners[t], open, listenersOpen, seeds.getLong());
                threads[t] = new Thread(null, loops[t], "renard-loop-" + t, LOOP_STACK);
            }
        } catch (IOException e) {
            System.err.println("renard: selector: " + e.getMessage());
            System.exit(1);
            return;
        }

        // SIGTERM/SIGINT run the shutdown hooks: drain every loop, then exit 0 (SPEC §7.6).
        long drainNanos = Math.min(config.drainTimeoutNanos, config.headerTimeoutNanos);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            long signalAt = System.nanoTime();
            stopping = true;
            for (Loop loop : loops) loop.requestStop(signalAt);
            long deadline = System.nanoTime() + drainNanos + 950_000_000L;
            for (Thread thread : threads) {
                try {
                    thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    break;
                }
            }
            Runtime.getRuntime().halt(0);
        }, "renard-drain"));

        System.err.println("listening on http://" + format(address));
        for (Thread thread : threads) thread.start();
        for (Thread thread : threads) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (!stopping) System.exit(1); // a loop failed without a signal
    }

    /** A non-blocking listener on {@code address} with SO_REUSEPORT, so that every loop can bind one. */
    static ServerSocketChannel bind(InetSocketAddress address) throws IOException {
        boolean ipv6 = address.getAddress() instanceof Inet6Address;
        ServerSocketChannel channel = ServerSocketChannel.open(ipv6 ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.setOption(StandardSocketOptions.SO_REUSEPORT, true);
            channel.bind(address, 4096);
            return channel;
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    /** {@code n} octets from the operating system's entropy (SPEC §3). */
    private static ByteBuffer entropy(int n) {
        byte[] bytes = new byte[n];
        try (FileInputStream random = new FileInputStream("/dev/urandom")) {
            if (random.readNBytes(bytes, 0, n) != n) throw new IOException("short read");
        } catch (IOException e) {
            new java.security.SecureRandom().nextBytes(bytes);
        }
        return ByteBuffer.wrap(bytes);
    }

    /** {@code A.B.C.D:PORT}, or {@code [IPv6]:PORT} in RFC 5952 form. */
    static String format(InetSocketAddress address) {
        byte[] raw = address.getAddress().getAddress();
        if (raw.length == 4) return address.getAddress().getHostAddress() + ":" + address.getPort();
        int[] groups = new int[8];
        for (int g = 0; g < 8; g++) groups[g] = (raw[2 * g] & 0xff) << 8 | (raw[2 * g + 1] & 0xff);
        // The longest run of two or more zero groups (the first of equals) becomes "::".
        int bestStart = -1, bestLength = 1;
        for (int g = 0; g < 8; ) {
            int end = g;
            while (end < 8 && groups[end] == 0) end++;
            if (end - g > bestLength) {
                bestStart = g;
                bestLength = end - g;
            }
            g = end == g ? g + 1 : end;
        }
        StringBuilder text = new StringBuilder("[");
        for (int g = 0; g < 8; g++) {
            if (g == bestStart) {
                text.append("::");
                g += bestLength - 1;
                continue;
            }
            if (text.length() > 1 && text.charAt(text.length() - 1) != ':') text.append(':');
            text.append(Integer.toHexString(groups[g]));
        }
        return text.append("]:").append(address.getPort()).toString();
    }
}
