// Configuration (SPEC §1): flags, RENARD_* variables, defaults. A flag wins over its
// variable, a variable over the default; an empty variable is unset. Every error is the
// whole stderr line, naming the flag (or variable) and the reason; the caller exits 2.

export const VERSION = "0.1.0";

export const USAGE = `usage: renard [--flag VALUE | --flag=VALUE]...

Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N
(uniform, or FNV-1a-64 of ?seed=S mod N + 1).

  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)
  --count N                RENARD_COUNT            default 21 (1 to 1000000)
  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png
  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024; worker processes)
  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)
  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)
  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)
  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)
  --help                   print this text
  --version                print the version
`;

/**
 * @typedef {object} Config
 * @property {{host: string, port: number, family: 4 | 6}} listen  port 0 picks a free port
 * @property {number} count           N: k is drawn from 1..N
 * @property {string} location        template: visible ASCII, holds {n}
 * @property {number} threads         worker processes
 * @property {number} headerTimeout   absolute deadline for a request head, in ms
 * @property {number} idleTimeout     idle connection / stalled response limit, in ms
 * @property {number} maxConnections  open connections allowed
 * @property {number} drainTimeout    drain window on SIGTERM/SIGINT, in ms (SPEC §7.6)
 */

/** @typedef {{serve: Config} | {help: true} | {version: true}} Command */

/** The flags that take a value: [flag, variable, default, parse]. */
const FLAGS = [
  ["--listen", "RENARD_LISTEN", "listen", parseListen],
  ["--count", "RENARD_COUNT", "count", (v) => parseInteger(v, 1_000_000)],
  ["--location", "RENARD_LOCATION", "location", parseLocation],
  ["--threads", "RENARD_THREADS", "threads", (v) => parseInteger(v, 1024)],
  ["--header-timeout", "RENARD_HEADER_TIMEOUT", "headerTimeout", (v) => parseSeconds(v, false)],
  ["--idle-timeout", "RENARD_IDLE_TIMEOUT", "idleTimeout", (v) => parseSeconds(v, false)],
  ["--max-connections", "RENARD_MAX_CONNECTIONS", "maxConnections", (v) => parseInteger(v, 1_000_000)],
  ["--drain-timeout", "RENARD_DRAIN_TIMEOUT", "drainTimeout", (v) => parseSeconds(v, true)],
];

/** A parse failure: its message is the reason. */
class Invalid extends Error {}

/**
 * Read the command line `args` (without the program name), the variables through `env`,
 * and default --threads to `cpus`. Throws a string: the whole stderr line.
 * @param {string[]} args
 * @param {(name: string) => string | undefined} env
 * @param {number} cpus
 * @returns {Command}
 */
export function parseCommandLine(args, env, cpus) {
  /** @type {(string | undefined)[]} */
  const given = FLAGS.map(() => undefined);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--help") return { help: true };
    if (arg === "--version") return { version: true };
    if (!arg.startsWith("--")) {
      throw `renard: ${quoted(arg)}: unexpected argument (renard takes only flags; see --help)`;
    }
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const slot = FLAGS.findIndex(([flag]) => flag === name);
    if (slot < 0) throw `renard: ${escape(name)}: unknown flag (see --help)`;
    if (eq >= 0) given[slot] = arg.slice(eq + 1);
    else if (i + 1 < args.length) given[slot] = args[++i];
    else throw `renard: ${name}: missing value`;
  }
  /** @type {Record<string, unknown>} */
  const config = {
    listen: { host: "127.0.0.1", port: 8080, family: 4 },
    count: 21,
    location: "https://avatar.example.org/Renard-{n}.png",
    threads: Math.min(Math.max(cpus, 1), 1024),
    headerTimeout: 10_000,
    idleTimeout: 60_000,
    maxConnections: 10_000,
    drainTimeout: 1_000,
  };
  FLAGS.forEach(([flag, variable, key, parse], slot) => {
    const fromEnv = env(variable);
    const [name, raw] = given[slot] !== undefined ? [flag, given[slot]]
      : fromEnv ? [variable, fromEnv] : [undefined, undefined];
    if (raw === undefined) return;
    try {
      config[key] = parse(raw);
    } catch (e) {
      if (!(e instanceof Invalid)) throw e;
      throw `renard: ${name}: ${e.message} (got ${quoted(raw)})`;
    }
  });
  return { serve: /** @type {Config} */ (config) };
}

/** `s` in double quotes, with anything unprintable escaped (one line, always). */
function quoted(s) {
  return `"${escape(s)}"`;
}

function escape(s) {
  return s.replace(/[^\x20-\x7e]|[\\'"]/gu, (c) => {
    if (c === "\\" || c === "'" || c === '"') return `\\${c}`;
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    if (c === "\t") return "\\t";
    return [...new TextEncoder().encode(c)].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
  });
}

/** Numeric `A.B.C.D:PORT` or `[IPv6]:PORT`, PORT 0–65535. */
function parseListen(v) {
  const reason = "must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535";
  const m = /^(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([0-9A-Fa-f:.]+)\]):(\d{1,5})$/u.exec(v);
  if (!m) throw new Invalid(reason);
  const port = Number(m[3]);
  if (port > 65535 || (m[3].length > 1 && m[3][0] === "0")) throw new Invalid(reason);
  if (m[1] !== undefined) {
    const octets = m[1].split(".");
    if (octets.some((o) => Number(o) > 255 || (o.length > 1 && o[0] === "0"))) throw new Invalid(reason);
    return { host: m[1], port, family: 4 };
  }
  if (!isIPv6(m[2])) throw new Invalid(reason);
  return { host: m[2], port, family: 6 };
}

/** RFC 4291 §2.2 text form, with an optional trailing IPv4 part. */
export function isIPv6(s) {
  let groups = s.split(":");
  const last = groups[groups.length - 1];
  let need = 8;
  if (last.includes(".")) {
    const v4 = last.split(".");
    if (v4.length !== 4 || v4.some((o) => !/^\d{1,3}$/u.test(o) || Number(o) > 255 || (o.length > 1 && o[0] === "0"))) return false;
    groups = groups.slice(0, -1);
    groups.push("0", "0");
    if (last === s) return false;
  }
  const joined = groups.join(":");
  const halves = joined.split("::");
  if (halves.length > 2) return false;
  const hex = (g) => /^[0-9A-Fa-f]{1,4}$/u.test(g);
  if (halves.length === 1) return groups.length === need && groups.every(hex);
  const left = halves[0] === "" ? [] : halves[0].split(":");
  const right = halves[1] === "" ? [] : halves[1].split(":");
  return left.length + right.length < need && [...left, ...right].every(hex);
}

/** A decimal integer from 1 to `max`, digits only. */
function parseInteger(v, max) {
  if (!/^\d{1,9}$/u.test(v) || Number(v) < 1 || Number(v) > max) {
    throw new Invalid(`must be an integer from 1 to ${max}`);
  }
  return Number(v);
}

/** Decimal seconds `DIGITS[.DIGITS]`, > 0 (or >= 0 when `zeroAllowed`), <= 86400; in ms. */
function parseSeconds(v, zeroAllowed) {
  const reason = zeroAllowed
    ? "must be a decimal number of seconds from 0 to 86400"
    : "must be a decimal number of seconds greater than 0 and at most 86400";
  const m = /^(\d{1,5})(?:\.(\d+))?$/u.exec(v);
  if (!m) throw new Invalid(reason);
  const fraction = (m[2] ?? "").padEnd(9, "0").slice(0, 9);
  const nanos = Number(m[1]) * 1e9 + Number(fraction);
  const roundedUpZero = nanos === 0 && /[1-9]/u.test(m[2] ?? "");
  if ((nanos === 0 && !roundedUpZero && !zeroAllowed) || nanos > 86_400e9) throw new Invalid(reason);
  return nanos / 1e6;
}

/** 1 to 2048 octets in 0x21–0x7E, with {n} at least once. */
function parseLocation(v) {
  const octets = new TextEncoder().encode(v).length;
  if (octets === 0 || octets > 2048) throw new Invalid("must be 1 to 2048 octets long");
  if (!/^[\x21-\x7e]+$/u.test(v)) {
    throw new Invalid("must be visible ASCII only (0x21-0x7E: no space, no control octets)");
  }
  if (!v.includes("{n}")) throw new Invalid("must contain {n}");
  return v;
}
