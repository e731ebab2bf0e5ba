// renard on Bun: Bun.listen (raw TCP) and the shared parser (Bun.serve imposes its own
// answers to malformed input and its own header fields: see README). One process, or with
// --threads N > 1, this one and N - 1 more started by it, each with its own listening
// socket on the same port (reusePort: the kernel hands out the connections).

import { openQueueReader } from "./backlog.js";
import { acceptQueued, capPerWorker, configure, HANDSHAKE_WAIT, listeningLine, sleep, startHub, waitForWord } from "./cli.js";

const WORKER_INDEX = "RENARD_WORKER_INDEX";
const WORKER_PORT = "RENARD_WORKER_PORT";

const config = configure({
  args: Bun.argv.slice(2),
  env: (name) => process.env[name],
  cpus: navigator.hardwareConcurrency,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  exit: (status) => process.exit(status),
});
const workers = Math.min(config.threads, config.maxConnections);
const index = Number(process.env[WORKER_INDEX] ?? 0);
const { host } = config.listen;
const port = Number(process.env[WORKER_PORT] ?? config.listen.port);

const { hub, stopSweep } = startHub({ ...config, maxConnections: capPerWorker(config.maxConnections, workers, index) });

/** The Transport of a Bun socket (see connection.js): Bun writes what the kernel takes
 * now and returns the count; the rest waits here until the socket's drain. */
class BunTransport {
  constructor(socket) {
    this.socket = socket;
    /** Octets the kernel has not taken yet (ASCII), or "". */
    this.unsent = "";
    /** What to do once `unsent` is empty: 0 nothing, 1 shut the write side, 2 close. */
    this.then = 0;
    /** A write failed: the socket is closed. */
    this.gone = false;
    /** @type {import("./connection.js").Connection | null} */
    this.connection = null;
  }

  send(ascii) {
    if (this.unsent.length > 0) this.unsent += ascii;
    else this.write(ascii);
  }

  /** Write `ascii` now and keep what the kernel did not take in `unsent`. Bun's write
   * returns -1 once the peer has reset the connection, and reports no close while reading
   * is paused (output at its bound): the socket is gone, close it and tell the connection
   * (once the caller's work is done: the connection may be in the middle of a batch). */
  write(ascii) {
    const written = this.socket.write(ascii);
    if (written >= 0) {
      this.unsent = written < ascii.length ? ascii.slice(written) : "";
      return;
    }
    this.gone = true;
    this.unsent = "";
    this.socket.terminate();
    queueMicrotask(() => this.connection?.onClose());
  }

  pending() {
    return this.unsent.length;
  }

  /** The socket can take more: write what waits, then do what was asked after it. */
  onWritable() {
    if (this.unsent.length > 0) {
      this.write(this.unsent);
      if (this.unsent.length > 0 || this.gone) return;
    }
    this.afterSent();
    this.connection?.onDrain();
  }

  afterSent() {
    if (this.gone) return;
    if (this.then === 1) this.socket.shutdown();
    else if (this.then === 2) this.socket.end();
    this.then = 0;
  }

  endWrite() {
    this.then = 1;
    if (this.unsent.length === 0) this.afterSent();
  }

  close() {
    this.then = 2;
    if (this.unsent.length === 0) this.afterSent();
  }

  /** Close now, like close(2): a FIN, or a reset when input is left unread. (Bun's
   * terminate() always resets, which can reach a client before its connect returns.) */
  destroy() {
    this.unsent = "";
    this.then = 0;
    this.socket.end();
  }

  pause() {
    this.socket.pause();
  }

  resume() {
    this.socket.resume();
  }
}

/** Connections the listener has handed over, for acceptQueued: Bun has no accept call of its
 * own; its loop accepts while the listener is readable. */
let accepted = 0;

// The signals are handled before the listener exists (a handler runs once this module has
// run): a SIGTERM between the listen and a later registration would kill the process, and the
// kernel would reset every connection queued on its listener (SPEC §7.6). A worker stopped
// just after its listen (as the suite's queued-connections test stops every process) was
// killed so by the first process's SIGTERM in 5 drains of 60, once that stretch held the
// reading of /proc/self/fd below; 0 of 100 since.
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));

let listener;
try {
  listener = Bun.listen({
    hostname: host,
    port,
    reusePort: workers > 1,
    allowHalfOpen: true,
    socket: {
      open(socket) {
        accepted++;
        const transport = new BunTransport(socket);
        const connection = hub.accept(transport);
        if (connection === null) {
          socket.end();
          return;
        }
        transport.connection = connection;
        socket.data = transport;
        socket.setNoDelay(true);
      },
      data(socket, chunk) {
        socket.data?.connection.onData(chunk);
      },
      end(socket) {
        socket.data?.connection.onEnd();
      },
      drain(socket) {
        socket.data?.onWritable();
      },
      close(socket) {
        socket.data?.connection.onClose();
      },
      error() {},
    },
  });
} catch (error) {
  const shown = host.includes(":") ? `[${host}]` : host;
  process.stderr.write(`renard: --listen: cannot bind ${shown}:${port}: ${error?.message ?? error}\n`);
  process.exit(1);
}

/** This process's listener's accept queue as the kernel counts it (null where /proc cannot
 * be read): what the drain waits on before it closes the listener. */
const queuedOnListener = openQueueReader(listener.port);

/** @type {import("bun").Subprocess<"pipe", "pipe", "inherit">[]} */
const children = [];
if (index === 0) {
  for (let i = 1; i < workers; i++) {
    children.push(Bun.spawn([process.execPath, ...process.execArgv, Bun.main, ...Bun.argv.slice(2)], {
      env: { ...process.env, [WORKER_INDEX]: String(i), [WORKER_PORT]: String(listener.port) },
      stdio: ["pipe", "pipe", "inherit"], // stdin and stdout: the shutdown handshake
    }));
  }
}

/** SIGTERM/SIGINT: stop listening, pass the signal on to every worker, drain once every
 * process has stopped listening (the handshake in cli.js), exit 0 once this process and
 * every worker are done (SPEC §7.6). */
let signalled = false;
/** In a worker: resolves when the first process says "drain", or has exited (its end of
 * the pipe closed): either way this worker drains too, never outliving it. */
const fromPrimary = index > 0 ? waitForWord(Bun.stdin.stream(), "drain") : null;
fromPrimary?.then(() => shutdown("SIGTERM"));
async function shutdown(signal) {
  if (signalled) return;
  signalled = true;
  hub.hold();
  await acceptQueued(() => accepted, queuedOnListener);
  listener.stop(false);
  if (index === 0) {
    for (const child of children) child.kill(signal);
    await Promise.all(children.map((child) => waitForWord(child.stdout, "stopped", HANDSHAKE_WAIT)));
    for (const child of children) {
      try {
        child.stdin.write("drain\n");
        Promise.resolve(child.stdin.flush()).catch(() => {});
      } catch {
        // the worker is gone already
      }
    }
  } else {
    process.stdout.write("stopped\n");
    await Promise.race([fromPrimary, sleep(HANDSHAKE_WAIT)]);
  }
  hub.drain(async () => {
    stopSweep();
    await Promise.all(children.map((child) => child.exited));
    process.exit(0);
  });
}

// The first line, once the signals are handled (SPEC §1).
if (index === 0) process.stderr.write(listeningLine(host, listener.port));
