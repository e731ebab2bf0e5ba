// What every adapter does before it listens and around it (SPEC §1, §7.6): read the
// command line, print the usage, the version or the one-line error, and build the
// per-process state; the adapters only bind, accept and move octets.

import { parseCommandLine, USAGE, VERSION } from "./config.js";
import { Hub, SWEEP_INTERVAL } from "./connection.js";
import { Responses } from "./response.js";

/**
 * The configuration to serve with, or exit: 0 after --help or --version, 2 after a bad
 * command line (one line on stderr, SPEC §1).
 * @param {{args: string[], env: (name: string) => string | undefined, cpus: number,
 *   stdout: (text: string) => void, stderr: (text: string) => void, exit: (status: number) => never}} host
 * @returns {import("./config.js").Config}
 */
export function configure(host) {
  let command;
  try {
    command = parseCommandLine(host.args, host.env, host.cpus);
  } catch (line) {
    if (typeof line !== "string") throw line;
    host.stderr(`${line}\n`);
    return host.exit(2);
  }
  if ("help" in command) {
    host.stdout(USAGE);
    return host.exit(0);
  }
  if ("version" in command) {
    host.stdout(`renard ${VERSION}\n`);
    return host.exit(0);
  }
  return command.serve;
}

/** `listening on http://HOST:PORT` (IPv6 in brackets), the first line on stderr. */
export function listeningLine(host, port) {
  return `listening on http://${host.includes(":") ? `[${host}]` : host}:${port}\n`;
}

/** The per-process state, with its deadline sweep running (unref'd where the runtime can). */
export function startHub(config) {
  const hub = new Hub(config, new Responses(config.location, config.count), () => performance.now());
  const timer = setInterval(() => hub.sweep(), SWEEP_INTERVAL);
  // @ts-ignore: Node and Bun timers have unref; Deno's is a number.
  timer.unref?.();
  return { hub, stopSweep: () => clearInterval(timer) };
}

/** Connections per worker process: the cap split so that the sum stays at the cap. */
export function capPerWorker(maxConnections, workers, index) {
  return Math.floor(maxConnections / workers) + (index < maxConnections % workers ? 1 : 0);
}

/** How long a process waits for its siblings during the shutdown handshake, in ms. Only a
 * hung sibling reaches it (one that has exited ends the wait at once); a live one is waited
 * for however slow the machine, since a process that drains before a sibling stops listening
 * tells its clients to close while they can still reconnect to that sibling. Measured beside
 * the flake campaign's busy loops: up to 118 ms from the first process's signal to a worker's
 * `stopped` in 41 drains, and once over the 200 ms this used to be; the suite asks every
 * listener closed within 1 s of the signal, a third of this. */
export const HANDSHAKE_WAIT = 3000;

/**
 * Resolves once `stream` (a ReadableStream of octets) has carried `word`, or has ended,
 * or after `ms` (never, by default). The shutdown handshake of worker processes: with --threads N, every
 * process stops listening first ("stopped"), and only then do they all begin the drain
 * ("drain"), so that a client told `Connection: close` by one process cannot reconnect
 * to another that still listens (SPEC §7.6).
 * @param {ReadableStream<Uint8Array>} stream
 */
export async function waitForWord(stream, word, ms = Infinity) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let timer;
  const timeout = new Promise((resolve) => {
    if (Number.isFinite(ms)) timer = setTimeout(resolve, ms);
  });
  const found = (async () => {
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      if (text.includes(word)) return;
    }
  })().catch(() => {});
  await Promise.race([found, timeout]);
  clearTimeout(timer);
  reader.releaseLock?.();
}

/** Resolves after `ms`. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Bounds the turns a drain waits for the listener's queue to empty: the longest queue Linux
 * allows (net.core.somaxconn is at most 65535). */
export const MAX_QUEUED = 65536;

/** Bounds the wait for the kernel's queue to empty, in ms: a runtime that cannot accept
 * (out of descriptors) is not waited on longer; the suite asks that new connections be
 * refused within 1 s of the signal. Measured on Bun beside the flake campaign's busy loops
 * (the suite's queued-connections drain 30 times, up to 410 queued on a listener): 10 to
 * 67 ms (10 to 57 with the queue already empty: the readings of /proc/net/tcp); the margin
 * over the highest, 433 ms, is 7 times that spread. Starved at `nice 19` beside the same
 * loops: 26 to 324 ms, still under. */
export const QUEUE_WAIT_MS = 500;

/**
 * Resolves once the connections queued on the listener at the call are taken: connections
 * queued at the signal are open ones, which closing the listener would reset (SPEC §7.6).
 * With `queued` (the kernel's count of this process's listener's queue, backlog.js), once it
 * reads 0, at most QUEUE_WAIT_MS. Without it, once a timer turn passes in which accepted()
 * (the runtime's count of connections taken from the listener) did not grow: the runtime's
 * loop accepts while the listener is readable: a guess about the runtime, which the
 * kernel's count replaces where it can be read.
 * @param {() => number} accepted
 * @param {(() => number) | null} queued
 * @param {() => number} clock  ms
 */
export async function acceptQueued(accepted, queued = null, clock = () => performance.now()) {
  if (queued !== null) {
    const until = clock() + QUEUE_WAIT_MS;
    while (queued() > 0 && clock() < until) await sleep(0);
    return;
  }
  for (let turns = 0; turns < MAX_QUEUED; turns++) {
    const seen = accepted();
    await sleep(0);
    if (accepted() === seen) return;
  }
}
