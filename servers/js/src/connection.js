// Connections (SPEC §6, §7), independent of the runtime: each adapter wraps its socket
// in a Transport and reports what happens to it; the Connection decides what to answer,
// when to stop reading, to close, to linger, to time out, and the Hub holds them all:
// the connection cap with eviction (§7.5, §7.5.1), the deadlines, the drain (§7.6).

import { COMPLETE, PARTIAL, REDIRECT, HEALTH, NOT_FOUND, parse } from "./request.js";
import { CLOSE, KEEP_ALIVE, KEEP_OPEN } from "./response.js";

/** Most unsent response octets held per connection (SPEC §7.5). */
export const OUTPUT_BOUND = 64 * 1024;
/** Lingering close: longest wait in ms, most octets discarded (SPEC §7.4). */
const LINGER_TIME = 2000;
const LINGER_BYTES = 64 * 1024;
/** How often deadlines are checked, in ms: they fire up to this late, never early. */
export const SWEEP_INTERVAL = 250;
/** After the drain window, how long responses already begun may take, in ms (SPEC §7.6). */
const FINISH_GRACE = 900;

/**
 * What an adapter gives a Connection: its socket, in the runtime's own terms.
 * @typedef {object} Transport
 * @property {(ascii: string) => void} send  queue these octets after any unsent ones
 * @property {() => number} pending   response octets the kernel has not taken yet
 * @property {() => void} endWrite    after the queued octets, shut the write side (FIN); reading goes on
 * @property {() => void} close       after the queued octets, close the socket
 * @property {() => void} destroy     close the socket now
 * @property {() => void} pause       stop reading
 * @property {() => void} resume      read again
 */

const OPEN = 0; // reading requests
const LINGERING = 1; // a closing response is queued and the write side shut: discarding input
const CLOSED = 2; // closed, or closing once the queued octets are sent

/** Every connection of one process, and the configuration they share. */
export class Hub {
  /**
   * @param {import("./config.js").Config} config
   * @param {import("./response.js").Responses} responses
   * @param {() => number} clock  a monotonic clock in ms (performance.now)
   */
  constructor(config, responses, clock) {
    this.config = config;
    this.responses = responses;
    this.clock = clock;
    /** @type {Set<Connection>} */
    this.connections = new Set();
    /** SIGTERM or SIGINT seen: every response closes (SPEC §7.6). */
    this.shuttingDown = false;
    /** The signal is seen and the listener closed, but the drain has not begun (the worker
     * processes' handshake, cli.js): requests are read and held, none answered, until
     * drain() answers them with `Connection: close`. No answer after the signal lacks it,
     * and no client is told to close while a sibling still listens (SPEC §7.6). */
    this.holding = false;
    /** The drain window is over: a connection accepted now is closed at once. */
    this.windowOver = false;
    /** Called once every connection is gone after the drain began. */
    this.onDrained = () => {};
    this.random = new RandomDraws();
    /** @type {ReturnType<typeof setTimeout>[]} */
    this.drainTimers = [];
    /** The transport that the last accept() evicted to make room, or null. */
    this.lastEvicted = null;
  }

  /**
   * A new connection: make room at the cap by evicting the open connection least likely
   * to be a client (SPEC §7.5); null when none can be chosen: the caller closes the new
   * one at once, without reading. After the signal, a connection the listener had queued
   * is an open one (SPEC §7.6): held, then served with `Connection: close`, until the
   * drain window is over.
   * @param {Transport} transport
   * @returns {Connection | null}
   */
  accept(transport) {
    this.lastEvicted = null;
    if (this.windowOver) return null;
    if (this.connections.size >= this.config.maxConnections) {
      const victim = this.evictionCandidate();
      if (victim === null) return null;
      victim.destroy();
      this.lastEvicted = victim.transport;
    }
    const connection = new Connection(this, transport, this.clock());
    this.connections.add(connection);
    return connection;
  }

  /** SPEC §7.5 order: a lingering close; else the partial head that began earliest; else
   * the connection that has waited longest with nothing received. Never one with a
   * complete request not yet answered or with response octets not yet written. */
  evictionCandidate() {
    let best = null;
    let bestRank = 4;
    let bestSince = Infinity;
    for (const c of this.connections) {
      if (c.transport.pending() > 0 || c.paused) continue;
      let rank;
      let since;
      if (c.phase === LINGERING) return c;
      if (c.phase !== OPEN) continue;
      if (c.leftover !== null) {
        rank = 2;
        since = c.headStarted;
      } else {
        rank = 3;
        since = c.lastProgress;
      }
      if (rank < bestRank || (rank === bestRank && since < bestSince)) {
        best = c;
        bestRank = rank;
        bestSince = since;
      }
    }
    return best;
  }

  /** Check every deadline (call every SWEEP_INTERVAL ms); none fires while requests are
   * held (at most the handshake's HANDSHAKE_WAIT ms): a held request is answered. */
  sweep() {
    if (this.holding) return;
    const now = this.clock();
    for (const c of this.connections) c.checkDeadline(now);
  }

  /** SIGTERM/SIGINT seen, the listening socket closed: hold every request until drain(). */
  hold() {
    if (!this.shuttingDown) this.holding = true;
  }

  /**
   * Drain on SIGTERM/SIGINT (SPEC §7.6); the caller has closed its listening sockets.
   * Requests held since hold() are answered now, with `Connection: close`.
   * `onDrained` runs once no connection is left, at the latest when the window and the
   * grace for responses already begun have passed.
   */
  drain(onDrained) {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.holding = false;
    this.onDrained = onDrained;
    for (const c of [...this.connections]) c.release();
    const window = Math.min(this.config.drainTimeout, this.config.headerTimeout);
    const closeWaiting = () => {
      this.windowOver = true;
      for (const c of this.connections) if (c.hasNoRequest()) c.destroy();
      this.checkDrained();
    };
    // Timers that keep the process alive: Bun lets a process whose listener is stopped
    // exit with its connections still open. Cleared when the drain is done.
    this.drainTimers = [setTimeout(() => this.finish(), window + FINISH_GRACE)];
    if (window === 0) closeWaiting();
    else this.drainTimers.push(setTimeout(closeWaiting, window));
    this.checkDrained();
  }

  /** A connection is gone. */
  remove(connection) {
    this.connections.delete(connection);
    if (this.shuttingDown) this.checkDrained();
  }

  checkDrained() {
    if (this.connections.size === 0) this.finish();
  }

  finish() {
    for (const timer of this.drainTimers) clearTimeout(timer);
    const done = this.onDrained;
    this.onDrained = () => {};
    done();
  }
}

/** Uniform draws of k in 1..N from the operating system's entropy (SPEC §3): a 64-bit
 * draw reduced modulo N (bias below 2^-44 for N ≤ 10^6). */
class RandomDraws {
  constructor() {
    this.pool = new Uint32Array(2048);
    this.at = this.pool.length;
  }

  /** k in 1..n. */
  pick(n) {
    if (this.at === this.pool.length) {
      crypto.getRandomValues(this.pool);
      this.at = 0;
    }
    const hi = this.pool[this.at++];
    const lo = this.pool[this.at++];
    return ((hi % n) * (0x1_0000_0000 % n) + lo) % n + 1;
  }
}

/** One client connection. */
export class Connection {
  /**
   * @param {Hub} hub
   * @param {Transport} transport
   * @param {number} now  the accept, in ms
   */
  constructor(hub, transport, now) {
    this.hub = hub;
    this.transport = transport;
    this.phase = OPEN;
    /** @type {Uint8Array | null} a partial head, or input held while output is at its bound */
    this.leftover = null;
    /** Body octets still to discard (SPEC §6). */
    this.bodyLeft = 0;
    /** Start of the head deadline: the accept for the first request, the first octet for
     * later ones; null when no head is in progress (SPEC §7.5). */
    this.headStarted = now;
    /** Last time octets were received or the kernel took response octets. */
    this.lastProgress = now;
    /** Unsent octets at the last check (progress is seen as this falling). */
    this.lastPending = 0;
    /** Reading stopped at the output bound; `leftover` holds whole requests. */
    this.paused = false;
    /** Reading stopped while the hub holds requests (Hub.hold); `leftover` keeps the input. */
    this.held = false;
    /** The peer shut its write side: answer what is whole, then close. */
    this.peerDone = false;
    /** Lingering: when to stop, and octets discarded so far (SPEC §7.4). */
    this.lingerUntil = 0;
    this.discarded = 0;
    /** Removed from the hub. */
    this.left = false;
  }

  /** Octets arrived. */
  onData(chunk) {
    if (this.phase === LINGERING) {
      this.discarded += chunk.length;
      if (this.discarded >= LINGER_BYTES) this.destroy();
      return;
    }
    if (this.phase !== OPEN) return;
    this.lastProgress = this.hub.clock();
    const input = this.leftover === null ? chunk : concat(this.leftover, chunk);
    this.leftover = null;
    // The adapter may reuse `chunk` for its next read: what is kept is a copy.
    if (this.paused || this.hub.holding) {
      this.leftover = input === chunk ? chunk.slice() : input;
      if (this.hub.holding && !this.held) {
        this.held = true;
        if (!this.paused) this.transport.pause();
      }
    } else this.serve(input);
  }

  /** The peer shut its write side (FIN). */
  onEnd() {
    this.peerDone = true;
    if (this.phase === LINGERING) this.destroy();
    else if (this.phase === OPEN && !this.paused && !this.held) this.closeAfterWhole();
  }

  /** The kernel took every queued octet: resume reading if output was at its bound. */
  onDrain() {
    this.lastProgress = this.hub.clock();
    if (this.phase !== OPEN || !this.paused) return;
    this.paused = false;
    if (this.hub.holding) {
      this.held = true; // release() reads again
      return;
    }
    this.transport.resume();
    const held = this.leftover;
    this.leftover = null;
    if (held !== null) this.serve(held);
    if (this.peerDone && !this.paused && this.phase === OPEN) this.closeAfterWhole();
  }

  /** The drain began: read again and answer what was held (with `Connection: close`). */
  release() {
    if (!this.held) return;
    this.held = false;
    if (this.phase !== OPEN || this.paused) return; // paused: onDrain reads again
    this.transport.resume();
    const input = this.leftover;
    this.leftover = null;
    if (input !== null) this.serve(input);
    if (this.peerDone && !this.paused && this.phase === OPEN) this.closeAfterWhole();
  }

  /** The socket is gone, for whatever reason. */
  onClose() {
    this.phase = CLOSED;
    this.leave();
  }

  /** No longer counted against the cap (once). */
  leave() {
    if (this.left) return;
    this.left = true;
    this.hub.remove(this);
  }

  /** Every whole request is answered; a partial one can never end: close (SPEC §7.4). */
  closeAfterWhole() {
    this.leftover = null;
    this.phase = CLOSED;
    this.transport.close();
  }

  /** Close now. The connection stops counting against the cap at once: a runtime may
   * report the close later (Bun after its end()), and the slot is free already. */
  destroy() {
    this.phase = CLOSED;
    this.transport.destroy();
    this.leave();
  }

  /** No request in progress or unanswered, nothing to send (closed when a drain window ends). */
  hasNoRequest() {
    return (this.phase === OPEN && !this.paused && this.transport.pending() === 0) ||
      (this.phase === LINGERING && this.transport.pending() === 0);
  }

  /**
   * Answer every complete request in `input`, one write per batch; keep a partial head
   * as `leftover`; stop reading while the unsent output is at its bound (SPEC §7.5).
   * @param {Uint8Array} input
   */
  serve(input) {
    for (;;) {
      this.serveBatch(input);
      if (!this.paused || this.phase !== OPEN) return;
      if (this.transport.pending() + this.hub.responses.maxLength > OUTPUT_BOUND) {
        this.transport.pause(); // until onDrain
        return;
      }
      // The kernel took the batch at once: go on with what is held.
      this.paused = false;
      const held = this.leftover;
      this.leftover = null;
      if (held === null) return;
      input = held;
    }
  }

  /**
   * Answer the complete requests at the start of `input`, discarding bodies, until the
   * output bound, into one write; keep the rest as `leftover`.
   * @param {Uint8Array} input
   */
  serveBatch(input) {
    const hub = this.hub;
    const responses = hub.responses;
    const length = input.length;
    const pending = this.transport.pending();
    let at = 0;
    let answered = false;
    let out = "";
    let closing = 0; // 0: stays open; 1: close at once; 2: linger
    responses.tick();
    for (;;) {
      if (this.bodyLeft > 0) {
        const skip = Math.min(this.bodyLeft, length - at);
        this.bodyLeft -= skip;
        at += skip;
      }
      if (at === length || this.bodyLeft > 0) break;
      if (pending + out.length + responses.maxLength > OUTPUT_BOUND) {
        this.paused = true;
        break;
      }
      const request = parse(input, at, length);
      if (request.outcome === PARTIAL) {
        at = request.end;
        break;
      }
      answered = true;
      if (request.outcome !== COMPLETE) {
        out += responses.empty(request.status, CLOSE);
        closing = 2;
        break;
      }
      at = request.end;
      const close = hub.shuttingDown || !request.keepAlive || request.chunked || request.expectContinue;
      const persistence = close ? CLOSE : request.http10 ? KEEP_ALIVE : KEEP_OPEN;
      const { route, headMethod } = request;
      if (route === REDIRECT) {
        const seed = request.seed;
        const k = seed === null ? hub.random.pick(hub.config.count) : seed.pick(hub.config.count);
        out += responses.redirect(k, seed !== null, headMethod, persistence);
      } else if (route === HEALTH) {
        out += responses.health(headMethod, persistence);
      } else {
        out += responses.empty(route === NOT_FOUND ? 404 : 405, persistence);
      }
      if (close) {
        // A request that asked to close, with no body and nothing after it, leaves the
        // client nothing to send: close at once; else linger (SPEC §7.4).
        const done = !request.keepAlive && !request.chunked && request.contentLength === 0 && at === length;
        closing = done ? 1 : 2;
        break;
      }
      this.bodyLeft = request.contentLength;
    }
    if (closing === 0 && at < length) this.leftover = input.subarray(at, length).slice();
    if (answered || this.headStarted === null) {
      this.headStarted = this.leftover !== null ? hub.clock() : null;
    }
    if (out.length > 0) this.transport.send(out);
    if (closing === 1) {
      this.phase = CLOSED;
      this.transport.close();
    } else if (closing === 2) {
      this.startLingering();
    }
  }

  /** Shut the write side after the closing response, discard input for a while (§7.4). */
  startLingering() {
    this.leftover = null;
    this.phase = LINGERING;
    this.lingerUntil = this.hub.clock() + LINGER_TIME;
    this.discarded = 0;
    this.transport.endWrite();
  }

  /** Close, or answer 408 and close, when a deadline has passed (SPEC §7.4, §7.5). */
  checkDeadline(now) {
    const { headerTimeout, idleTimeout } = this.hub.config;
    const pending = this.transport.pending();
    if (pending !== this.lastPending) {
      if (pending < this.lastPending) this.lastProgress = now;
      this.lastPending = pending;
    }
    if (pending > 0) {
      // A response makes no progress: the idle timeout bounds it, whatever the phase.
      if (this.phase === LINGERING) this.lingerUntil = now + LINGER_TIME;
      if (now - this.lastProgress >= idleTimeout) this.destroy();
      return;
    }
    if (this.phase === LINGERING) {
      if (now >= this.lingerUntil) this.destroy();
      return;
    }
    if (this.phase !== OPEN) return;
    const started = this.headStarted;
    if (started !== null && this.leftover !== null) {
      if (now - started >= headerTimeout) {
        this.leftover = null;
        this.hub.responses.tick();
        this.transport.send(this.hub.responses.empty(408, CLOSE));
        this.startLingering();
      }
    } else if ((started !== null && now - started >= headerTimeout) || now - this.lastProgress >= idleTimeout) {
      this.destroy();
    }
  }
}

/** `a` then `b` in one new array. */
function concat(a, b) {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}
