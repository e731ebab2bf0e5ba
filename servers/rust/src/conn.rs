//! One connection (SPEC §6, §7): reading, answering every complete request of a read
//! with one write, body discard, persistence, lingering close, deadlines.
//!
//! Memory contract: an idle connection holds no buffer. `leftover` holds only a partial
//! head (or input set aside while the output bound is reached); `unsent` holds only what
//! the socket did not take. Both are freed as soon as they empty.

use crate::request::{self, Parse, Reject, Route};
use crate::response::{self, DateLine, Persistence, Redirects, Status};
use mio::net::TcpStream;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::time::{Duration, Instant};

/// Most unsent response octets held per connection (SPEC §7.5).
pub const OUTPUT_BOUND: usize = 64 * 1024;
/// Lingering close: longest wait, most octets discarded (SPEC §7.4).
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 * 1024;
/// Do not read into less than this much room; process what is held first.
const MIN_READ: usize = 4096;

/// Per-thread state that every connection of the thread uses, one at a time.
pub struct Env<'a> {
    /// Read buffer; its contents do not outlive one call.
    pub input: Box<[u8]>,
    /// Responses of the current read batch, written at once.
    pub out: Vec<u8>,
    /// The current Date line.
    pub date: DateLine,
    /// Uniform draws for unseeded redirects.
    pub rng: fastrand::Rng,
    /// The time of the current event batch.
    pub now: Instant,
    /// N.
    pub count: u32,
    /// Rendered 302 heads.
    pub redirects: &'a Redirects,
    /// Longest possible response, in octets.
    pub max_response: usize,
    /// Absolute limit for a request head.
    pub header_timeout: Duration,
    /// Limit for silence (no request in progress) and for a stalled response.
    pub idle_timeout: Duration,
    /// SIGTERM/SIGINT seen: every response closes.
    pub shutting_down: bool,
}

/// Where a connection is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    /// Reading requests.
    Open,
    /// A closing response is queued; nothing more is read as requests. `linger`: the
    /// client may still be sending (an error, a body, pipelined input), so the close is
    /// staged (SPEC §7.4); else nothing more can come and the socket is closed at once.
    Closing { linger: bool },
    /// Write side shut; discarding input until `until` or [`LINGER_BYTES`].
    Lingering { until: Instant, discarded: usize },
}

/// What the caller does with the connection after an event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Next {
    /// Keep it registered.
    Keep,
    /// Drop it (closes the socket).
    Close,
}

/// What happens when a connection's deadline passes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Close without a response.
    Close,
    /// Answer 408, then close (a partial head was pending).
    RequestTimeout,
}

/// A client connection.
pub struct Conn {
    stream: TcpStream,
    phase: Phase,
    /// Partial head, or unprocessed input held while the output bound is reached.
    leftover: Vec<u8>,
    /// Response octets the socket has not taken yet.
    unsent: Vec<u8>,
    /// Body octets still to discard (SPEC §6).
    body_left: u64,
    /// Start of the current head's deadline: the accept for the first request, the first
    /// octet for later ones; None when no head is in progress.
    head_started: Option<Instant>,
    /// Last time octets were received or the socket took response octets.
    last_progress: Instant,
    /// The peer has shut its write side: answer what is whole in `leftover`, then close.
    peer_done: bool,
}

impl Conn {
    /// A connection accepted at `now`.
    pub fn new(stream: TcpStream, now: Instant) -> Self {
        Conn {
            stream,
            phase: Phase::Open,
            leftover: Vec::new(),
            unsent: Vec::new(),
            body_left: 0,
            head_started: Some(now),
            last_progress: now,
            peer_done: false,
        }
    }

    /// How readily the connection may be evicted when a new one arrives at the cap
    /// (SPEC §7.5, §7.5.1): None when it must not be (a complete request not answered,
    /// response octets not written, a body being discarded); else (class, since), and the
    /// smallest is chosen: 0 lingering close, 1 a partial head begun at `since`, 2 nothing
    /// received since `since`.
    pub fn eviction_rank(&self) -> Option<(u8, Instant)> {
        match self.phase {
            Phase::Lingering { until, .. } => Some((0, until)),
            Phase::Closing { .. } => None,
            Phase::Open if !self.unsent.is_empty() || self.body_left > 0 || self.peer_done => None,
            // A partial head; whole requests are held only while output waits (above).
            Phase::Open if !self.leftover.is_empty() => Some((1, self.head_started.unwrap_or(self.last_progress))),
            Phase::Open => Some((2, self.last_progress)),
        }
    }

    /// The drain window of SPEC §7.6 ended: answer what the socket already holds (with
    /// `Connection: close`), then close unless a response is under way.
    pub fn end_drain(&mut self, env: &mut Env) -> Next {
        debug_assert!(env.shutting_down);
        if self.phase == Phase::Open && self.unsent.is_empty() && self.read_requests(env, false) == Next::Close {
            return Next::Close;
        }
        if self.phase == Phase::Open && self.unsent.is_empty() { Next::Close } else { Next::Keep }
    }

    /// When the connection expires and what happens then (SPEC §7.4, §7.5).
    pub fn deadline(&self, env: &Env) -> (Instant, Expiry) {
        let idle = self.last_progress + env.idle_timeout;
        match (self.phase, self.head_started) {
            (Phase::Lingering { until, .. }, _) => (until, Expiry::Close),
            _ if !self.unsent.is_empty() => (idle, Expiry::Close),
            (_, Some(start)) if !self.leftover.is_empty() => (start + env.header_timeout, Expiry::RequestTimeout),
            (_, Some(start)) => ((start + env.header_timeout).min(idle), Expiry::Close),
            (_, None) => (idle, Expiry::Close),
        }
    }

    /// The deadline passed: close, or answer 408 and close.
    pub fn expire(&mut self, env: &mut Env) -> Next {
        match self.deadline(env).1 {
            Expiry::Close => Next::Close,
            Expiry::RequestTimeout => {
                self.leftover = Vec::new();
                response::write(&mut env.out, Status::Refused(Reject::Timeout), false, Persistence::Close, env.redirects, &env.date);
                self.phase = Phase::Closing { linger: true };
                self.flush(env)
            }
        }
    }

    /// The socket is readable; `peer_closed`: the event also reported the peer's FIN
    /// (then a short read does not mean drained: the end of input is still to be read).
    pub fn on_readable(&mut self, env: &mut Env, peer_closed: bool) -> Next {
        match self.phase {
            Phase::Open => self.read_requests(env, peer_closed),
            Phase::Closing { .. } => Next::Keep,
            Phase::Lingering { .. } => self.linger(env),
        }
    }

    /// The socket is writable.
    pub fn on_writable(&mut self, env: &mut Env) -> Next {
        if self.unsent.is_empty() {
            return Next::Keep;
        }
        if self.flush(env) == Next::Close {
            return Next::Close;
        }
        // Reading was paused while the output bound was reached: resume.
        if self.phase == Phase::Open && self.unsent.len() + env.max_response <= OUTPUT_BOUND {
            return self.read_requests(env, false);
        }
        Next::Keep
    }

    /// Read and answer until the socket is drained, the output bound is reached, or the
    /// connection is closing. Edge-triggered: a read shorter than the room means drained,
    /// unless `peer_closed` says that the end of input waits behind the data.
    fn read_requests(&mut self, env: &mut Env, peer_closed: bool) -> Next {
        while self.phase == Phase::Open && self.unsent.len() + env.max_response <= OUTPUT_BOUND {
            let held = self.leftover.len();
            env.input[..held].copy_from_slice(&self.leftover);
            self.leftover = Vec::new();
            let room = env.input.len() - held;
            let (received, drained) = if room < MIN_READ || self.peer_done {
                (0, false)
            } else {
                match self.stream.read(&mut env.input[held..]) {
                    Ok(0) => {
                        self.peer_done = true;
                        (0, false)
                    }
                    Ok(n) => (n, n < room && !peer_closed),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => (0, true),
                    Err(e) if e.kind() == ErrorKind::Interrupted => (0, false),
                    Err(_) => return Next::Close,
                }
            };
            if received > 0 {
                self.last_progress = env.now;
            }
            let paused = self.serve_held(env, held + received);
            if self.peer_done && !paused && self.phase == Phase::Open {
                // Every whole request the peer sent is answered; a partial one never ends.
                // The peer has shut its side: nothing more can come, no need to linger.
                self.phase = Phase::Closing { linger: false };
                self.leftover = Vec::new();
            }
            if self.flush(env) == Next::Close {
                return Next::Close;
            }
            // Paused: `leftover` holds whole requests; go on once the output has room.
            if drained && !paused {
                break;
            }
        }
        Next::Keep
    }

    /// Answer the requests in `env.input[..len]`, keep what is left as `leftover`, and
    /// move the header deadline's start. True when stopped by the output bound.
    fn serve_held(&mut self, env: &mut Env, len: usize) -> bool {
        if len == 0 {
            return false;
        }
        let input = std::mem::take(&mut env.input);
        let (consumed, answered, paused) = self.serve(&input[..len], env);
        if consumed < len && self.phase == Phase::Open {
            self.leftover = input[consumed..len].to_vec();
        }
        env.input = input;
        if answered || self.head_started.is_none() {
            self.head_started = (!self.leftover.is_empty()).then_some(env.now);
        }
        paused
    }

    /// Answer every complete request at the start of `input` into `env.out`, discarding
    /// bodies. Returns the octets consumed, whether any request was answered, and whether
    /// it stopped at the output bound (else at the end, a partial head or a closing
    /// response).
    fn serve(&mut self, input: &[u8], env: &mut Env) -> (usize, bool, bool) {
        let mut at = 0;
        let mut answered = false;
        loop {
            if self.body_left > 0 {
                let skip = self.body_left.min((input.len() - at) as u64);
                self.body_left -= skip;
                at += skip as usize;
            }
            if at == input.len() || self.body_left > 0 {
                return (at, answered, false);
            }
            if self.unsent.len() + env.out.len() + env.max_response > OUTPUT_BOUND {
                return (at, answered, true);
            }
            match request::parse(&input[at..]) {
                Parse::Complete(req) => {
                    answered = true;
                    at += req.head_len;
                    let close = env.shutting_down || !req.keep_alive || req.chunked || req.expect_continue;
                    let persistence = match (close, req.http10) {
                        (true, _) => Persistence::Close,
                        (false, true) => Persistence::KeepAlive,
                        (false, false) => Persistence::KeepOpen,
                    };
                    let status = match req.route {
                        Route::Redirect { seed: Some(hash) } => {
                            Status::Redirect { k: crate::seed::k_for_hash(hash, env.count), seeded: true }
                        }
                        Route::Redirect { seed: None } => {
                            let k = (env.rng.u64(..) % u64::from(env.count)) as u32 + 1;
                            Status::Redirect { k, seeded: false }
                        }
                        Route::Health => Status::Health,
                        Route::NotFound => Status::NotFound,
                        Route::MethodNotAllowed => Status::MethodNotAllowed,
                    };
                    response::write(&mut env.out, status, req.head_method, persistence, env.redirects, &env.date);
                    if close {
                        // A request that asked to close, with nothing after it and no
                        // body to come, leaves the client nothing to send.
                        let done = !req.keep_alive && !req.chunked && req.content_length == 0
                            && !env.shutting_down && at == input.len();
                        self.phase = Phase::Closing { linger: !done };
                        return (input.len(), answered, false);
                    }
                    self.body_left = req.content_length;
                }
                Parse::Partial { empty_lines } => return (at + empty_lines, answered, false),
                Parse::Error(reject) => {
                    response::write(&mut env.out, Status::Refused(reject), false, Persistence::Close, env.redirects, &env.date);
                    self.phase = Phase::Closing { linger: true };
                    return (input.len(), true, false);
                }
            }
        }
    }

    /// Write `env.out` (then empty) after anything unsent; keep what the socket does not
    /// take. A closing connection whose output is all sent moves to lingering.
    fn flush(&mut self, env: &mut Env) -> Next {
        if !env.out.is_empty() {
            if self.unsent.is_empty() {
                match write_some(&mut self.stream, &env.out) {
                    Ok(n) => {
                        if n > 0 {
                            self.last_progress = env.now;
                        }
                        self.unsent.extend_from_slice(&env.out[n..]);
                    }
                    Err(_) => {
                        env.out.clear();
                        return Next::Close;
                    }
                }
            } else {
                self.unsent.extend_from_slice(&env.out);
            }
            env.out.clear();
        } else if !self.unsent.is_empty() {
            match write_some(&mut self.stream, &self.unsent) {
                Ok(0) => {}
                Ok(n) => {
                    self.last_progress = env.now;
                    self.unsent.drain(..n);
                    if self.unsent.is_empty() {
                        self.unsent = Vec::new();
                    }
                }
                Err(_) => return Next::Close,
            }
        }
        if let (Phase::Closing { linger }, true) = (self.phase, self.unsent.is_empty()) {
            if !linger {
                return Next::Close;
            }
            if self.stream.shutdown(Shutdown::Write).is_err() {
                return Next::Close;
            }
            self.leftover = Vec::new();
            self.phase = Phase::Lingering { until: env.now + LINGER_TIME, discarded: 0 };
            return self.linger(env);
        }
        Next::Keep
    }

    /// Discard input after the write side is shut, until EOF, [`LINGER_BYTES`], or an
    /// error (the deadline is the caller's).
    fn linger(&mut self, env: &mut Env) -> Next {
        let Phase::Lingering { until, mut discarded } = self.phase else { return Next::Keep };
        loop {
            match self.stream.read(&mut env.input) {
                Ok(0) => return Next::Close,
                Ok(n) => {
                    discarded += n;
                    if discarded >= LINGER_BYTES {
                        return Next::Close;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Next::Close,
            }
        }
        self.phase = Phase::Lingering { until, discarded };
        Next::Keep
    }
}

/// Write as much of `bytes` as the socket takes now; Ok(0) when it takes nothing.
fn write_some(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match stream.write(&bytes[written..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::{DateLine, Redirects};
    use std::time::SystemTime;

    /// A connection over loopback and the client's end of it.
    fn connected(now: Instant) -> (Conn, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        client.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        (Conn::new(TcpStream::from_std(server), now), client)
    }

    fn env(redirects: &Redirects) -> Env<'_> {
        Env {
            input: vec![0; 128 * 1024].into_boxed_slice(),
            out: Vec::new(),
            date: DateLine::new(SystemTime::now()),
            rng: fastrand::Rng::with_seed(1),
            now: Instant::now(),
            count: 21,
            redirects,
            max_response: redirects.max_response_len(),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutting_down: false,
        }
    }

    /// Read from `conn` until the client's bytes have arrived (loopback: at once).
    fn read_until_settled(conn: &mut Conn, env: &mut Env) -> Next {
        std::thread::sleep(Duration::from_millis(20));
        conn.on_readable(env, false)
    }

    fn redirects() -> Redirects {
        Redirects::new(b"/{n}", 21)
    }

    #[test]
    fn fresh_connection_ranks_as_waiting_since_accept() {
        let (conn, _client) = connected(Instant::now());
        assert_eq!(conn.eviction_rank().map(|r| r.0), Some(2));
    }

    #[test]
    fn partial_head_ranks_before_waiting_and_after_lingering() {
        let redirects = redirects();
        let mut env = env(&redirects);
        let (mut partial, mut client) = connected(env.now);
        client.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
        assert_eq!(read_until_settled(&mut partial, &mut env), Next::Keep);
        assert_eq!(partial.eviction_rank(), Some((1, env.now)));

        let (mut lingering, mut client) = connected(env.now);
        client.write_all(b"BAD\x01 / HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut lingering, &mut env), Next::Keep);
        assert_eq!(lingering.eviction_rank().map(|r| r.0), Some(0));
    }

    #[test]
    fn answered_connection_ranks_as_waiting_since_its_answer() {
        let redirects = redirects();
        let mut env = env(&redirects);
        let (mut conn, mut client) = connected(env.now - Duration::from_secs(5));
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &mut env), Next::Keep);
        assert_eq!(conn.eviction_rank(), Some((2, env.now)));
    }

    #[test]
    fn connection_discarding_a_body_is_never_evicted() {
        let redirects = redirects();
        let mut env = env(&redirects);
        let (mut conn, mut client) = connected(env.now);
        client.write_all(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nabc").unwrap();
        assert_eq!(read_until_settled(&mut conn, &mut env), Next::Keep);
        assert_eq!(conn.eviction_rank(), None);
    }

    #[test]
    fn request_during_drain_is_answered_with_close() {
        let redirects = redirects();
        let mut env = env(&redirects);
        env.shutting_down = true;
        let (mut conn, mut client) = connected(env.now);
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &mut env), Next::Keep);
        let mut answer = [0u8; 512];
        let n = client.read(&mut answer).unwrap();
        assert!(answer[..n].ends_with(b"Content-Length: 0\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn end_of_drain_answers_what_arrived_and_closes_idle_and_partial() {
        let redirects = redirects();
        let mut env = env(&redirects);
        env.shutting_down = true;
        let (mut idle, _c1) = connected(env.now);
        let (mut partial, mut c2) = connected(env.now);
        let (mut arrived, mut c3) = connected(env.now);
        c2.write_all(b"GET / HT").unwrap();
        assert_eq!(read_until_settled(&mut partial, &mut env), Next::Keep);
        c3.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(idle.end_drain(&mut env), Next::Close);
        assert_eq!(partial.end_drain(&mut env), Next::Close);
        assert_eq!(arrived.end_drain(&mut env), Next::Keep); // answered, now lingering
        let mut answer = [0u8; 512];
        let n = c3.read(&mut answer).unwrap();
        assert!(answer[..n].starts_with(b"HTTP/1.1 302 Found\r\n"));
    }
}
