package renard;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One thread's event loop (SPEC §7.5, §7.6): a selector over its own SO_REUSEPORT listener
 * and its connections. The only state shared between loops is the count of open connections
 * (for the cap) and, for the drain, the count of listeners still open. Deadlines need no
 * timer wheel: each connection computes its one deadline from its state, the loop keeps the
 * earliest, and when it passes it sweeps its connections once.
 * Everything a connection uses while it is served (buffers, parser, clock) is the loop's.
 */
final class Loop implements Runnable {
    /** Read buffer, in octets: larger than the largest head (about 24.6 KiB). */
    private static final int INPUT_BUFFER = 128 * 1024;
    /** How long responses already begun may take after the drain window (SPEC §7.6: + 1 s). */
    private static final long FINISH_NANOS = 500_000_000L;
    /**
     * Longest wait, when the drain begins, for the other loops to close their listeners (ns):
     * a loop the machine does not run for that long does not hold back the others' drain.
     * Measured beside the flake campaign's busy loops and tests (20 drains, --threads 2, 8
     * keep-alive clients): the last listener closed at most 9.7 ms after the first (read
     * every few ms; both at most 149 ms after the signal, the hook's start), a margin of 24
     * times that.
     */
    static final long LISTENERS_WAIT_NANOS = 250_000_000L;
    /** LISTENERS_WAIT_NANOS, but for tests that need a longer wait to observe it. */
    long listenersWaitNanos = LISTENERS_WAIT_NANOS;

    // The connection's environment while it is served.
    final byte[] input = new byte[INPUT_BUFFER];
    final ByteBuffer inputView = ByteBuffer.wrap(input);
    final Out out = new Out(Conn.OUTPUT_BOUND + 4096);
    final Parser parser = new Parser();
    final Request request = new Request();
    final DateLine date = new DateLine(System.currentTimeMillis());
    /** nanoTime of the current wake. */
    long now = System.nanoTime();
    final long headerTimeoutNanos, idleTimeoutNanos;
    final int maxResponse;
    /** SIGTERM/SIGINT seen: every response closes. */
    boolean shuttingDown;

    private final Config config;
    private final Responses responses;
    private final SplittableRandom random;
    private final AtomicInteger open;
    /** Counted down by each loop once its listener's descriptor is released (SPEC §7.6). */
    private final CountDownLatch listenersOpen;
    private final Selector selector;
    private ServerSocketChannel listener;
    private ArrayList<Conn> conns = new ArrayList<>();
    private ByteBuffer writeView = ByteBuffer.wrap(new byte[0]);
    /** No connection's deadline is before this (nanoTime); Long.MAX_VALUE: none. */
    private long nextScan = Long.MAX_VALUE;
    private volatile boolean stopRequested;
    /** nanoTime of the signal: the drain window counts from it. Written before stopRequested. */
    private long signalAt;
    private long drainEnd, finishEnd;
    private boolean windowOver;
    /**
     * Registered channels closed since the selection began: NIO releases their descriptors
     * only when the next selection deregisters them, so accepting stops for this round when
     * a few are pending (a flood that evicts cannot pile up descriptors beyond the cap).
     */
    private int closesPending;
    private static final int MAX_CLOSES_PENDING = 4;

    /**
     * @param listenersOpen shared by every loop of the process, counting their listeners (one
     *     each): a loop's drain answers nothing until it reaches zero (or LISTENERS_WAIT_NANOS)
     */
    Loop(Config config, Responses responses, ServerSocketChannel listener, AtomicInteger open,
            CountDownLatch listenersOpen, long seed) throws IOException {
        this.config = config;
        this.responses = responses;
        this.listener = listener;
        this.open = open;
        this.listenersOpen = listenersOpen;
        this.random = new SplittableRandom(seed);
        this.headerTimeoutNanos = config.headerTimeoutNanos;
        this.idleTimeoutNanos = config.idleTimeoutNanos;
        this.maxResponse = responses.maxResponse;
        this.selector = Selector.open();
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
    }

    /** Begin the drain (SPEC §7.6); called from the signal's thread with the signal's nanoTime. */
    void requestStop(long signalNanos) {
        signalAt = signalNanos;
        stopRequested = true;
        selector.wakeup();
    }

    @Override
    public void run() {
        try {
            serve();
        } catch (IOException e) {
            System.err.println("renard: event loop: " + e.getMessage());
        } finally {
            for (Conn conn : new ArrayList<>(conns)) close(conn);
            // NIO closes a registered channel's descriptor only when a selection deregisters
            // its key: closing the selector does it for every connection (and for the listener
            // of a loop that failed before its drain).
            if (listener != null) closeQuietly(listener);
            closeQuietly(selector);
            if (listener != null) listenersOpen.countDown(); // a failed loop holds back no drain
        }
    }

    private void serve() throws IOException {
        while (true) {
            closesPending = 0; // the selection below releases their descriptors first
            long wake = Math.min(nextScan, shuttingDown ? (windowOver ? finishEnd : drainEnd) : Long.MAX_VALUE);
            if (wake == Long.MAX_VALUE) {
                selector.select(this::onEvent);
            } else {
                long millis = Math.max(0, wake - System.nanoTime()) / 1_000_000 + 1;
                selector.select(this::onEvent, millis);
            }
            now = System.nanoTime();
            if (stopRequested && !shuttingDown) beginDrain();
            if (nextScan <= now) nextScan = expire();
            if (shuttingDown) {
                if (!windowOver && now >= drainEnd) endWindow();
                if (conns.isEmpty() || (windowOver && now >= finishEnd)) return;
            }
        }
    }

    private void onEvent(SelectionKey key) {
        // The signal may come while a selection's events are handled: the rest of them are left
        // to the selection after the drain began (the selector is level-triggered: they are
        // reported again), so that nothing read after the signal is answered keep-alive, and
        // nothing is answered before every loop has stopped listening.
        if (stopRequested && !shuttingDown) return;
        now = System.nanoTime();
        date.update(System.currentTimeMillis());
        Object attachment = key.attachment();
        if (attachment == null) {
            acceptAll();
            return;
        }
        Conn conn = (Conn) attachment;
        boolean keep = true;
        int ready;
        try {
            ready = key.readyOps();
        } catch (java.nio.channels.CancelledKeyException e) {
            return;
        }
        try {
            if ((ready & SelectionKey.OP_WRITE) != 0) keep = conn.onWritable(this);
            if (keep && (ready & SelectionKey.OP_READ) != 0) keep = conn.onReadable(this);
        } catch (OutOfMemoryError e) {
            // The heap (-Xmx) cannot hold this connection's partial head or unsent output:
            // it goes, the others stay served.
            out.len = 0;
            keep = false;
        }
        if (keep && windowOver && conn.openWithNothingToSend()) keep = false;
        if (keep) {
            settle(conn);
        } else {
            close(conn);
        }
    }

    /** After an event: wait for what the connection needs; note its deadline. */
    private void settle(Conn conn) {
        int interest = conn.interest(this);
        if (conn.key.interestOps() != interest) conn.key.interestOps(interest);
        nextScan = Math.min(nextScan, conn.deadline(this));
    }

    /** Accept every pending connection; at the cap, make room by eviction or close the new one. */
    private void acceptAll() {
        acceptAll(true);
    }

    /**
     * Ditto; readAtOnce false leaves each new connection's first read to the selection (the
     * drain's: nothing is answered before every loop has stopped listening).
     */
    private void acceptAll(boolean readAtOnce) {
        while (listener != null && closesPending < MAX_CLOSES_PENDING) {
            SocketChannel channel;
            try {
                channel = listener.accept();
            } catch (IOException e) {
                return; // out of descriptors, or the like: wait for the next event
            }
            if (channel == null) return;
            if (open.incrementAndGet() > config.maxConnections) {
                Conn victim = evictionVictim();
                if (victim == null) {
                    open.decrementAndGet();
                    closeQuietly(channel);
                    continue;
                }
                close(victim); // gives back the slot that the new connection has counted
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
                Conn conn = new Conn(channel, now);
                conn.key = channel.register(selector, SelectionKey.OP_READ, conn);
                conn.index = conns.size();
                conns.add(conn);
                // Read at once: a client's request is usually there already, and a connection
                // whose request is answered is not the one the next arrival at the cap evicts.
                if (!readAtOnce || conn.onReadable(this)) {
                    settle(conn);
                } else {
                    close(conn);
                }
            } catch (IOException e) {
                open.decrementAndGet();
                closeQuietly(channel);
            }
        }
    }

    /**
     * The connection least likely to be a real client (SPEC §7.5, §7.5.1): one in lingering
     * close; else the partial head that began earliest; else the one that has waited longest
     * with nothing received. Null when every connection has a request or output in flight.
     */
    private Conn evictionVictim() {
        Conn best = null;
        int bestRank = Conn.KEEP;
        long bestKey = 0;
        for (Conn conn : conns) {
            int rank = conn.evictionRank();
            if (rank == Conn.KEEP || (best != null && rank > bestRank)) continue;
            long key = conn.evictionKey();
            if (best == null || rank < bestRank || key - bestKey < 0) {
                best = conn;
                bestRank = rank;
                bestKey = key;
            }
        }
        return best;
    }

    /** Apply every passed deadline; return the earliest deadline left. */
    private long expire() {
        long earliest = Long.MAX_VALUE;
        for (int i = conns.size() - 1; i >= 0; i--) {
            Conn conn = conns.get(i);
            boolean keep = conn.deadline(this) > now || conn.expire(this);
            if (keep) {
                settle(conn);
                earliest = Math.min(earliest, conn.deadline(this));
            } else {
                close(conn);
            }
        }
        return earliest;
    }

    /**
     * SIGTERM/SIGINT: stop listening; serve for min(drain, header timeout) from the signal
     * (SPEC §7.6). In an order that keeps "a new connection is refused" true across loops:
     * this loop releases its listener's descriptor, then waits until every loop has released
     * its own (at most LISTENERS_WAIT_NANOS) before it answers anything, so that a client
     * told to close cannot reconnect to a loop that has not seen the signal yet.
     * Called between selections: it closes no connection (but one evicted at the cap while
     * taking the queue).
     */
    private void beginDrain() throws IOException {
        if (listener != null) {
            // What the kernel queued on the listener is open already: closing the listener
            // would reset it. Accepted here and read by the next selections, in the drain.
            closesPending = 0; // the queue is bounded by the backlog (4096): so are these closes
            acceptAll(false);
            closeQuietly(listener);
            listener = null;
            // The descriptor goes when a selection deregisters the key; what this one
            // reports is reported again by the next (level-triggered), and handled then.
            selector.selectNow(ignored -> {});
            listenersOpen.countDown();
        }
        try {
            listenersOpen.await(listenersWaitNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // Nothing interrupts a loop; the drain would go on without the wait (not marking
            // the thread again: an interrupted thread's selections return at once).
        }
        now = System.nanoTime();
        date.update(System.currentTimeMillis());
        shuttingDown = true;
        drainEnd = signalAt + Math.min(config.drainTimeoutNanos, config.headerTimeoutNanos);
        finishEnd = drainEnd + FINISH_NANOS; // serve() ends the window when it has passed
    }

    /** The drain window is over: close every connection that is not finishing a response. */
    private void endWindow() {
        windowOver = true;
        for (int i = conns.size() - 1; i >= 0; i--) {
            Conn conn = conns.get(i);
            if (conn.endDrain(this)) {
                settle(conn);
            } else {
                close(conn);
            }
        }
    }

    /** Close the connection's socket and forget it; the slot returns to the cap. */
    private void close(Conn conn) {
        conn.key.cancel();
        closeQuietly(conn.channel);
        closesPending++;
        int last = conns.size() - 1;
        Conn moved = conns.get(last);
        conns.set(conn.index, moved);
        moved.index = conn.index;
        conns.remove(last);
        open.decrementAndGet();
        if (conns.isEmpty() && last > 64) conns = new ArrayList<>(); // memory back to its baseline
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // Nothing to do: the descriptor is released either way.
        }
    }

    /** Append the answer to a complete, valid request to {@link #out}. */
    void answer(Request req, int persistence) {
        switch (req.route) {
            case Request.REDIRECT: {
                int k = req.seeded ? Seed.k(req.seedHash, config.count)
                        : (int) Long.remainderUnsigned(random.nextLong(), config.count) + 1;
                responses.redirect(out, k, req.seeded, date, persistence);
                break;
            }
            case Request.HEALTH:
                Responses.health(out, req.headMethod, date, persistence);
                break;
            case Request.NOT_FOUND:
                Responses.empty(out, 404, date, persistence);
                break;
            default:
                Responses.empty(out, 405, date, persistence);
        }
    }

    /** Write as much of {@code bytes[from, from+len)} as the socket takes now. */
    int write(SocketChannel channel, byte[] bytes, int from, int len) throws IOException {
        if (writeView.array() != bytes) writeView = ByteBuffer.wrap(bytes);
        writeView.limit(from + len).position(from);
        int written = 0;
        while (writeView.hasRemaining()) {
            int n = channel.write(writeView);
            if (n == 0) break;
            written += n;
        }
        return written;
    }
}
