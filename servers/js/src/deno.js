// renard on Deno: Deno.listen (raw TCP) and the shared parser (Deno.serve imposes its own
// answers to malformed input and its own header fields: see README). One process, or with
// --threads N > 1, this one and N - 1 more started by it, each with its own listening
// socket on the same port (reusePort, behind --unstable-net: the kernel hands out the
// connections).

import { Sentinels } from "./sentinel.js";
import { capPerWorker, configure, HANDSHAKE_WAIT, listeningLine, sleep, startHub, waitForWord } from "./cli.js";

const WORKER_INDEX = "RENARD_WORKER_INDEX";
const WORKER_PORT = "RENARD_WORKER_PORT";
/** The permissions a worker is started with: the same as the first process's. */
const PERMISSIONS = ["--quiet", "--no-prompt", "--v8-flags=--max-semi-space-size=2", "--unstable-net", "--allow-net", "--allow-env", "--allow-read", "--allow-run"];
/** Octets read at once: each connection's read waits on a buffer of its own, allocated at
 * its accept, so it starts small (a request head is mostly well under 1 KiB) and grows once
 * a read fills it (pipelined batches, long heads). With 64 KiB from the accept, 5000
 * connections evicted at a cap of 50 left 22 MB of the C heap resident (found by the flake hunt). */
const READ_SIZE_FIRST = 4 * 1024;
const READ_SIZE = 64 * 1024;

const encoder = new TextEncoder();
const config = configure({
  args: Deno.args,
  env: (name) => Deno.env.get(name),
  cpus: navigator.hardwareConcurrency,
  stdout: (text) => Deno.stdout.writeSync(encoder.encode(text)),
  stderr: (text) => Deno.stderr.writeSync(encoder.encode(text)),
  exit: (status) => Deno.exit(status),
});
const workers = Math.min(config.threads, config.maxConnections);
const index = Number(Deno.env.get(WORKER_INDEX) ?? 0);
const { host } = config.listen;
const port = Number(Deno.env.get(WORKER_PORT) ?? config.listen.port);

const { hub, stopSweep } = startHub({ ...config, maxConnections: capPerWorker(config.maxConnections, workers, index) });

/** Encoded responses, when N is small: a batch is most often one response, one of a few
 * dozen strings in a second (k, the cache policy, the Connection field), and Deno's
 * TextEncoder costs more than the rest of the answer (an op and a new buffer, about 0.9 µs
 * for a 302). The cache starts anew when the Date line changes and holds at most
 * ENCODED_MOST; with a larger N a look-up would mostly miss, and is not made. */
const ENCODED_MOST = 512;
const ENCODED_LONGEST = 1024;
const cacheEncoded = config.count <= 64;
/** @type {Map<string, Uint8Array>} */
const encodedCache = new Map();
let encodedSecond = -1;

/** `ascii` as octets (never modified: they may be shared by several connections). */
function encoded(ascii) {
  if (!cacheEncoded || ascii.length > ENCODED_LONGEST) return encoder.encode(ascii);
  if (hub.responses.second !== encodedSecond) {
    encodedSecond = hub.responses.second;
    encodedCache.clear();
  }
  let octets = encodedCache.get(ascii);
  if (octets === undefined) {
    octets = encoder.encode(ascii);
    if (encodedCache.size < ENCODED_MOST) encodedCache.set(ascii, octets);
  }
  return octets;
}

/** The Transport of a Deno.Conn (see connection.js): writes are queued and written one
 * after the other; reads by a loop, which waits while the connection is paused. */
class DenoTransport {
  /** @param {Deno.TcpConn} conn */
  constructor(conn) {
    this.conn = conn;
    /** @type {Uint8Array[]} */
    this.queue = [];
    this.queued = 0;
    this.writing = false;
    /** What to do once the queue is empty: 0 nothing, 1 shut the write side, 2 close. */
    this.then = 0;
    this.closed = false;
    /** @type {(() => void) | null} resolves the read loop's wait while paused */
    this.wake = null;
    this.paused = false;
    /** @type {import("./connection.js").Connection | null} */
    this.connection = null;
    /** Settles when the read loop has returned: Deno has released the descriptor then. */
    this.readDone = Promise.resolve();
  }

  send(ascii) {
    const octets = encoded(ascii);
    this.queue.push(octets);
    this.queued += octets.length;
    if (!this.writing) this.writeQueue();
  }

  pending() {
    return this.queued;
  }

  /** Write the head of the queue; `written` goes on with the rest (a callback, not an
   * async function: one promise per write instead of two). */
  writeQueue() {
    this.writing = true;
    this.conn.write(this.queue[0]).then(this.written, this.writeFailed);
  }

  /** @param {number} count  octets of the head of the queue that the kernel took */
  written = (count) => {
    this.queued -= count;
    const octets = this.queue[0];
    if (count < octets.length) this.queue[0] = octets.subarray(count);
    else this.queue.shift();
    if (this.closed) return;
    if (this.queue.length > 0) {
      this.conn.write(this.queue[0]).then(this.written, this.writeFailed);
      return;
    }
    this.writing = false;
    this.afterSent();
    this.connection?.onDrain();
  };

  writeFailed = () => this.destroy();

  afterSent() {
    const then = this.then;
    this.then = 0;
    if (then === 1) this.conn.closeWrite().catch(() => this.destroy());
    else if (then === 2) this.destroy();
  }

  endWrite() {
    this.then = 1;
    if (!this.writing) this.afterSent();
  }

  close() {
    this.then = 2;
    if (!this.writing) this.afterSent();
  }

  destroy() {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
    this.wake?.();
    this.connection?.onClose();
  }

  pause() {
    this.paused = true;
  }

  resume() {
    this.paused = false;
    this.wake?.();
  }

  /** Read until the end of input, an error or the close, pausing when asked. */
  async readLoop() {
    let buffer = new Uint8Array(READ_SIZE_FIRST);
    while (!this.closed) {
      if (this.paused) {
        await new Promise((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      let count;
      try {
        count = await this.conn.read(buffer);
      } catch {
        this.destroy();
        return;
      }
      if (this.closed) return;
      if (count === null) {
        this.connection?.onEnd();
        return;
      }
      this.connection?.onData(buffer.subarray(0, count));
      // onData keeps a copy of what it keeps: the buffer may be replaced.
      if (count === buffer.length && buffer.length < READ_SIZE) buffer = new Uint8Array(READ_SIZE);
    }
  }
}

// The signals are handled before the listener exists (a handler runs once this module has
// run): a SIGTERM between the listen and a later registration would kill the process, and the
// kernel would reset every connection queued on its listener (SPEC §7.6; seen in Bun's worker,
// bun.js).
Deno.addSignalListener("SIGTERM", () => shutdown("SIGTERM"));
Deno.addSignalListener("SIGINT", () => shutdown("SIGINT"));

let listener;
try {
  listener = Deno.listen({ hostname: host, port, reusePort: workers > 1 });
} catch (error) {
  const shown = host.includes(":") ? `[${host}]` : host;
  Deno.stderr.writeSync(encoder.encode(`renard: --listen: cannot bind ${shown}:${port}: ${error?.message ?? error}\n`));
  Deno.exit(1);
}
const boundPort = /** @type {Deno.NetAddr} */ (listener.addr).port;

/** @type {Deno.ChildProcess[]} */
const children = [];
if (index === 0) {
  for (let i = 1; i < workers; i++) {
    children.push(new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, new URL(import.meta.url).pathname, ...Deno.args],
      env: { [WORKER_INDEX]: String(i), [WORKER_PORT]: String(boundPort) },
      stdin: "piped", // stdin and stdout: the shutdown handshake
      stdout: "piped",
    }).spawn());
  }
}

/** SIGTERM/SIGINT: stop listening, pass the signal on to every worker, drain once every
 * process has stopped listening (the handshake in cli.js), exit 0 once this process and
 * every worker are done (SPEC §7.6). */
let signalled = false;
/** In a worker: resolves when the first process says "drain", or has exited (its end of
 * the pipe closed): either way this worker drains too, never outliving it. */
const fromPrimary = index > 0 ? waitForWord(Deno.stdin.readable, "drain") : null;
fromPrimary?.then(() => shutdown("SIGTERM"));
async function shutdown(signal) {
  if (signalled) return;
  signalled = true;
  hub.hold();
  await sentinels.takeQueue(host, boundPort);
  try {
    listener.close();
  } catch {
    // already closed
  }
  // Deno releases the listening descriptor only once the pending accept has settled (a
  // connection made before that waits in the kernel's queue, then is reset): this process
  // has stopped listening when the accept loop has ended, not when close() returns.
  if (index === 0) {
    for (const child of children) {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    }
    await Promise.all([acceptEnded, ...children.map((child) => waitForWord(child.stdout, "stopped", HANDSHAKE_WAIT))]);
    for (const child of children) {
      const writer = child.stdin.getWriter();
      writer.write(encoder.encode("drain\n")).catch(() => {});
      writer.releaseLock();
    }
  } else {
    await acceptEnded;
    Deno.stdout.writeSync(encoder.encode("stopped\n"));
    await Promise.race([fromPrimary, sleep(HANDSHAKE_WAIT)]);
  }
  hub.drain(async () => {
    stopSweep();
    await Promise.all(children.map((child) => child.status));
    Deno.exit(0);
  });
}

// The first line, once the signals are handled (SPEC §1).
if (index === 0) Deno.stderr.writeSync(encoder.encode(listeningLine(host, boundPort)));

/** Connections this process makes to its own listener at the signal: see sentinel.js. */
const sentinels = new Sentinels(async (hostname, port) => {
  const conn = await Deno.connect({ hostname, port });
  const local = /** @type {Deno.NetAddr} */ (conn.localAddr);
  return { local, close: () => conn.close() };
}, sleep);

/** Settles when the accept loop has ended, after the signal closed the listener. */
const acceptEnded = acceptUntilClosed();

async function acceptUntilClosed() {
  for (;;) {
    let conn;
    try {
      conn = await listener.accept();
    } catch {
      if (signalled) return;
      continue;
    }
    if (sentinels.taken(/** @type {Deno.NetAddr} */ (conn.remoteAddr))) {
      conn.close();
      continue;
    }
    const transport = new DenoTransport(conn);
    const connection = hub.accept(transport);
    const evicted = /** @type {DenoTransport | null} */ (hub.lastEvicted);
    if (connection === null) {
      transport.closed = true;
      conn.close();
      continue;
    }
    transport.connection = connection;
    try {
      conn.setNoDelay(true);
    } catch {
      // closed already: the read loop finds out
    }
    transport.readDone = transport.readLoop();
    // Deno releases the descriptor of a closed connection only once its pending read has
    // settled: after an eviction, wait for that before the next accept, so that the
    // descriptors stay within the cap during a flood (SPEC §7.5). Only for that read: a
    // timer turn per accept at the cap (1 to 6 ms) let 50 queued slowloris reconnections
    // hold a fresh client in the kernel's accept queue for 100 ms and more.
    if (evicted !== null) await evicted.readDone;
  }
}
