// renard on Node: node:net sockets, the shared parser over Buffers (node:http imposes its
// own answers to malformed input and its own header fields: see README). One process, or
// with --threads N > 1, node:cluster with N workers sharing the listening socket
// (SCHED_NONE: the kernel hands out the connections; Node 20 has no reusePort).

import cluster from "node:cluster";
import net from "node:net";
import os from "node:os";
import { capPerWorker, configure, HANDSHAKE_WAIT, listeningLine, MAX_QUEUED, startHub } from "./cli.js";

const config = configure({
  args: process.argv.slice(2),
  env: (name) => process.env[name],
  cpus: os.availableParallelism(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  exit: (status) => process.exit(status),
});
const workers = Math.min(config.threads, config.maxConnections);

if (workers > 1 && cluster.isPrimary) superviseWorkers();
else serve(cluster.isWorker ? Number(process.env.RENARD_WORKER_INDEX) : 0);

/** One event loop: accept, serve, drain on SIGTERM/SIGINT (SPEC §7.6). */
function serve(index) {
  const cap = capPerWorker(config.maxConnections, workers, index);
  const { hub, stopSweep } = startHub({ ...config, maxConnections: cap });
  let accepted = 0; // connections the listener handed over, for the drain's queue check
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    accepted++;
    const connection = hub.accept(transportOf(socket));
    if (connection === null) {
      socket.destroy();
      return;
    }
    socket.on("data", (chunk) => connection.onData(chunk));
    socket.on("end", () => connection.onEnd());
    socket.on("drain", () => connection.onDrain());
    socket.on("error", () => {});
    socket.on("close", () => connection.onClose());
  });
  const { host, port } = config.listen;
  server.on("error", (error) => {
    const line = `renard: --listen: cannot bind ${host.includes(":") ? `[${host}]` : host}:${port}: ${error.message}\n`;
    if (cluster.isWorker) process.send?.({ bindError: line });
    else process.stderr.write(line, () => process.exit(1));
  });
  server.listen({ host, port, backlog: 1024, exclusive: false }, () => {
    const address = /** @type {net.AddressInfo} */ (server.address());
    if (cluster.isWorker) process.send?.({ listening: listeningLine(address.address, address.port) });
    else process.stderr.write(listeningLine(address.address, address.port));
  });
  // SIGTERM/SIGINT: stop listening and drain (SPEC §7.6). A worker of --threads N first
  // tells the primary that it stopped listening, and drains when the primary says that
  // every worker has (or after HANDSHAKE_WAIT): a client told `Connection: close` by one
  // worker cannot then reach another that still accepts.
  let signalled = false;
  const drain = () => hub.drain(() => {
    stopSweep();
    process.exit(0);
  });
  const shutdown = () => {
    if (signalled) return;
    signalled = true;
    hub.hold();
    // Connections the kernel queued on the listener are open ones: closing it would reset
    // them. Node has no accept call of its own, and its loop accepts one connection per
    // turn while the listener is readable (seen: 1 of 20 queued per turn, Node 20), so the
    // listener closes after a whole turn that accepted nothing: the queue is empty.
    let seen = -1; // the first check always waits for a whole turn
    let turns = 0;
    const closeOnceQueueEmpty = () => {
      if (accepted !== seen && ++turns <= MAX_QUEUED) {
        seen = accepted;
        return setImmediate(closeOnceQueueEmpty);
      }
      server.close();
      if (!cluster.isWorker) return drain();
      process.on("message", (message) => message === "drain" && drain());
      setTimeout(drain, HANDSHAKE_WAIT);
      process.send?.("stopped");
    };
    setImmediate(closeOnceQueueEmpty);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

/** The Transport of a node:net socket (see connection.js). */
function transportOf(socket) {
  return {
    send: (ascii) => socket.write(ascii, "latin1"),
    pending: () => socket.writableLength,
    endWrite: () => socket.end(),
    close: () => socket.end(() => socket.destroy()),
    destroy: () => socket.destroy(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };
}

/** The primary of --threads N: start the workers, print their first line, pass a
 * signal on to every worker and exit 0 once they all have. */
function superviseWorkers() {
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  let announced = false;
  let stopping = false;
  for (let index = 0; index < workers; index++) {
    const worker = cluster.fork({ RENARD_WORKER_INDEX: String(index) });
    worker.on("message", (message) => {
      if (message.listening && !announced) {
        announced = true;
        process.stderr.write(message.listening);
      } else if (message.bindError && !stopping) {
        stopping = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGKILL");
        process.stderr.write(message.bindError, () => process.exit(1));
      }
    });
  }
  // The drain's handshake: once every worker has stopped listening, each is told to drain.
  // A worker that has exited is done too: one signalled before it handled the signal (still
  // starting) dies of it and never says "stopped", and the others would wait HANDSHAKE_WAIT.
  const done = new Set();
  const stoppedListening = (worker) => {
    done.add(worker.id);
    if (done.size === workers) tellWorkers("drain");
  };
  cluster.on("exit", (worker) => {
    stoppedListening(worker);
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(stopping ? 1 : 0);
  });
  cluster.on("message", (worker, message) => {
    if (message === "stopped") stoppedListening(worker);
  });
  const tellWorkers = (message) => {
    for (const w of Object.values(cluster.workers ?? {})) if (w?.isConnected()) w.send(message);
  };
  let signalled = false;
  const shutdown = (signal) => {
    if (signalled) return;
    signalled = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}
