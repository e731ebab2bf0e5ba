// Tests of the shared core, one file for the three runtimes: `node --test test/`,
// `deno test test/`, `bun test test/`. No sockets: SPEC §1 (the command line), §3 (seeds,
// against every vector of spec/vectors/seeds.json), §4 (bytes), §5 (the parser, against
// every fast case of spec/vectors/http replayed through a Connection), §6, §7.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { listeningQueues, socketInodes } from "../src/backlog.js";
import { acceptQueued, QUEUE_WAIT_MS } from "../src/cli.js";
import { parseCommandLine } from "../src/config.js";
import { Hub } from "../src/connection.js";
import { COMPLETE, ERROR, PARTIAL, parse, REDIRECT } from "../src/request.js";
import { Responses } from "../src/response.js";
import { fnv1a, seedHash } from "../src/seed.js";
import { MAX_ROUNDS, Sentinels, sentinelHost } from "../src/sentinel.js";

const VECTORS = new URL("../../../spec/vectors/", import.meta.url);
const ascii = (text) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const hexOctets = (hex) => Uint8Array.from(hex.match(/../gu) ?? [], (h) => parseInt(h, 16));
/** 2026-11-22 00:00:00 UTC, in ms. */
const MIDNIGHT = 1_795_305_600_000;

// --- SPEC §3: FNV-1a-64 and the seed ---------------------------------------------------------

test("fnv1a of the empty string is the offset basis", () => {
  assert.equal(fnv1a([]).toBigInt(), 0xcbf29ce484222325n);
});

test("fnv1a matches the published vectors for a and foobar", () => {
  assert.equal(fnv1a(ascii("a")).toBigInt(), 0xaf63dc4c8601ec8cn);
  assert.equal(fnv1a(ascii("foobar")).toBigInt(), 0x85944171f73967e8n);
});

test("fnv1a in two halves equals a BigInt reference over every octet value", () => {
  let reference = 0xcbf29ce484222325n;
  const octets = [];
  for (let b = 0; b < 256; b++) {
    octets.push(b);
    reference = ((reference ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
    assert.equal(fnv1a(octets).toBigInt(), reference);
  }
});

test("pick is the hash mod N plus one, for N up to a million", () => {
  const hash = fnv1a(ascii("renard"));
  for (const n of [1, 2, 21, 997, 65536, 999_983, 1_000_000]) {
    assert.equal(hash.pick(n), Number(hash.toBigInt() % BigInt(n)) + 1);
  }
});

test("every vector of spec/vectors/seeds.json gives its seed and its k", () => {
  const { vectors } = JSON.parse(readFileSync(new URL("seeds.json", VECTORS), "utf8"));
  assert.ok(vectors.length > 0);
  for (const v of vectors) {
    const target = ascii(`/?${v.query}`);
    const hash = seedHash(target, 0, target.length);
    if (v.seed_hex === null) {
      assert.equal(hash, null, v.name);
      continue;
    }
    assert.equal(hash?.toBigInt(), fnv1a(hexOctets(v.seed_hex)).toBigInt(), v.name);
    assert.equal(hash?.pick(v.n), v.k, v.name);
  }
});

test("the seed is searched only in the target's query part", () => {
  const buf = ascii("/?seed=a HTTP/1.1?seed=b");
  assert.equal(seedHash(buf, 0, 8)?.toBigInt(), fnv1a(ascii("a")).toBigInt());
  assert.equal(seedHash(buf, 0, 1), null);
});

// --- SPEC §5: the parser ---------------------------------------------------------------------

/** The outcome of parsing `text` whole: "complete", "partial" or the error status. */
function outcome(text) {
  const buf = typeof text === "string" ? ascii(text) : text;
  const result = parse(buf, 0, buf.length);
  return result.outcome === COMPLETE ? "complete" : result.outcome === PARTIAL ? "partial" : result.status;
}

const H = "Host: a\r\n";

test("a well-formed GET is complete and its head length counts leading empty lines", () => {
  const buf = ascii(`\r\n\nGET / HTTP/1.1\r\n${H}\r\nrest`);
  const result = parse(buf, 0, buf.length);
  assert.equal(result.outcome, COMPLETE);
  assert.equal(result.end, buf.length - 4);
  assert.equal(result.route, REDIRECT);
});

test("every prefix of a valid request is partial", () => {
  const text = `GET /?seed=x HTTP/1.1\r\n${H}Accept: */*\r\n\r\n`;
  for (let i = 0; i < text.length; i++) assert.equal(outcome(text.slice(0, i)), "partial", JSON.stringify(text.slice(0, i)));
  assert.equal(outcome(text), "complete");
});

test("the parser's answers match the flagship's, case by case: the first octet that decides wins", () => {
  const cases = [
    // rule 2: a CR not followed by LF, anywhere, at once
    [`GET / HTTP/1.1\r\n${H}\r\rX`, 400],
    [`GET /\rX`, 400],
    [`GET / HTTP/1.1\r\n${H}X: a\rb\r\n\r\n`, 400],
    // rule 3: request line
    ["G\u0001T / HTTP/1.1\r\n", 400],
    ["GET  / HTTP/1.1\r\n\r\n", 400],
    [" GET / HTTP/1.1\r\n", 400],
    [`GET /\u007f HTTP/1.1\r\n${H}\r\n`, 400],
    [`GET /\u00e9 HTTP/1.1\r\n${H}\r\n`, 400],
    ["GET /\u00e9", 400],
    [`GET /# HTTP/1.1\r\n${H}\r\n`, "complete"],
    [`GET / HTTP/1.1 \r\n${H}\r\n`, 400],
    ["GET /\r\n\r\n", 400],
    [`GET /${"a".repeat(8178)} HTTP/1.1\r\n${H}\r\n`, "complete"],
    [`GET /${"a".repeat(8179)} HTTP/1.1\r\n${H}\r\n`, 414],
    [`GET /${"a".repeat(8200)}`, 414],
    // rule 4: versions, also when cut short
    [`GET / HTTP/2.0\r\n${H}\r\n`, 505],
    ["GET / HTTP/2.0", "partial"],
    ["GET / HTTP/2", "partial"],
    [`G\u0001T /${"a".repeat(9000)} HTTP/1.1\r\n${H}\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}X-Pad: ${"a".repeat(16400)}\u0001\r\n\r\n`, 431],
    ["GET / HTTP/1.", "partial"],
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505],
    [`GET / HTTP/1.2\r\n${H}\r\n`, 505],
    [`GET / http/1.1\r\n${H}\r\n`, 400],
    [`GET / HTTP/1\r\n${H}\r\n`, 400],
    [`GET / HTTP/01.1\r\n${H}\r\n`, 400],
    [`GET / HTTP/2.0 x\r\n${H}\r\n`, 400],
    [`GET / HTTP/1.10\r\n${H}\r\n`, 400],
    // rule 5: field lines
    [`GET / HTTP/1.1\r\n${H}Bad Name: x\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}X : x\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H} folded\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}: x\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}NoColon\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}X: a\u0000b\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}X: a\u007fb\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}X: a\tb\u00ff\r\n\r\n`, "complete"],
    [`GET / HTTP/1.1\n${H.replace("\r", "")}\n`, "complete"],
    // rule 6: size
    [`GET / HTTP/1.1\r\n${H}${"X: y\r\n".repeat(99)}\r\n`, "complete"],
    [`GET / HTTP/1.1\r\n${H}${"X: y\r\n".repeat(100)}\r\n`, 431],
    [`GET / HTTP/1.1\r\n${H}X: ${"v".repeat(16380)}\r\n\r\n`, 431],
    [`GET / HTTP/1.1\r\nX: ${"v".repeat(16390)}`, 431],
    [`GET / HTTP/1.1\r\n${"X: y\r\n".repeat(150)}Bad Name: x\r\n`, 431],
    [`GET / HTTP/1.1\r\nBad Name: x\r\n${"X: y\r\n".repeat(150)}`, 400],
    // rule 7: Host
    ["GET / HTTP/1.1\r\n\r\n", 400],
    ["GET / HTTP/1.0\r\n\r\n", "complete"],
    [`GET / HTTP/1.1\r\n${H}${H}\r\n`, 400],
    ["GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n", "complete"],
    ["GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nHost: \r\n\r\n", "complete"],
    ["GET / HTTP/1.1\r\nHost: a%20:\r\n\r\n", "complete"],
    ["GET / HTTP/1.1\r\nHost: []\r\n\r\n", 400],
    // rule 8: framing
    [`GET / HTTP/1.1\r\n${H}Content-Length: +1\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Content-Length: 1\r\nContent-Length: 1\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Content-Length: ${"9".repeat(19)}\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n`, 400],
    [`GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n`, 501],
    [`GET / HTTP/1.1\r\n${H}Transfer-Encoding: chunked, gzip\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Transfer-Encoding: ,chunked\r\n\r\n`, 400],
    [`GET / HTTP/1.1\r\n${H}Transfer-Encoding: CHUNKED\r\n\r\n`, "complete"],
    // rule 9: targets
    [`GET * HTTP/1.1\r\n${H}\r\n`, 400],
    [`GET a:80 HTTP/1.1\r\n${H}\r\n`, 400],
    [`GET http:/// HTTP/1.1\r\n${H}\r\n`, 400],
    [`GET HTTPS://a HTTP/1.1\r\n${H}\r\n`, "complete"],
  ];
  for (const [text, expected] of cases) assert.equal(outcome(text), expected, JSON.stringify(text.slice(0, 80)));
});

test("routes: GET and HEAD on / and /healthz, 405 for other methods, 404 elsewhere", () => {
  const route = (line) => {
    const buf = ascii(`${line}\r\n${H}\r\n`);
    return parse(buf, 0, buf.length).route;
  };
  assert.deepEqual(
    ["GET / HTTP/1.1", "HEAD /healthz HTTP/1.1", "get / HTTP/1.1", "POST /healthz HTTP/1.1", "GET /index.html HTTP/1.1", "GET // HTTP/1.1", "GET http://a?seed=x HTTP/1.1"].map(route),
    [0, 1, 3, 3, 2, 2, 0],
  );
});

test("persistence follows the version and the Connection tokens", () => {
  const keepAlive = (text) => {
    const buf = ascii(text);
    return parse(buf, 0, buf.length).keepAlive;
  };
  assert.equal(keepAlive(`GET / HTTP/1.1\r\n${H}\r\n`), true);
  assert.equal(keepAlive(`GET / HTTP/1.1\r\n${H}Connection: foo, Close\r\n\r\n`), false);
  assert.equal(keepAlive("GET / HTTP/1.0\r\n\r\n"), false);
  assert.equal(keepAlive("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"), true);
});

// --- SPEC §4: response bytes -----------------------------------------------------------------

const DATE = "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\n";

test("a 302 is byte-exact", () => {
  const responses = new Responses("https://avatar.example.org/Renard-{n}.png", 21, () => MIDNIGHT);
  assert.equal(
    responses.redirect(7, false, false, 0),
    `HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n${DATE}Content-Length: 0\r\n\r\n`,
  );
});

test("every {n} is replaced, also above the pre-rendered counts", () => {
  const responses = new Responses("https://a/{n}/{n}.png", 1_000_000, () => MIDNIGHT);
  assert.ok(responses.redirect(999_999, true, false, 2).startsWith("HTTP/1.1 302 Found\r\nLocation: https://a/999999/999999.png\r\nCache-Control: public, max-age=86400\r\n"));
});

test("health answers ok, without a body to HEAD, and error answers close", () => {
  const responses = new Responses("/{n}", 21, () => MIDNIGHT);
  assert.equal(responses.health(false, 1), `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n${DATE}Content-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n`);
  assert.ok(responses.health(true, 0).endsWith("Content-Length: 3\r\n\r\n"));
  assert.equal(responses.empty(431, 2), `HTTP/1.1 431 Request Header Fields Too Large\r\n${DATE}Content-Length: 0\r\nConnection: close\r\n\r\n`);
});

// --- SPEC §5–§7 through a Connection, without sockets -----------------------------------------

/** A Transport that records what the Connection does; the kernel takes every octet. */
class FakeTransport {
  constructor() {
    this.writes = [];
    this.state = "open";
    this.unsent = 0;
  }
  send(text) { this.writes.push(text); }
  pending() { return this.unsent; }
  endWrite() { this.state = "lingering"; }
  close() { this.state = "closed"; }
  destroy() { this.state = "destroyed"; }
  pause() { this.paused = true; }
  resume() { this.paused = false; }
  statuses() { return [...this.writes.join("").matchAll(/HTTP\/1\.1 (\d{3}) /gu)].map((m) => Number(m[1])); }
}

function hub(overrides = {}) {
  const config = {
    listen: { host: "127.0.0.1", port: 0, family: 4 }, count: 21, location: "https://avatar.example.org/Renard-{n}.png",
    threads: 1, headerTimeout: 2000, idleTimeout: 3000, maxConnections: 10, drainTimeout: 1000, ...overrides,
  };
  let now = 0;
  const h = new Hub(config, new Responses(config.location, config.count), () => now);
  h.advance = (ms) => { now += ms; h.sweep(); };
  return h;
}

/** Octets of one `send` segment of spec/vectors/http, or null for a pause. */
function segment(s) {
  if (typeof s === "string") return ascii(s);
  if (s.hex !== undefined) return hexOctets(s.hex);
  if (s.repeat !== undefined) return ascii(s.repeat.repeat(s.times));
  return null;
}

test("every fast case of spec/vectors/http gets its statuses and its close, fed in its segments", () => {
  const files = ["abuse", "connection", "framing", "limits", "parsing", "redirect", "routing"];
  let replayed = 0;
  for (const file of files) {
    const { cases } = JSON.parse(readFileSync(new URL(`http/${file}.json`, VECTORS), "utf8"));
    for (const c of cases) {
      if (c.slow || c.requires || c.timing) continue;
      const h = hub({ maxConnections: 100 });
      const transport = new FakeTransport();
      const connection = h.accept(transport);
      for (const s of c.send) {
        const octets = segment(s);
        if (octets !== null && transport.state === "open") connection.onData(octets);
      }
      const wanted = c.responses.flatMap((r) => Array(r.times ?? 1).fill(Array.isArray(r.status) ? r.status[0] : r.status));
      assert.deepEqual(transport.statuses(), wanted, `${file}: ${c.name}`);
      if (c.then === "close") assert.notEqual(transport.state, "open", `${file}: ${c.name} stays open`);
      if (c.then === "open") assert.equal(transport.state, "open", `${file}: ${c.name} closed`);
      replayed++;
    }
  }
  assert.ok(replayed > 100, `only ${replayed} cases replayed`);
});

test("pipelined requests of one read are answered in one write", () => {
  const h = hub();
  const transport = new FakeTransport();
  h.accept(transport).onData(ascii(`GET / HTTP/1.1\r\n${H}\r\n`.repeat(3)));
  assert.equal(transport.writes.length, 1);
  assert.deepEqual(transport.statuses(), [302, 302, 302]);
});

test("a body is discarded across reads, never parsed as a request", () => {
  const h = hub();
  const transport = new FakeTransport();
  const connection = h.accept(transport);
  connection.onData(ascii(`POST / HTTP/1.1\r\n${H}Content-Length: 28\r\n\r\nGET /x HTTP/1.1\r\n`));
  connection.onData(ascii(`${H}\r\nGET /healthz HTTP/1.1\r\n${H}\r\n`));
  assert.deepEqual(transport.statuses(), [405, 200]);
});

test("reading stops at the output bound and resumes when the output drains", () => {
  const h = hub();
  const transport = new FakeTransport();
  const connection = h.accept(transport);
  transport.unsent = 64 * 1024 - 100; // the kernel stopped taking octets
  connection.onData(ascii(`GET / HTTP/1.1\r\n${H}\r\n`.repeat(10)));
  assert.equal(transport.paused, true);
  assert.deepEqual(transport.statuses(), []);
  transport.unsent = 0;
  connection.onDrain();
  assert.equal(transport.paused, false);
  assert.deepEqual(transport.statuses(), Array(10).fill(302));
});

test("a partial head gets 408 at the header deadline, an idle connection is closed", () => {
  const h = hub();
  const partial = new FakeTransport();
  const idle = new FakeTransport();
  h.accept(partial).onData(ascii("GET / HT"));
  h.accept(idle);
  h.advance(1999);
  assert.deepEqual([partial.state, idle.state], ["open", "open"]);
  h.advance(1);
  assert.deepEqual(partial.statuses(), [408]);
  assert.deepEqual([partial.state, idle.state], ["lingering", "destroyed"]);
});

test("at the cap a lingering close goes first, then the earliest partial head, then the longest wait", () => {
  const h = hub({ maxConnections: 3 });
  const idle = new FakeTransport();
  const early = new FakeTransport();
  const late = new FakeTransport();
  h.accept(idle);
  h.accept(early).onData(ascii("GET / HTTP/1.1\r\n"));
  h.advance(10);
  h.accept(late).onData(ascii("GET / HTTP/1.1\r\n"));
  const lingering = new FakeTransport();
  for (const c of h.connections) if (c.transport === idle) c.onData(ascii("BAD\r\n\r\n")); // 400: lingering
  assert.equal(idle.state, "lingering");
  h.accept(lingering);
  assert.equal(idle.state, "destroyed");
  h.accept(new FakeTransport());
  assert.deepEqual([early.state, late.state, lingering.state], ["destroyed", "open", "open"]);
});

test("at the cap a connection with unsent output is never evicted: the newcomer is refused", () => {
  const h = hub({ maxConnections: 1 });
  const busy = new FakeTransport();
  h.accept(busy);
  busy.unsent = 1;
  assert.equal(h.accept(new FakeTransport()), null);
  assert.equal(busy.state, "open");
});

test("the drain answers with Connection: close and closes idle connections when the window ends", () => {
  const h = hub({ drainTimeout: 0 });
  const idle = new FakeTransport();
  h.accept(idle);
  let drained = false;
  h.drain(() => { drained = true; });
  assert.equal(idle.state, "destroyed");
  for (const c of [...h.connections]) c.onClose();
  assert.equal(drained, true);
  assert.equal(h.accept(new FakeTransport()), null);
});

test("a request answered while shutting down carries Connection: close", () => {
  const h = hub({ drainTimeout: 1000 });
  const transport = new FakeTransport();
  const connection = h.accept(transport);
  h.drain(() => {});
  connection.onData(ascii(`GET / HTTP/1.1\r\n${H}\r\n`));
  assert.match(transport.writes.join(""), /Content-Length: 0\r\nConnection: close\r\n\r\n$/u);
  assert.notEqual(transport.state, "open");
});

test("a request read between the signal and the drain is held, then answered with Connection: close", () => {
  const h = hub({ drainTimeout: 1000 });
  const asks = new FakeTransport();
  const asksThenShuts = new FakeTransport();
  const a = h.accept(asks);
  const b = h.accept(asksThenShuts);
  h.hold();
  const queued = new FakeTransport(); // taken from the listener's queue after the signal
  const q = h.accept(queued);
  assert.notEqual(q, null);
  a.onData(ascii(`GET / HTTP/1.1\r\n${H}\r\n`));
  b.onData(ascii(`GET /?seed=fox HTTP/1.1\r\n${H}\r\n`));
  b.onEnd();
  q.onData(ascii(`GET / HTTP/1.1\r\n${H}\r\n`));
  h.advance(60_000); // no deadline fires on a held request
  assert.deepEqual([asks.writes, asksThenShuts.writes, queued.writes, asks.paused, asks.state, asksThenShuts.state],
    [[], [], [], true, "open", "open"]);
  h.drain(() => {});
  for (const t of [asks, asksThenShuts, queued]) {
    assert.deepEqual(t.statuses(), [302]);
    assert.match(t.writes.join(""), /Content-Length: 0\r\nConnection: close\r\n\r\n$/u);
    assert.notEqual(t.state, "open");
  }
});

test("a connection accepted once the drain window is over is refused", () => {
  const h = hub({ drainTimeout: 0 }); // the window is over as the drain begins
  assert.notEqual(h.accept(new FakeTransport()), null);
  h.drain(() => {});
  assert.equal(h.accept(new FakeTransport()), null);
});

/** Sentinels whose connect makes the given ends, one per call; sleep never resolves unless
 * asked to (a round then never times out). */
function sentinels({ ends, onConnect = () => {}, sleepResolves = false }) {
  const made = [];
  const s = new Sentinels(async (host, port) => {
    if (made.length >= ends.length) throw new Error("refused");
    const local = ends[made.length];
    made.push({ host, port, local });
    onConnect(local);
    return { local, close: () => {} };
  }, () => (sleepResolves ? Promise.resolve() : new Promise(() => {})));
  return { s, made };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

test("the drain closes the listener only once the accept loop takes this process's sentinel", async () => {
  const end = { hostname: "127.0.0.1", port: 40001 };
  const { s, made } = sentinels({ ends: [end] });
  let done = null;
  s.takeQueue("0.0.0.0", 8080).then((seen) => (done = seen));
  await turn();
  assert.deepEqual(made.map((m) => [m.host, m.port]), [["127.0.0.1", 8080]]);
  assert.equal(s.taken({ hostname: "127.0.0.1", port: 40002 }), false); // a client queued before it
  await turn();
  assert.equal(done, null);
  assert.equal(s.taken(end), true);
  await turn();
  assert.equal(done, true);
  assert.equal(s.taken(end), false); // after the drain, an end is a client's again
});

test("a sentinel accepted before its connect resolved is seen, served as a connection", async () => {
  const end = { hostname: "::1", port: 40003 };
  let s;
  ({ s } = sentinels({ ends: [end], onConnect: (local) => assert.equal(s.taken(local), false) }));
  assert.equal(await s.takeQueue("::", 8080), true);
});

test("sentinels queued on a sibling's listener are followed by more, at most MAX_ROUNDS", async () => {
  const ends = Array.from({ length: MAX_ROUNDS + 5 }, (_, i) => ({ hostname: "127.0.0.1", port: 41000 + i }));
  const { s, made } = sentinels({ ends, sleepResolves: true });
  assert.equal(await s.takeQueue("127.0.0.1", 8080), false);
  assert.equal(made.length, MAX_ROUNDS);
});

test("a drain whose sentinel cannot connect waits for nothing", async () => {
  const { s, made } = sentinels({ ends: [] });
  assert.equal(await s.takeQueue("127.0.0.1", 8080), false);
  assert.equal(made.length, 0);
});

test("a sentinel connects to the listener's address, or loopback for a wildcard", () => {
  assert.equal(sentinelHost("0.0.0.0"), "127.0.0.1");
  assert.equal(sentinelHost("::"), "::1");
  assert.equal(sentinelHost("0:0::0"), "::1");
  assert.equal(sentinelHost("10.1.2.3"), "10.1.2.3");
  assert.equal(sentinelHost("fe80::1"), "fe80::1");
});

// Two listeners on port 0xB0B3 (a reusePort pair, 2 and 0 queued), one on another port, then
// an established connection: how /proc/net/tcp lists them (the listening ones first).
const TCP_TABLE = [
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
  "   0: 0100007F:B0B3 00000000:0000 0A 00000000:00000002 00:00000000 00000000     0        0 4832147 1 0 100 0 0 10 0",
  "   1: 0100007F:A6FD 00000000:0000 0A 00000000:00000007 00:00000000 00000000     0        0 5609944 1 0 100 0 0 10 0",
  "   2: 0100007F:B0B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4832150 1 0 100 0 0 10 0",
  "   3: 0100007F:B0B3 0100007F:9C40 01 00000000:00000005 00:00000000 00000000     0        0 4832200 1 0 20 4 30 10 -1",
  "",
].join("\n");

test("the listening sockets' accept queues on a port are read by inode, up to the first other line", () => {
  const { queues, done } = listeningQueues(TCP_TABLE, 0xb0b3);
  assert.deepEqual([...queues], [[4832147, 2], [4832150, 0]]);
  assert.equal(done, true);
  const cut = listeningQueues(TCP_TABLE.split("\n").slice(0, 3).join("\n"), 0xb0b3);
  assert.equal(cut.done, false); // a prefix of the listening part: read on
});

test("a process's sockets are told by their socket:[INODE] links", () => {
  assert.deepEqual([...socketInodes(["socket:[4832147]", "pipe:[12]", "/dev/null", "socket:[7]"])], [4832147, 7]);
});

test("the drain waits for the kernel's count of its queue to reach 0, whatever the turns accept", async () => {
  const counts = [3, 3, 1, 0, 5];
  let reads = 0;
  await acceptQueued(() => 0, () => counts[reads++]);
  assert.equal(reads, 4); // a turn that accepted nothing did not end it: the kernel still had 3
});

test("the drain's wait on a queue that never empties is bounded", async () => {
  let now = 0;
  let reads = 0;
  const clock = () => now;
  await acceptQueued(() => 0, () => {
    reads++;
    now += QUEUE_WAIT_MS / 4;
    return 1;
  }, clock);
  assert.equal(now, QUEUE_WAIT_MS); // the read at the bound was the last
  assert.equal(reads, 4);
});

test("without the kernel's count, the drain ends after a turn in which nothing was accepted", async () => {
  const seen = [0, 2, 2];
  let reads = 0;
  await acceptQueued(() => seen[Math.min(reads++, seen.length - 1)]);
  assert.equal(reads, 4); // 0 then 2 (grew: another turn), 2 then 2 (none: done)
});

// --- SPEC §1: the command line ---------------------------------------------------------------

const serve = (args, vars = {}) => parseCommandLine(args, (name) => vars[name], 2).serve;
const fails = (args, vars = {}) => {
  try {
    parseCommandLine(args, (name) => vars[name], 2);
  } catch (line) {
    return line;
  }
  return assert.fail(`${args.join(" ")} was accepted`);
};

test("defaults apply without flags", () => {
  const c = serve([]);
  assert.deepEqual([c.listen.host, c.listen.port, c.count, c.threads, c.headerTimeout, c.idleTimeout, c.maxConnections, c.drainTimeout],
    ["127.0.0.1", 8080, 21, 2, 10_000, 60_000, 10_000, 1000]);
});

test("the count error is the spec's example, word for word", () => {
  assert.equal(fails(["--count", "0"]), 'renard: --count: must be an integer from 1 to 1000000 (got "0")');
});

test("a flag wins over its variable, a variable over the default, an empty variable is unset", () => {
  assert.equal(serve(["--count=5"], { RENARD_COUNT: "7" }).count, 5);
  assert.equal(serve([], { RENARD_COUNT: "7" }).count, 7);
  assert.equal(serve([], { RENARD_COUNT: "" }).count, 21);
});

test("bad values are named by their flag or variable, on one line", () => {
  assert.match(fails([], { RENARD_THREADS: "x" }), /^renard: RENARD_THREADS: /u);
  assert.match(fails(["--listen", "localhost:80"]), /^renard: --listen: /u);
  assert.match(fails(["--listen", "127.0.0.1:65536"]), /^renard: --listen: /u);
  assert.match(fails(["--location", "https://a/x.png"]), /must contain \{n\}/u);
  assert.match(fails(["--location", `{n}${"a".repeat(2046)}`]), /^renard: --location: /u);
  assert.match(fails(["--header-timeout", "1e3"]), /^renard: --header-timeout: /u);
  assert.match(fails(["--idle-timeout", "0"]), /^renard: --idle-timeout: /u);
  assert.match(fails(["--drain-timeout", "-1"]), /^renard: --drain-timeout: /u);
  assert.match(fails(["--threads", "1025"]), /^renard: --threads: /u);
  assert.equal(fails(["--count"]), "renard: --count: missing value");
  assert.match(fails(["--bogus"]), /^renard: --bogus: unknown flag/u);
  assert.match(fails(["serve"]), /^renard: "serve": unexpected argument/u);
  assert.ok(!fails(["--location", "a\nb"]).includes("\n"));
});

test("edge values are accepted: IPv6, a million, 2048 octets, decimals, a drain of 0", () => {
  assert.deepEqual(serve(["--listen", "[::1]:0"]).listen, { host: "::1", port: 0, family: 6 });
  assert.equal(serve(["--count", "1000000"]).count, 1_000_000);
  assert.equal(serve(["--location", `{n}${"a".repeat(2045)}`]).location.length, 2048);
  assert.equal(serve(["--header-timeout", "0.25"]).headerTimeout, 250);
  assert.equal(serve(["--idle-timeout", "86400"]).idleTimeout, 86_400_000);
  assert.equal(serve(["--drain-timeout", "0"]).drainTimeout, 0);
});

test("--help and --version are recognised anywhere", () => {
  assert.deepEqual(parseCommandLine(["--count", "3", "--help"], () => undefined, 1), { help: true });
  assert.deepEqual(parseCommandLine(["--version"], () => undefined, 1), { version: true });
});
