// Request heads (SPEC §2, §5, §6, §7.1): one entry point, `parse`, with three outcomes
// (complete, need more, error). One pass over the octets: every check of rules 1–6 is
// made at the octet that decides it (SPEC §5), the first that fails wins; rules 7–9 at
// the empty line. The flagship's parser makes the same checks at the same octets, so
// that both answer the same bytes on any input (the tests pin the edge cases).

import { seedHash } from "./seed.js";

/** Longest request line served, in octets without its line end (SPEC §5 rule 3). */
export const MAX_REQUEST_LINE = 8192;
/** Longest field section, from after the request line to the empty line included (rule 6). */
export const MAX_FIELD_SECTION = 16384;
/** Most field lines in one head (rule 6). */
export const MAX_FIELD_LINES = 100;

/** Outcomes of `parse`. */
export const COMPLETE = 0;
export const PARTIAL = 1;
export const ERROR = 2;

/** Routes of a complete request (SPEC §2). */
export const REDIRECT = 0;
export const HEALTH = 1;
export const NOT_FOUND = 2;
export const METHOD_NOT_ALLOWED = 3;

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** RFC 9110 tchar, as a table. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  TCHAR[c.charCodeAt(0)] = 1;
}
/** Octets of a field value: HTAB, 0x20–0x7E, obs-text 0x80–0xFF (rule 5). */
const VALUE_OCTET = new Uint8Array(256);
/** RFC 3986 unreserved and sub-delims (rule 7). */
const HOST_OCTET = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  VALUE_OCTET[b] = b === HTAB || (b >= 0x20 && b !== 0x7f) ? 1 : 0;
}
for (const c of "-._~!$&'()*+,;=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
  HOST_OCTET[c.charCodeAt(0)] = 1;
}

/**
 * What `parse` found. One object per call; its fields depend on `outcome`.
 * @typedef {object} Parsed
 * @property {number} outcome          COMPLETE, PARTIAL or ERROR
 * @property {number} status           ERROR: 400, 414, 431, 501 or 505
 * @property {number} end              COMPLETE: index after the head (leading empty lines
 *                                     included); PARTIAL: index after the leading empty
 *                                     lines, which the caller may drop
 * @property {number} route            COMPLETE: REDIRECT, HEALTH, NOT_FOUND, METHOD_NOT_ALLOWED
 * @property {import("./seed.js").Hash | null} seed  REDIRECT: the seed's hash, or null
 * @property {boolean} headMethod      HEAD: no body in the answer
 * @property {boolean} http10          HTTP/1.0 (else HTTP/1.1)
 * @property {boolean} keepAlive       persists by the request's own terms (SPEC §7.1)
 * @property {number} contentLength   body octets to discard (SPEC §6)
 * @property {boolean} chunked         Transfer-Encoding: chunked: answer, then close
 * @property {boolean} expectContinue  HTTP/1.1 Expect: 100-continue with a body
 */

const partial = (end) => ({ outcome: PARTIAL, end });
const error = (status) => ({ outcome: ERROR, status });

/**
 * Parse the request head at `buf[from, to)` (SPEC §5).
 * @param {Uint8Array} buf
 * @returns {Parsed}
 */
export function parse(buf, from, to) {
  // Rule 1: empty lines before the request line are dropped as they come.
  let start = from;
  for (;;) {
    if (start === to) return partial(start);
    if (buf[start] === LF) start += 1;
    else if (buf[start] === CR) {
      if (start + 1 === to) return partial(start);
      if (buf[start + 1] !== LF) return error(400);
      start += 2;
    } else break;
  }
  const head = readHead(buf, start, to);
  if (head.outcome === PARTIAL) return partial(start);
  if (head.outcome === ERROR) return head;
  return interpret(buf, head, head.end);
}

/**
 * Rules 2–6 on the head that starts at `buf[start]`, in one pass, each check made at the
 * octet that decides it: the first octet that cannot continue a valid head is its error,
 * and a run of octets that passes the request line's or the field section's limit is
 * 414 or 431 wherever it stops (so a limit passed before a bad octet decides first).
 * Running out of octets is PARTIAL; a whole head is COMPLETE with its parts located.
 */
function readHead(buf, start, to) {
  const lineLimit = start + MAX_REQUEST_LINE;
  let i = start;
  // Method: a token, then one SP.
  while (i < to && TCHAR[buf[i]]) i++;
  if (i > lineLimit) return error(414);
  if (i === to) return PARTIAL_HEAD;
  if (buf[i] !== SP || i === start) return error(400);
  const methodEnd = i++;
  // Target: visible ASCII, at least one octet, then one SP.
  const targetStart = i;
  while (i < to && buf[i] >= 0x21 && buf[i] <= 0x7e) i++;
  if (i > lineLimit) return error(414);
  if (i === to) return PARTIAL_HEAD;
  if (buf[i] !== SP || i === targetStart) return error(400);
  const targetEnd = i++;
  // Version: `HTTP/` DIGIT `.` DIGIT, octet by octet (rule 4), then the line end.
  const versionStart = i;
  while (i < to && i - versionStart < 8 && fitsVersion(buf[i], i - versionStart)) i++;
  if (i > lineLimit) return error(414);
  if (i === to) return PARTIAL_HEAD;
  if (i - versionStart !== 8 || (buf[i] !== CR && buf[i] !== LF)) return error(400);
  const line = endOfLine(buf, i, to); // rule 2 before rule 4
  if (line !== OK) return line;
  const major = buf[versionStart + 5];
  const minor = buf[versionStart + 7];
  if (major !== 0x31 || (minor !== 0x30 && minor !== 0x31)) return error(505);
  const http10 = minor === 0x30;
  i = lineEnd;
  // Field lines: `name ":" OWS value OWS`, until the empty line (rules 5 and 6).
  const sectionLimit = i + MAX_FIELD_SECTION;
  const fields = [];
  for (;;) {
    if (i === to) return PARTIAL_HEAD;
    const b = buf[i];
    if (b === CR || b === LF) {
      const end = endOfLine(buf, i, to);
      if (end !== OK) return end;
      if (lineEnd > sectionLimit) return error(431);
      return { outcome: COMPLETE, end: lineEnd, methodEnd, targetStart, targetEnd, http10, fields, start };
    }
    if (!TCHAR[b]) return error(400); // obs-fold, or no name (rule 5)
    const nameStart = i;
    while (i < to && TCHAR[buf[i]]) i++;
    if (i > sectionLimit) return error(431);
    if (i === to) return PARTIAL_HEAD;
    if (buf[i] !== COLON) return error(400); // whitespace before the colon too
    const nameEnd = i++;
    while (i < to && (buf[i] === SP || buf[i] === HTAB)) i++;
    if (i > sectionLimit) return error(431);
    if (i === to) return PARTIAL_HEAD;
    const valueStart = i;
    while (i < to && VALUE_OCTET[buf[i]]) i++;
    if (i > sectionLimit) return error(431);
    if (i === to) return PARTIAL_HEAD;
    if (buf[i] !== CR && buf[i] !== LF) return error(400); // a control octet or DEL
    let valueEnd = i;
    const end = endOfLine(buf, i, to);
    if (end !== OK) return end;
    if (fields.length / 4 + 1 > MAX_FIELD_LINES) return error(431);
    while (valueEnd > valueStart && (buf[valueEnd - 1] === SP || buf[valueEnd - 1] === HTAB)) valueEnd--;
    fields.push(nameStart, nameEnd, valueStart, valueEnd);
    i = lineEnd;
    if (i > sectionLimit) return error(431);
  }
}

/** Whether `b` can be octet `at` of `HTTP/` DIGIT `.` DIGIT. */
function fitsVersion(b, at) {
  if (at < 5) return b === "HTTP/".charCodeAt(at);
  if (at === 6) return b === 0x2e;
  return b >= 0x30 && b <= 0x39;
}

const PARTIAL_HEAD = { outcome: PARTIAL, end: 0 };
const OK = null;
/** Where the line end found by the last `endOfLine` call ends. */
let lineEnd = 0;

/** A line end (CRLF or LF) at `buf[i]`: OK (and `lineEnd` set), PARTIAL_HEAD or a 400. */
function endOfLine(buf, i, to) {
  if (buf[i] === LF) {
    lineEnd = i + 1;
    return OK;
  }
  if (i + 1 === to) return PARTIAL_HEAD;
  if (buf[i + 1] !== LF) return error(400);
  lineEnd = i + 2;
  return OK;
}

function startsWith(buf, at, ascii) {
  for (let i = 0; i < ascii.length; i++) if (buf[at + i] !== ascii.charCodeAt(i)) return false;
  return true;
}

/** Whether `buf[from, to)` equals the lower-case ASCII `name`, ignoring ASCII case. */
function equalsIgnoreCase(buf, from, to, name) {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) if ((buf[from + i] | 0x20) !== name.charCodeAt(i)) return false;
  return true;
}

/** Rules 7–9 on a head that passed rules 1–6; `end` is the index after it. */
function interpret(buf, head, end) {
  const { fields, http10 } = head;
  let hostLines = 0;
  let contentLength = -1;
  let contentLengthLines = 0;
  let codingsStart = -1;
  let codingsEnd = -1;
  let transferEncodingLines = 0;
  let close = false;
  let keepAliveToken = false;
  let expectContinue = false;
  for (let f = 0; f < fields.length; f += 4) {
    const n0 = fields[f], n1 = fields[f + 1], v0 = fields[f + 2], v1 = fields[f + 3];
    if (equalsIgnoreCase(buf, n0, n1, "host")) {
      hostLines++;
      if (!isValidHost(buf, v0, v1)) return error(400);
    } else if (equalsIgnoreCase(buf, n0, n1, "content-length")) {
      contentLengthLines++;
      contentLength = parseContentLength(buf, v0, v1);
    } else if (equalsIgnoreCase(buf, n0, n1, "transfer-encoding")) {
      transferEncodingLines++;
      codingsStart = v0;
      codingsEnd = v1;
    } else if (equalsIgnoreCase(buf, n0, n1, "connection")) {
      forEachListElement(buf, v0, v1, (t0, t1) => {
        close ||= equalsIgnoreCase(buf, t0, t1, "close");
        keepAliveToken ||= equalsIgnoreCase(buf, t0, t1, "keep-alive");
      });
    } else if (equalsIgnoreCase(buf, n0, n1, "expect")) {
      expectContinue = equalsIgnoreCase(buf, v0, v1, "100-continue");
    }
  }
  // Rule 7: exactly one Host on HTTP/1.1, at most one on HTTP/1.0.
  if (hostLines > 1 || (!http10 && hostLines === 0)) return error(400);
  // Rule 8.
  if (contentLengthLines > 1 || (contentLengthLines === 1 && contentLength < 0)) return error(400);
  let chunked = false;
  if (transferEncodingLines > 0) {
    if (contentLengthLines > 0 || http10 || transferEncodingLines > 1) return error(400);
    const status = checkTransferCodings(buf, codingsStart, codingsEnd);
    if (status !== 0) return error(status);
    chunked = true;
  }
  contentLength = Math.max(contentLength, 0);
  // Rule 9: the path of an origin-form or absolute-form target (SPEC §2).
  let { targetStart: t0, targetEnd: t1 } = head;
  if (buf[t0] !== 0x2f) {
    const scheme = startsWithIgnoreCase(buf, t0, t1, "http://") ? 7 : startsWithIgnoreCase(buf, t0, t1, "https://") ? 8 : 0;
    if (scheme === 0) return error(400);
    let a = t0 + scheme;
    while (a < t1 && buf[a] !== 0x2f && buf[a] !== 0x3f && buf[a] !== 0x23) a++;
    if (a === t0 + scheme) return error(400);
    t0 = a;
  }
  let pathEnd = buf.indexOf(0x3f, t0);
  if (pathEnd < 0 || pathEnd > t1) pathEnd = t1;
  const m0 = head.start, m1 = head.methodEnd;
  const isGet = m1 - m0 === 3 && startsWith(buf, m0, "GET");
  const isHead = m1 - m0 === 4 && startsWith(buf, m0, "HEAD");
  const isRoot = pathEnd === t0 || (pathEnd - t0 === 1 && buf[t0] === 0x2f);
  const isHealth = pathEnd - t0 === 8 && startsWith(buf, t0, "/healthz");
  let route = NOT_FOUND;
  let seed = null;
  if (isRoot || isHealth) {
    route = !(isGet || isHead) ? METHOD_NOT_ALLOWED : isRoot ? REDIRECT : HEALTH;
    if (route === REDIRECT) seed = seedHash(buf, t0, t1);
  }
  return {
    outcome: COMPLETE,
    end,
    route,
    seed,
    headMethod: isHead,
    http10,
    keepAlive: !close && (!http10 || keepAliveToken),
    contentLength,
    chunked,
    expectContinue: expectContinue && !http10 && contentLength > 0,
  };
}

function startsWithIgnoreCase(buf, from, to, lower) {
  return to - from >= lower.length && equalsIgnoreCase(buf, from, from + lower.length, lower);
}

/** Calls `each(start, end)` per comma-separated element of `buf[from, to)`, OWS trimmed. */
function forEachListElement(buf, from, to, each) {
  let at = from;
  for (;;) {
    let end = buf.indexOf(0x2c, at);
    if (end < 0 || end > to) end = to;
    let s = at, e = end;
    while (s < e && (buf[s] === SP || buf[s] === HTAB)) s++;
    while (e > s && (buf[e - 1] === SP || buf[e - 1] === HTAB)) e--;
    each(s, e);
    if (end === to) return;
    at = end + 1;
  }
}

/** Rule 8 on a Transfer-Encoding value: 0 when it is exactly `chunked`; 400 when the
 * last coding is not chunked or an element is empty; 501 for codings before chunked. */
function checkTransferCodings(buf, from, to) {
  let count = 0;
  let empty = false;
  let last = [from, from];
  forEachListElement(buf, from, to, (s, e) => {
    empty ||= s === e;
    count++;
    last = [s, e];
  });
  if (empty || !equalsIgnoreCase(buf, last[0], last[1], "chunked")) return 400;
  return count > 1 ? 501 : 0;
}

/** Content-Length: 1 to 18 digits, nothing else (rule 8); -1 when invalid. Values above
 * 2^53 lose precision, which only shortens a discard no client will ever finish. */
function parseContentLength(buf, from, to) {
  if (to === from || to - from > 18) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i] - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Rule 7: empty, or `host [":" port]`: a reg-name or IPv4 (unreserved, sub-delims, %)
 * or an IP-literal in brackets, and digits for the port. */
function isValidHost(buf, from, to) {
  if (from === to) return true;
  let i = from;
  if (buf[i] === 0x5b) {
    const close = buf.indexOf(0x5d, from);
    if (close < 0 || close >= to || close === from + 1) return false;
    for (i = from + 1; i < close; i++) if (!HOST_OCTET[buf[i]] && buf[i] !== COLON) return false;
    i = close + 1;
  } else {
    while (i < to && buf[i] !== COLON) {
      if (!HOST_OCTET[buf[i]] && buf[i] !== 0x25) return false;
      i++;
    }
  }
  if (i === to) return true;
  if (buf[i] !== COLON) return false;
  for (i++; i < to; i++) if (buf[i] < 0x30 || buf[i] > 0x39) return false;
  return true;
}
