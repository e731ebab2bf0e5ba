//! Response bytes (SPEC §4). Every part that does not change is rendered once: the 302
//! status and `Location` line per k when N is small (else template pieces + itoa), the
//! fixed fields of every other status, and the `Date` line once per second.

use crate::request::{Reject, Request, Route};
use crate::seed;
use std::time::{SystemTime, UNIX_EPOCH};

/// Most k whose 302 head is rendered ahead of time (above this, template pieces + itoa).
const PRERENDER_MAX_COUNT: u32 = 256;
/// Most octets spent on prerendered 302 heads.
const PRERENDER_MAX_BYTES: usize = 64 * 1024;

/// The `Connection` field a response carries (SPEC §4, §7).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// HTTP/1.1 kept open: no field.
    KeepOpen,
    /// HTTP/1.0 kept open: `Connection: keep-alive`.
    KeepAlive,
    /// The server closes after this response: `Connection: close`.
    Close,
}

/// What to answer, before the connection's decision about persistence.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// 302 to k (1..=N); `seeded` selects the cache policy.
    Redirect { k: u32, seeded: bool },
    /// 200 `ok\n`.
    Health,
    /// 404.
    NotFound,
    /// 405 with `Allow`.
    MethodNotAllowed,
    /// 200 with the metrics (SPEC §8), rendered by [`write_metrics`].
    Metrics,
    /// 400, 408, 414, 431, 501 or 505.
    Refused(Reject),
}

/// Byte strings for k = 1, 2, ..., stored end to end: one allocation, one slice per k.
struct PerK {
    bytes: Vec<u8>,
    /// `bounds[k-1]..bounds[k]` is k's string in `bytes`.
    bounds: Vec<usize>,
}

impl PerK {
    fn new() -> Self {
        PerK { bytes: Vec::new(), bounds: vec![0] }
    }

    /// How many values of k have a string.
    fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Close the string that `bytes` has grown by since the last push, as the next k's.
    fn push_end(&mut self) {
        self.bounds.push(self.bytes.len());
    }

    /// k's string, if it has one.
    #[inline]
    fn get(&self, k: u32) -> Option<&[u8]> {
        let k = k as usize;
        match *self.bounds.get(k.wrapping_sub(1)..=k)? {
            [start, end] => Some(&self.bytes[start..end]),
            _ => None,
        }
    }
}

/// The 302 heads (status line + `Location` line), rendered per k or from pieces.
pub struct Redirects {
    /// `HTTP/1.1 302 Found\r\nLocation: …\r\n` for k = 1..=N, when N is small.
    prerendered: PerK,
    /// The template split at each `{n}` (one more piece than placeholders).
    pieces: Vec<Vec<u8>>,
}

const REDIRECT_START: &[u8] = b"HTTP/1.1 302 Found\r\nLocation: ";

impl Redirects {
    /// Render the heads for `count` values of k into `template` (which holds `{n}`).
    pub fn new(template: &[u8], count: u32) -> Self {
        let pieces = split_template(template);
        let mut redirects = Redirects { prerendered: PerK::new(), pieces };
        let per_k = REDIRECT_START.len() + template.len() + 2 * 7;
        if count <= PRERENDER_MAX_COUNT && per_k * count as usize <= PRERENDER_MAX_BYTES {
            let mut heads = PerK::new();
            for k in 1..=count {
                redirects.render_head(&mut heads.bytes, k);
                heads.push_end();
            }
            redirects.prerendered = heads;
        }
        redirects
    }

    /// The longest response any status can produce, in octets.
    pub fn max_response_len(&self) -> usize {
        let placeholders = self.pieces.len() - 1;
        let template: usize = self.pieces.iter().map(Vec::len).sum();
        // Seven digits for k <= 1 000 000; 192 covers every other line of any response.
        REDIRECT_START.len() + template + 7 * placeholders + 2 + 192
    }

    /// Append the status line and `Location` line for k.
    #[inline]
    pub fn write_head(&self, out: &mut Vec<u8>, k: u32) {
        match self.prerendered.get(k) {
            Some(head) => out.extend_from_slice(head),
            None => self.render_head(out, k),
        }
    }

    fn render_head(&self, out: &mut Vec<u8>, k: u32) {
        out.extend_from_slice(REDIRECT_START);
        let mut digits = itoa::Buffer::new();
        let k = digits.format(k).as_bytes();
        let (last, placeholders) = self.pieces.split_last().expect("at least one piece");
        for piece in placeholders {
            out.extend_from_slice(piece);
            out.extend_from_slice(k);
        }
        out.extend_from_slice(last);
        out.extend_from_slice(b"\r\n");
    }
}

/// `template` split at each `{n}` (one more piece than placeholders).
pub fn split_template(template: &[u8]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(at) = rest.windows(3).position(|w| w == b"{n}") {
        pieces.push(rest[..at].to_vec());
        rest = &rest[at + 3..];
    }
    pieces.push(rest.to_vec());
    pieces
}

/// The `Date` line, re-rendered when the second changes (per thread).
pub struct DateLine {
    /// Seconds since the epoch that `line` shows.
    second: u64,
    /// `Date: <IMF-fixdate>\r\n`.
    line: [u8; DATE_LINE_LEN],
}

const DATE_LINE_LEN: usize = 6 + 29 + 2;

impl DateLine {
    /// A line showing `now`.
    pub fn new(now: SystemTime) -> Self {
        let mut date = DateLine { second: u64::MAX, line: [0; DATE_LINE_LEN] };
        date.update(now);
        date
    }

    /// Show `now`; renders only when the second changed, and says whether it did.
    #[inline]
    pub fn update(&mut self, now: SystemTime) -> bool {
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let changed = second != self.second;
        if changed {
            self.second = second;
            let text = httpdate::fmt_http_date(now);
            self.line[..6].copy_from_slice(b"Date: ");
            self.line[6..35].copy_from_slice(&text.as_bytes()[..29]);
            self.line[35..].copy_from_slice(b"\r\n");
        }
        changed
    }

    /// The bytes of the line, CRLF included.
    pub fn bytes(&self) -> &[u8] {
        &self.line
    }
}

/// Whole responses to the commonest request, `GET /` without a seed on a connection kept
/// open, one per k, when the 302 heads are prerendered (N ≤ 256): such an answer is one
/// copy. Per thread: the Date line inside each is patched in place when the second changes.
pub struct Hot {
    responses: PerK,
    /// Where each response's Date line starts.
    dates: Vec<usize>,
}

impl Hot {
    /// The responses for every k, showing `date`; none when the heads are not prerendered.
    pub fn new(redirects: &Redirects, date: &DateLine) -> Self {
        let mut hot = Hot { responses: PerK::new(), dates: Vec::new() };
        for k in 1..=redirects.prerendered.len() as u32 {
            let bytes = &mut hot.responses.bytes;
            let start = bytes.len();
            let answer = Answer {
                status: Status::Redirect { k, seeded: false },
                head_method: false,
                persistence: Persistence::KeepOpen,
            };
            write(bytes, &answer, redirects, date);
            let date_at = bytes[start..].windows(8).position(|w| w == b"\r\nDate: ").expect("a Date line") + 2;
            hot.dates.push(start + date_at);
            hot.responses.push_end();
        }
        hot
    }

    /// Show `date` in every response.
    pub fn set_date(&mut self, date: &DateLine) {
        for &at in &self.dates {
            self.responses.bytes[at..at + DATE_LINE_LEN].copy_from_slice(date.bytes());
        }
    }

    /// The whole response for `answer`, if it is one of these.
    #[inline]
    pub fn get(&self, answer: &Answer) -> Option<&[u8]> {
        match *answer {
            Answer { status: Status::Redirect { k, seeded: false }, persistence: Persistence::KeepOpen, .. } => {
                self.responses.get(k)
            }
            _ => None,
        }
    }
}

/// A response decided: its status, whether it has a body, what follows it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// What to answer.
    pub status: Status,
    /// A HEAD request: no body (SPEC §4).
    pub head_method: bool,
    /// The `Connection` field, and whether the server closes after it.
    pub persistence: Persistence,
}

impl Answer {
    /// The answer to a refused head: its status, then close (SPEC §7.2).
    pub fn refusal(reject: Reject) -> Self {
        Answer { status: Status::Refused(reject), head_method: false, persistence: Persistence::Close }
    }
}

/// The answer to a complete request, decided here and nowhere else: the route's status,
/// k in 1..=`count` drawn from `rng` or given by the seed (SPEC §3), `/metrics` as
/// `metrics` (`--metrics`) says (SPEC §8), and persistence (SPEC §7.1, §7.2; `draining`:
/// every answer closes, §7.6).
#[inline]
pub fn answer(request: &Request, count: u32, metrics: bool, draining: bool, rng: &mut fastrand::Rng) -> Answer {
    let status = match request.route {
        Route::Redirect { seed: Some(hash) } => Status::Redirect { k: seed::k_for_hash(hash, count), seeded: true },
        Route::Redirect { seed: None } => Status::Redirect { k: k_drawn(rng, count), seeded: false },
        Route::Health => Status::Health,
        Route::NotFound => Status::NotFound,
        Route::Metrics { .. } if !metrics => Status::NotFound,
        Route::Metrics { readable: true } => Status::Metrics,
        Route::MethodNotAllowed | Route::Metrics { readable: false } => Status::MethodNotAllowed,
    };
    let close = draining || !request.keep_alive || request.chunked || request.expect_continue;
    let persistence = match (close, request.http10) {
        (true, _) => Persistence::Close,
        (false, true) => Persistence::KeepAlive,
        (false, false) => Persistence::KeepOpen,
    };
    Answer { status, head_method: request.head_method, persistence }
}

/// k uniform in 1..=`count`: a 64-bit draw reduced modulo N, bias below 2⁻⁴⁴ for
/// N ≤ 10⁶ (SPEC §3 asks for less than 10⁻⁹).
pub fn k_drawn(rng: &mut fastrand::Rng, count: u32) -> u32 {
    (rng.u64(..) % u64::from(count)) as u32 + 1
}

/// Append the whole response to `out`. `redirects` renders 302 heads; `date` is the
/// current Date line. A [`Status::Metrics`] answer carries no metrics here: the
/// connection renders it with [`write_metrics`].
pub fn write(out: &mut Vec<u8>, answer: &Answer, redirects: &Redirects, date: &DateLine) {
    let Answer { status, head_method, persistence } = *answer;
    let mut body: &[u8] = b"";
    match status {
        Status::Metrics => return write_metrics(out, answer, b"", date),
        Status::Redirect { k, seeded } => {
            redirects.write_head(out, k);
            out.extend_from_slice(if seeded {
                b"Cache-Control: public, max-age=86400\r\n"
            } else {
                b"Cache-Control: no-store\r\n"
            });
        }
        Status::Health => {
            out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n");
            body = b"ok\n";
        }
        Status::NotFound => out.extend_from_slice(b"HTTP/1.1 404 Not Found\r\n"),
        Status::MethodNotAllowed => out.extend_from_slice(b"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"),
        Status::Refused(reject) => out.extend_from_slice(match reject {
            Reject::BadRequest => b"HTTP/1.1 400 Bad Request\r\n",
            Reject::Timeout => b"HTTP/1.1 408 Request Timeout\r\n",
            Reject::UriTooLong => b"HTTP/1.1 414 URI Too Long\r\n",
            Reject::FieldsTooLarge => b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
            Reject::NotImplemented => b"HTTP/1.1 501 Not Implemented\r\n",
            Reject::VersionNotSupported => b"HTTP/1.1 505 HTTP Version Not Supported\r\n",
        }),
    }
    out.extend_from_slice(date.bytes());
    let tail: &[u8] = match (body.is_empty(), persistence) {
        (true, Persistence::KeepOpen) => b"Content-Length: 0\r\n\r\n",
        (true, Persistence::KeepAlive) => b"Content-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        (true, Persistence::Close) => b"Content-Length: 0\r\nConnection: close\r\n\r\n",
        (false, Persistence::KeepOpen) => b"Content-Length: 3\r\n\r\n",
        (false, Persistence::KeepAlive) => b"Content-Length: 3\r\nConnection: keep-alive\r\n\r\n",
        (false, Persistence::Close) => b"Content-Length: 3\r\nConnection: close\r\n\r\n",
    };
    out.extend_from_slice(tail);
    if !head_method {
        out.extend_from_slice(body);
    }
}

/// Append the `/metrics` response with `body` (SPEC §8): a 200 whose fields are those of
/// `/healthz` with the exposition format's `Content-Type`, and a body of any length.
pub fn write_metrics(out: &mut Vec<u8>, answer: &Answer, body: &[u8], date: &DateLine) {
    out.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nCache-Control: no-store\r\n");
    out.extend_from_slice(date.bytes());
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
    out.extend_from_slice(match answer.persistence {
        Persistence::KeepOpen => b"\r\n\r\n",
        Persistence::KeepAlive => b"\r\nConnection: keep-alive\r\n\r\n",
        Persistence::Close => b"\r\nConnection: close\r\n\r\n",
    });
    if !answer.head_method {
        out.extend_from_slice(body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const TEMPLATE: &[u8] = b"https://avatar.example.org/Renard-{n}.png";

    /// 2026-11-22 00:00:00 UTC.
    fn midnight() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_795_305_600)
    }

    fn render(status: Status, head: bool, persistence: Persistence, count: u32) -> String {
        let mut out = Vec::new();
        let answer = Answer { status, head_method: head, persistence };
        write(&mut out, &answer, &Redirects::new(TEMPLATE, count), &DateLine::new(midnight()));
        String::from_utf8(out).unwrap()
    }

    const DATE: &str = "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\n";

    #[test]
    fn redirect_is_byte_exact() {
        assert_eq!(
            render(Status::Redirect { k: 7, seeded: false }, false, Persistence::KeepOpen, 21),
            format!(
                "HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-7.png\r\nCache-Control: no-store\r\n{DATE}Content-Length: 0\r\n\r\n"
            )
        );
    }

    #[test]
    fn seeded_redirect_is_cacheable() {
        assert!(
            render(Status::Redirect { k: 1, seeded: true }, false, Persistence::KeepOpen, 21)
                .contains("\r\nCache-Control: public, max-age=86400\r\nDate: ")
        );
    }

    #[test]
    fn large_count_renders_from_pieces_like_prerendered() {
        let status = Status::Redirect { k: 21, seeded: false };
        assert_eq!(
            render(status, false, Persistence::KeepOpen, 1_000_000),
            render(status, false, Persistence::KeepOpen, 21)
        );
    }

    #[test]
    fn every_placeholder_is_replaced() {
        let mut out = Vec::new();
        Redirects::new(b"/{n}/{n}x{n}", 5).write_head(&mut out, 5);
        assert_eq!(out, b"HTTP/1.1 302 Found\r\nLocation: /5/5x5\r\n");
    }

    #[test]
    fn last_k_of_million_is_rendered() {
        let mut out = Vec::new();
        Redirects::new(b"{n}", 1_000_000).write_head(&mut out, 1_000_000);
        assert_eq!(out, b"HTTP/1.1 302 Found\r\nLocation: 1000000\r\n");
    }

    #[test]
    fn health_has_type_cache_and_body() {
        assert_eq!(
            render(Status::Health, false, Persistence::KeepOpen, 21),
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n{DATE}Content-Length: 3\r\n\r\nok\n"
            )
        );
    }

    #[test]
    fn metrics_response_is_byte_exact() {
        let mut out = Vec::new();
        let answer = Answer { status: Status::Metrics, head_method: false, persistence: Persistence::Close };
        write_metrics(&mut out, &answer, b"a 1\n", &DateLine::new(midnight()));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nCache-Control: no-store\r\n{DATE}Content-Length: 4\r\nConnection: close\r\n\r\na 1\n"
            )
        );
    }

    #[test]
    fn head_metrics_keeps_length_drops_body() {
        let mut out = Vec::new();
        let answer = Answer { status: Status::Metrics, head_method: true, persistence: Persistence::KeepOpen };
        write_metrics(&mut out, &answer, b"a 1\n", &DateLine::new(midnight()));
        assert!(out.ends_with(b"Content-Length: 4\r\n\r\n"));
    }

    #[test]
    fn metrics_path_is_not_found_unless_asked_for() {
        let request = |method: &str| match crate::request::parse(
            format!("{method} /metrics HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes(),
        ) {
            crate::request::Parse::Complete(request) => request,
            other => panic!("{other:?}"),
        };
        let mut rng = fastrand::Rng::with_seed(1);
        let mut status = |method, on| answer(&request(method), 21, on, false, &mut rng).status;
        assert_eq!(status("GET", false), Status::NotFound);
        assert_eq!(status("POST", false), Status::NotFound);
        assert_eq!(status("GET", true), Status::Metrics);
        assert_eq!(status("HEAD", true), Status::Metrics);
        assert_eq!(status("POST", true), Status::MethodNotAllowed);
    }

    #[test]
    fn head_health_keeps_length_drops_body() {
        assert!(render(Status::Health, true, Persistence::KeepOpen, 21).ends_with("Content-Length: 3\r\n\r\n"));
    }

    #[test]
    fn method_not_allowed_carries_allow() {
        assert_eq!(
            render(Status::MethodNotAllowed, false, Persistence::KeepOpen, 21),
            format!("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n{DATE}Content-Length: 0\r\n\r\n")
        );
    }

    #[test]
    fn refusal_closes() {
        assert_eq!(
            render(Status::Refused(Reject::FieldsTooLarge), false, Persistence::Close, 21),
            format!(
                "HTTP/1.1 431 Request Header Fields Too Large\r\n{DATE}Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
        );
    }

    #[test]
    fn http10_keep_alive_is_announced() {
        assert!(
            render(Status::NotFound, false, Persistence::KeepAlive, 21)
                .ends_with("Content-Length: 0\r\nConnection: keep-alive\r\n\r\n")
        );
    }

    #[test]
    fn hot_responses_equal_rendered_ones_and_follow_the_date() {
        let redirects = Redirects::new(TEMPLATE, 21);
        let mut date = DateLine::new(midnight());
        let mut hot = Hot::new(&redirects, &date);
        date.update(midnight() + Duration::from_secs(1));
        hot.set_date(&date);
        for k in [1, 7, 21] {
            let answer = Answer {
                status: Status::Redirect { k, seeded: false },
                head_method: true,
                persistence: Persistence::KeepOpen,
            };
            let mut rendered = Vec::new();
            write(&mut rendered, &answer, &redirects, &date);
            assert_eq!(hot.get(&answer), Some(rendered.as_slice()));
        }
        let closing = Answer {
            status: Status::Redirect { k: 1, seeded: false },
            head_method: false,
            persistence: Persistence::Close,
        };
        assert_eq!(hot.get(&closing), None);
        assert!(Hot::new(&Redirects::new(TEMPLATE, 1_000_000), &date).get(&closing).is_none());
    }

    #[test]
    fn per_k_strings_are_found_by_k_and_only_for_1_to_len() {
        let mut strings = PerK::new();
        for text in [&b"one"[..], b"", b"three"] {
            strings.bytes.extend_from_slice(text);
            strings.push_end();
        }
        assert_eq!(strings.len(), 3);
        assert_eq!([1, 2, 3].map(|k| strings.get(k)), [Some(&b"one"[..]), Some(&b""[..]), Some(&b"three"[..])]);
        assert_eq!((strings.get(0), strings.get(4)), (None, None));
    }

    #[test]
    fn date_line_changes_only_with_the_second() {
        let mut date = DateLine::new(midnight());
        date.update(midnight() + Duration::from_millis(999));
        assert_eq!(date.bytes(), DATE.as_bytes());
        date.update(midnight() + Duration::from_secs(1));
        assert_eq!(date.bytes(), b"Date: Sun, 22 Nov 2026 00:00:01 GMT\r\n");
    }
}
