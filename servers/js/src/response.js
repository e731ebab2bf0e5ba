// Response octets (SPEC §4), as ASCII strings (every octet is 0x20–0x7E, CR or LF; the
// Location template is visible ASCII by SPEC §1). What does not change is rendered once:
// the 302 status and Location lines per k (when N is small), the fixed fields of every
// other status, and the Date line once per second.

/** Most k whose 302 head is rendered ahead of time (above, the template is filled per answer). */
const PRERENDER_MAX_COUNT = 1024;

/** The Connection field a response carries (SPEC §4, §7). */
export const KEEP_OPEN = 0; // HTTP/1.1 kept open: no field
export const KEEP_ALIVE = 1; // HTTP/1.0 kept open: `Connection: keep-alive`
export const CLOSE = 2; // the server closes after this response

const REDIRECT_START = "HTTP/1.1 302 Found\r\nLocation: ";
const NO_STORE = "Cache-Control: no-store\r\n";
const CACHEABLE = "Cache-Control: public, max-age=86400\r\n";

/** Status lines and fields before Date, per status. */
const HEADS = {
  200: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n",
  400: "HTTP/1.1 400 Bad Request\r\n",
  404: "HTTP/1.1 404 Not Found\r\n",
  405: "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n",
  408: "HTTP/1.1 408 Request Timeout\r\n",
  414: "HTTP/1.1 414 URI Too Long\r\n",
  431: "HTTP/1.1 431 Request Header Fields Too Large\r\n",
  501: "HTTP/1.1 501 Not Implemented\r\n",
  505: "HTTP/1.1 505 HTTP Version Not Supported\r\n",
};

/** Content-Length and Connection lines and the end of the head, per [empty body][persistence]. */
const TAILS = [
  ["Content-Length: 3\r\n\r\n", "Content-Length: 3\r\nConnection: keep-alive\r\n\r\n", "Content-Length: 3\r\nConnection: close\r\n\r\n"],
  ["Content-Length: 0\r\n\r\n", "Content-Length: 0\r\nConnection: keep-alive\r\n\r\n", "Content-Length: 0\r\nConnection: close\r\n\r\n"],
];

/** The longest line any status adds besides the 302 head, with slack, in octets. */
const OTHER_LINES = 192;

/** Renders every response of one process. */
export class Responses {
  /**
   * @param {string} template  the Location template (holds {n})
   * @param {number} count     N
   * @param {() => number} clock  milliseconds since the epoch
   */
  constructor(template, count, clock = Date.now) {
    this.pieces = template.split("{n}");
    this.clock = clock;
    /** @type {string[]} 302 heads (status and Location lines) per k - 1, when N is small. */
    this.redirects = [];
    if (count <= PRERENDER_MAX_COUNT) {
      for (let k = 1; k <= count; k++) this.redirects.push(this.renderRedirect(k));
    }
    /** The longest response any status can produce, in octets. */
    this.maxLength = REDIRECT_START.length + template.length + (this.pieces.length - 1) * 4 + 2 + OTHER_LINES;
    this.second = -1;
    this.date = "";
    this.tick();
  }

  renderRedirect(k) {
    return `${REDIRECT_START}${this.pieces.join(String(k))}\r\n`;
  }

  /** Re-render the Date line when the second changed; call once per batch of answers. */
  tick() {
    const now = this.clock();
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.date = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
    }
  }

  /** A 302 to k (SPEC §3); `seeded` selects the cache policy. */
  redirect(k, seeded, headMethod, persistence) {
    const head = k <= this.redirects.length ? this.redirects[k - 1] : this.renderRedirect(k);
    return head + (seeded ? CACHEABLE : NO_STORE) + this.date + TAILS[1][persistence];
  }

  /** 200 `ok\n` (no body to HEAD). */
  health(headMethod, persistence) {
    return HEADS[200] + this.date + TAILS[0][persistence] + (headMethod ? "" : "ok\n");
  }

  /** A response without a body: 400, 404, 405, 408, 414, 431, 501 or 505. */
  empty(status, persistence) {
    return HEADS[status] + this.date + TAILS[1][persistence];
  }
}
