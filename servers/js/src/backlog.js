// The kernel's own count of the connections queued on this process's listening socket
// (handshakes completed, not yet accepted), for a drain that must take them before it
// closes the listener (SPEC §7.6) on a runtime with no accept call that says the queue is
// empty (Bun). Linux only: where /proc cannot be read, openQueueReader returns null and the
// caller keeps its own rule.
//
// /proc/net/tcp and tcp6 list the listening sockets first, each with its accept queue as
// `rx_queue` and its inode; a process tells its own socket from a reusePort sibling's (same
// port) by the inodes among its descriptors, /proc/self/fd.

import { closeSync, openSync, readdirSync, readlinkSync, readSync } from "node:fs";

const LISTEN = "0A"; // TCP_LISTEN in /proc/net/tcp's `st` column
const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];
const CHUNK = 65536; // octets read at a time: the listening sockets come first, a few lines

/**
 * The accept queues of the listening sockets on `port` in one /proc/net/tcp{,6} table's
 * text, as inode → queued connections. Stops at the first line that is not listening.
 * @param {string} text  the table, or a prefix of it cut at a line's end
 * @param {number} port
 * @returns {{queues: Map<number, number>, done: boolean}} done: a non-listening line was seen
 */
export function listeningQueues(text, port) {
  const queues = new Map();
  const lines = text.split("\n");
  for (let i = 1; i < lines.length; i++) {
    const fields = lines[i].trim().split(/\s+/u);
    if (fields.length < 10) continue;
    if (fields[3] !== LISTEN) return { queues, done: true };
    const localPort = parseInt(fields[1].split(":")[1], 16);
    if (localPort !== port) continue;
    const rxQueue = parseInt(fields[4].split(":")[1], 16);
    queues.set(Number(fields[9]), rxQueue);
  }
  return { queues, done: false };
}

/** The inodes of this process's sockets, from `socket:[INODE]` links. */
export function socketInodes(links) {
  const inodes = new Set();
  for (const link of links) {
    const match = /^socket:\[(\d+)\]$/u.exec(link);
    if (match) inodes.add(Number(match[1]));
  }
  return inodes;
}

/** The listening part of one table: read a chunk at a time until a non-listening line. */
function readListening(path, port) {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(CHUNK);
    let text = "";
    for (;;) {
      const count = readSync(fd, buffer, 0, CHUNK, null);
      if (count === 0) return listeningQueues(text, port).queues;
      text += buffer.toString("latin1", 0, count);
      const whole = text.slice(0, text.lastIndexOf("\n") + 1);
      const { queues, done } = listeningQueues(whole, port);
      if (done) return queues;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * A reader of this process's listening socket's accept queue on `port`: () → the number of
 * connections queued there now, or 0 once the socket is gone. Null where /proc cannot be read
 * or no listening socket of this process is on the port (then the caller decides otherwise).
 * @param {number} port
 * @returns {(() => number) | null}
 */
export function openQueueReader(port) {
  try {
    const links = readdirSync("/proc/self/fd").map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    });
    const mine = socketInodes(links);
    const tables = TABLES.filter((table) => {
      try {
        closeSync(openSync(table, "r"));
        return true;
      } catch {
        return false; // no IPv6 here
      }
    });
    const ours = () => {
      let queued = null;
      for (const table of tables) {
        for (const [inode, count] of readListening(table, port)) {
          if (mine.has(inode)) queued = (queued ?? 0) + count;
        }
      }
      return queued;
    };
    if (ours() === null) return null;
    return () => {
      try {
        return ours() ?? 0;
      } catch {
        return 0;
      }
    };
  } catch {
    return null;
  }
}
