// The seed (SPEC §3.1) and FNV-1a-64 over its decoded octets, in two 32-bit halves
// (no BigInt on the hot path): h = (h XOR b) * 0x100000001b3 mod 2^64.

/** FNV-1a-64 offset basis, high and low halves. */
export const FNV_OFFSET_HI = 0xcbf29ce4;
export const FNV_OFFSET_LO = 0x84222325;

/** A 64-bit hash as two unsigned 32-bit halves. */
export class Hash {
  constructor() {
    this.hi = FNV_OFFSET_HI;
    this.lo = FNV_OFFSET_LO;
  }

  /** One FNV-1a step. The prime is 2^40 + 0x1b3, so h * prime = h * 0x1b3 + (h << 40). */
  step(octet) {
    const lo = (this.lo ^ octet) >>> 0;
    const low = lo * 0x1b3; // < 2^41: exact in a double
    const carry = Math.floor(low / 0x1_0000_0000);
    this.hi = (this.hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    this.lo = low >>> 0;
  }

  /** The hash as a BigInt (tests and tools). */
  toBigInt() {
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** k = (hash mod n) + 1, for n in 1..1 000 000 (every product stays below 2^53). */
  pick(n) {
    return ((this.hi % n) * (0x1_0000_0000 % n) + this.lo) % n + 1;
  }
}

/** FNV-1a-64 of `octets` (tests and tools). */
export function fnv1a(octets) {
  const hash = new Hash();
  for (const b of octets) hash.step(b);
  return hash;
}

/**
 * The hash of the seed in the target `buf[from, to)` (path and query), or null when the
 * query has no parameter named `seed` (a random draw).
 * @param {Uint8Array} buf
 * @returns {Hash | null}
 */
export function seedHash(buf, from, to) {
  let at = buf.indexOf(0x3f /* ? */, from);
  if (at < 0 || at >= to) return null;
  at++;
  while (at <= to) {
    let end = buf.indexOf(0x26 /* & */, at);
    if (end < 0 || end > to) end = to;
    let eq = buf.indexOf(0x3d /* = */, at);
    if (eq < 0 || eq > end) eq = end;
    if (decodedEquals(buf, at, eq, SEED)) {
      const hash = new Hash();
      decode(buf, Math.min(eq + 1, end), end, (octet) => hash.step(octet));
      return hash;
    }
    at = end + 1;
  }
  return null;
}

const SEED = [0x73, 0x65, 0x65, 0x64]; // "seed"

/** Whether `buf[from, to)` decodes to exactly `expected`. */
function decodedEquals(buf, from, to, expected) {
  let i = 0;
  let equal = true;
  decode(buf, from, to, (octet) => {
    equal &&= i < expected.length && expected[i] === octet;
    i++;
  });
  return equal && i === expected.length;
}

/**
 * application/x-www-form-urlencoded over octets: `+` is 0x20, `%` and two hex digits is
 * that octet, any other `%` stays literal. Calls `emit` per decoded octet.
 */
export function decode(buf, from, to, emit) {
  for (let i = from; i < to; i++) {
    const b = buf[i];
    if (b === 0x2b) emit(0x20);
    else if (b === 0x25 && i + 2 < to && hex(buf[i + 1]) >= 0 && hex(buf[i + 2]) >= 0) {
      emit((hex(buf[i + 1]) << 4) | hex(buf[i + 2]));
      i += 2;
    } else emit(b);
  }
}

function hex(b) {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
}
