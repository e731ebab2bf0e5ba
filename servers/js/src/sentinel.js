// Taking the listener's queue before closing it, on a runtime whose accept never says the
// queue is empty (Deno): connections queued at the signal are open ones, which closing the
// listener would reset (SPEC §7.6). The kernel's accept queue is first in, first out, so a
// connection this process makes to its own listener, a sentinel, comes out of accept after
// every connection queued before it: once the accept loop takes a sentinel of this process,
// the queue it had at the call is taken. Nothing here waits on a timer's turn to decide it
// (a turn without an accept happened on Deno with the queue still full: its accepts yield
// to its other work, and one suite run in about 75 reset every queued connection).
//
// With reusePort (--threads N > 1) the kernel may queue a sentinel on a sibling's listener,
// which serves it as a connection that closes at once; this process then makes another,
// every ROUND_MS, until one comes out of its own queue (at most MAX_ROUNDS).

/** How long a round waits for its sentinel before making another, in ms. */
export const ROUND_MS = 50;
/** Bounds the rounds: 100 rounds of 50 ms, 5 s. The chance that N processes' kernel picks
 * another listener for 100 sentinels in a row is (1 - 1/N)^100. */
export const MAX_ROUNDS = 100;

/** The address a sentinel connects to: the listener's, or loopback for a wildcard. */
export function sentinelHost(host) {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (/^[0:]+$/u.test(host)) return "::1";
  return host;
}

export class Sentinels {
  /**
   * @param {(host: string, port: number) => Promise<{local: {hostname: string, port: number}, close: () => void}>} connect
   *   opens a TCP connection, resolving once its handshake completed (it is queued then)
   * @param {(ms: number) => Promise<void>} sleep
   */
  constructor(connect, sleep) {
    this.connect = connect;
    this.sleep = sleep;
    /** Whether takeQueue is waiting: only then does the accept loop's `taken` look. */
    this.waiting = false;
    /** "hostname port" of this round's sentinels' own ends. */
    this.mine = new Set();
    /** "hostname port" of the remote ends accepted this round: a sentinel's accept can be
     * seen before its connect resolves, which alone tells its port. */
    this.accepted = new Set();
    /** Resolves takeQueue's wait. */
    this.out = () => {};
  }

  /** Called by the accept loop with each accepted connection's remote end: true for a
   * sentinel of this process (close it then, never hand it to the hub). */
  taken(remote) {
    if (!this.waiting) return false;
    const key = `${remote.hostname} ${remote.port}`;
    if (this.mine.has(key)) {
      this.out();
      return true;
    }
    this.accepted.add(key);
    return false;
  }

  /** Resolves true once the accept loop has taken a sentinel of this process made after the
   * call; false after MAX_ROUNDS rounds, or at once if no sentinel can connect. */
  async takeQueue(host, port) {
    let seen = false;
    const out = new Promise((resolve) => {
      this.out = () => {
        seen = true;
        resolve();
      };
    });
    this.waiting = true;
    try {
      for (let round = 0; round < MAX_ROUNDS && !seen; round++) {
        this.accepted.clear();
        let sentinel;
        try {
          sentinel = await this.connect(sentinelHost(host), port);
        } catch {
          break; // nothing listens there any more: nothing is queued
        }
        sentinel.close(); // queued already: the accept loop takes it, reads its end, closes it
        const key = `${sentinel.local.hostname} ${sentinel.local.port}`;
        if (this.accepted.has(key)) this.out(); // taken already, and served as a connection
        else this.mine.add(key);
        await Promise.race([out, this.sleep(ROUND_MS)]);
      }
    } finally {
      this.waiting = false;
      this.mine.clear();
      this.accepted.clear();
    }
    return seen;
  }
}
