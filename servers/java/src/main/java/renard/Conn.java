package renard;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One connection (SPEC §6, §7): reading, answering every complete request of a read with one
 * write, body discard, persistence, lingering close, deadlines, and its rank for eviction.
 * Methods that take an event return true to keep the connection, false to close it.
 *
 * <p>Memory contract: an idle connection holds no buffer. {@link #leftover} holds only a
 * partial head (or input set aside while the output bound is reached); {@link #unsent} only
 * what the socket did not take. Both are dropped as soon as they empty.
 */
final class Conn {
    /** Most unsent response octets held per connection (SPEC §7.5). */
    static final int OUTPUT_BOUND = 64 * 1024;
    /** Lingering close: longest wait in nanoseconds, most octets discarded (SPEC §7.4). */
    private static final long LINGER_NANOS = 2_000_000_000L;
    private static final int LINGER_BYTES = 64 * 1024;
    /** Do not read into less room than this; serve what is held first. */
    private static final int MIN_READ = 4096;

    /** Phases: reading requests; a closing response queued; write side shut, discarding. */
    private static final int OPEN = 0, CLOSING = 1, LINGERING = 2;

    /** Eviction ranks (SPEC §7.5): never, lingering, part of a head, nothing received. */
    static final int KEEP = 0, EVICT_LINGERING = 1, EVICT_PARTIAL = 2, EVICT_WAITING = 3;

    final SocketChannel channel;
    SelectionKey key;
    /** Index in the loop's connection list. */
    int index;

    private int phase = OPEN;
    /** CLOSING: the client may still be sending, so the close lingers (SPEC §7.4). */
    private boolean lingerAfter;
    private long lingerUntil;
    private int discarded;
    /** Partial head, or unserved input held while the output bound is reached; or null. */
    private byte[] leftover;
    /** Response octets the socket has not taken, {@code unsent[unsentFrom..]}; or null. */
    private byte[] unsent;
    private int unsentFrom;
    /** How far the parse of the head in {@link #leftover} has come (kept across reads). */
    private final Parser.Progress progress = new Parser.Progress();
    /** Body octets still to discard (SPEC §6). */
    private long bodyLeft;
    /** Start of the current head's deadline (nanoTime): the accept for the first request,
     *  the first octet for later ones; meaningful while {@link #headInProgress}. */
    private long headStarted;
    private boolean headInProgress = true;
    /** Last time (nanoTime) octets were received or the socket took response octets. */
    private long lastProgress;
    /** The peer has shut its write side: answer what is whole, then close. */
    private boolean peerDone;
    /** What the deadline of {@link #deadline} leads to: a 408 (true) or a silent close. */
    private boolean expiryAnswers;

    Conn(SocketChannel channel, long now) {
        this.channel = channel;
        this.headStarted = now;
        this.lastProgress = now;
    }

    /** Reading requests with nothing to send: after the drain window it goes (SPEC §7.6). */
    boolean openWithNothingToSend() {
        return phase == OPEN && unsent == null;
    }

    /** The operations to wait for: reading, unless output waits or the close is staged. */
    int interest(Loop loop) {
        if (phase == LINGERING) return SelectionKey.OP_READ;
        if (unsent == null) return phase == OPEN ? SelectionKey.OP_READ : 0;
        boolean reading = phase == OPEN && unsentLength() + loop.maxResponse <= OUTPUT_BOUND;
        return reading ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_WRITE;
    }

    private int unsentLength() {
        return unsent == null ? 0 : unsent.length - unsentFrom;
    }

    /** When the connection expires (nanoTime); what follows is {@link #expire}'s (SPEC §7.4, §7.5). */
    long deadline(Loop loop) {
        long idle = lastProgress + loop.idleTimeoutNanos;
        expiryAnswers = false;
        if (phase == LINGERING) return lingerUntil;
        if (unsent != null) return idle;
        if (headInProgress && leftover != null) {
            expiryAnswers = true;
            return headStarted + loop.headerTimeoutNanos;
        }
        if (headInProgress) return Math.min(headStarted + loop.headerTimeoutNanos, idle);
        return idle;
    }

    /** The deadline passed: close, or answer 408 and close. */
    boolean expire(Loop loop) {
        deadline(loop);
        if (!expiryAnswers) return false;
        leftover = null;
        progress.reset();
        Responses.empty(loop.out, 408, loop.date, Responses.CLOSE);
        phase = CLOSING;
        lingerAfter = true;
        return flush(loop);
    }

    /**
     * The rank for eviction at the connection cap (SPEC §7.5, §7.5.1) and, in
     * {@link #evictionKey}, the time that orders connections of one rank (earliest first).
     * Never chosen: a whole request not yet answered or octets not yet written, a body being
     * discarded, a peer that has shut its side (its answers are under way).
     */
    int evictionRank() {
        if (phase == LINGERING) return EVICT_LINGERING;
        if (phase != OPEN || unsent != null || bodyLeft > 0 || peerDone) return KEEP;
        return leftover != null ? EVICT_PARTIAL : EVICT_WAITING;
    }

    long evictionKey() {
        if (phase == LINGERING) return lingerUntil;
        return leftover != null && headInProgress ? headStarted : lastProgress;
    }

    /**
     * The drain window ended (SPEC §7.6): answer what the socket already holds (with
     * {@code Connection: close}); true while a response is under way, false to close now.
     */
    boolean endDrain(Loop loop) {
        if (phase == OPEN && unsent == null && !readRequests(loop)) return false;
        return !openWithNothingToSend();
    }

    /** The socket is readable. */
    boolean onReadable(Loop loop) {
        switch (phase) {
            case OPEN:
                return readRequests(loop);
            case LINGERING:
                return linger(loop);
            default:
                return true;
        }
    }

    /** The socket is writable. */
    boolean onWritable(Loop loop) {
        if (unsent == null) return true;
        if (!flush(loop)) return false;
        // Reading was paused while the output bound was reached: resume.
        if (phase == OPEN && unsentLength() + loop.maxResponse <= OUTPUT_BOUND) return readRequests(loop);
        return true;
    }

    /**
     * Read and answer until the socket has nothing more now, the output bound is reached, or
     * the connection is closing.
     */
    private boolean readRequests(Loop loop) {
        byte[] input = loop.input;
        while (phase == OPEN && unsentLength() + loop.maxResponse <= OUTPUT_BOUND) {
            int held = 0;
            if (leftover != null) {
                held = leftover.length;
                System.arraycopy(leftover, 0, input, 0, held);
                leftover = null;
            }
            int room = input.length - held;
            int received = 0;
            boolean drained = false;
            if (room >= MIN_READ && !peerDone) {
                ByteBuffer view = loop.inputView;
                view.clear().position(held);
                int n;
                try {
                    n = channel.read(view);
                } catch (IOException e) {
                    return false;
                }
                if (n < 0) {
                    peerDone = true;
                } else {
                    received = n;
                    drained = n < room;
                }
            }
            if (received > 0) lastProgress = loop.now;
            boolean paused = serveHeld(loop, held + received);
            if (peerDone && !paused && phase == OPEN) {
                // Every whole request is answered; a partial one never ends. The peer has
                // shut its side: nothing more can come, no need to linger.
                phase = CLOSING;
                lingerAfter = false;
                leftover = null;
            }
            if (!flush(loop)) return false;
            if (drained && !paused) break;
        }
        return true;
    }

    /**
     * Answer the requests in {@code loop.input[0, len)}, keep what is left as
     * {@link #leftover}, move the header deadline's start. True when stopped by the output bound.
     */
    private boolean serveHeld(Loop loop, int len) {
        if (len == 0) return false;
        long served = serve(loop, len);
        int consumed = (int) served;
        boolean answered = (served & ANSWERED) != 0;
        if (consumed < len && phase == OPEN) leftover = java.util.Arrays.copyOfRange(loop.input, consumed, len);
        if (answered || !headInProgress) {
            headInProgress = leftover != null;
            headStarted = loop.now;
        }
        return (served & PAUSED) != 0;
    }

    private static final long ANSWERED = 1L << 32, PAUSED = 1L << 33;

    /**
     * Answer every complete request at the start of {@code loop.input[0, len)} into
     * {@code loop.out}, discarding bodies. Returns the octets consumed, with the flags
     * ANSWERED (a request was answered) and PAUSED (stopped at the output bound; else at the
     * end, a partial head or a closing response).
     */
    private long serve(Loop loop, int len) {
        byte[] input = loop.input;
        Request req = loop.request;
        Out out = loop.out;
        int at = 0;
        long answered = 0;
        while (true) {
            if (bodyLeft > 0) {
                long skip = Math.min(bodyLeft, len - at);
                bodyLeft -= skip;
                at += (int) skip;
            }
            if (at == len || bodyLeft > 0) return at | answered;
            if (unsentLength() + out.len + loop.maxResponse > OUTPUT_BOUND) return at | answered | PAUSED;
            switch (loop.parser.parse(input, at, len, req, progress)) {
                case Parser.COMPLETE: {
                    progress.reset();
                    answered = ANSWERED;
                    at += req.headLen;
                    boolean close = loop.shuttingDown || !req.keepAlive || req.chunked || req.expectContinue;
                    int persistence = close ? Responses.CLOSE : req.http10 ? Responses.KEEP_ALIVE : Responses.KEEP_OPEN;
                    loop.answer(req, persistence);
                    if (close) {
                        // A request that asked to close, with nothing after it and no body to
                        // come, leaves the client nothing to send.
                        boolean done = !req.keepAlive && !req.chunked && req.contentLength == 0
                                && !loop.shuttingDown && at == len;
                        phase = CLOSING;
                        lingerAfter = !done;
                        return len | answered;
                    }
                    bodyLeft = req.contentLength;
                    break;
                }
                case Parser.PARTIAL:
                    return (at + req.emptyLines) | answered;
                default:
                    progress.reset();
                    Responses.empty(out, req.reject, loop.date, Responses.CLOSE);
                    phase = CLOSING;
                    lingerAfter = true;
                    return len | ANSWERED;
            }
        }
    }

    /**
     * Write {@code loop.out} (then empty) after anything unsent; keep what the socket does not
     * take. A closing connection whose output is all sent lingers or closes.
     */
    private boolean flush(Loop loop) {
        Out out = loop.out;
        try {
            if (out.len > 0) {
                if (unsent == null) {
                    int n = loop.write(channel, out.buf, 0, out.len);
                    if (n > 0) lastProgress = loop.now;
                    if (n < out.len) {
                        unsent = java.util.Arrays.copyOfRange(out.buf, n, out.len);
                        unsentFrom = 0;
                    }
                } else {
                    byte[] joined = java.util.Arrays.copyOfRange(unsent, unsentFrom, unsent.length + out.len);
                    System.arraycopy(out.buf, 0, joined, unsent.length - unsentFrom, out.len);
                    unsent = joined;
                    unsentFrom = 0;
                }
                out.len = 0;
            } else if (unsent != null) {
                int n = loop.write(channel, unsent, unsentFrom, unsent.length - unsentFrom);
                if (n > 0) {
                    lastProgress = loop.now;
                    unsentFrom += n;
                    if (unsentFrom == unsent.length) unsent = null;
                }
            }
        } catch (IOException e) {
            out.len = 0;
            return false;
        }
        if (phase == CLOSING && unsent == null) {
            if (!lingerAfter) return false;
            try {
                channel.shutdownOutput();
            } catch (IOException e) {
                return false;
            }
            leftover = null;
            phase = LINGERING;
            lingerUntil = loop.now + LINGER_NANOS;
            discarded = 0;
            return linger(loop);
        }
        return true;
    }

    /** Discard input after the write side is shut, until EOF, LINGER_BYTES or an error. */
    private boolean linger(Loop loop) {
        ByteBuffer view = loop.inputView;
        while (true) {
            view.clear();
            int n;
            try {
                n = channel.read(view);
            } catch (IOException e) {
                return false;
            }
            if (n < 0) return false;
            if (n == 0) return true;
            discarded += n;
            if (discarded >= LINGER_BYTES) return false;
        }
    }
}
