//! One connection (SPEC §6, §7): reading, answering every complete request of a read
//! with one write, body discard, persistence, lingering close, deadlines.
//!
//! Memory contract: an idle connection holds no buffer. `leftover` holds only a partial
//! head (or input set aside while the output bound is reached); `unsent` holds only what
//! the socket did not take. Both are freed as soon as they empty.

use crate::clock::Moment;
use crate::context::{OUTPUT_BOUND, Scratch, Service};
use crate::metrics;
use crate::request::{self, Parse, Progress, Reject};
use crate::response::{self, Answer, Persistence, Status};
pub use crate::stream::Socket;
use crate::stream::Stream;
use std::io::{ErrorKind, Write};
use std::time::Duration;

/// Lingering close: longest wait, most octets discarded (SPEC §7.4).
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 * 1024;
/// Do not read into less than this much room; process what is held first.
const MIN_READ: usize = 4096;

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
    Lingering { until: Moment, discarded: usize },
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
pub struct Conn<S = Stream> {
    stream: S,
    phase: Phase,
    /// Partial head, or unprocessed input held while the output bound is reached.
    leftover: Vec<u8>,
    /// How far the partial head in `leftover` has been parsed.
    progress: Progress,
    /// Response octets the socket has not taken yet.
    unsent: Vec<u8>,
    /// Body octets still to discard (SPEC §6).
    body_left: u64,
    /// Start of the current head's deadline: the accept for the first request, the first
    /// octet for later ones; None when no head is in progress.
    head_started: Option<Moment>,
    /// Last time octets were received or the socket took response octets.
    last_progress: Moment,
    /// The peer has shut its write side: answer what is whole in `leftover`, then close.
    peer_done: bool,
}

impl<S: Socket> Conn<S> {
    /// A connection accepted at `now`.
    pub fn new(stream: S, now: Moment) -> Self {
        Conn {
            stream,
            phase: Phase::Open,
            leftover: Vec::new(),
            progress: Progress::default(),
            unsent: Vec::new(),
            body_left: 0,
            head_started: Some(now),
            last_progress: now,
            peer_done: false,
        }
    }

    /// The socket, to register it with the poll.
    pub fn stream_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Octets held: a partial head (or input set aside), and unsent output. The memory
    /// contract: at most [`crate::context::INPUT_BUFFER`] and [`OUTPUT_BOUND`].
    pub fn held(&self) -> (usize, usize) {
        (self.leftover.len(), self.unsent.len())
    }

    /// How readily the connection may be evicted when a new one arrives at the cap
    /// (SPEC §7.5, §7.5.1): None when it must not be (a complete request not answered,
    /// response octets not written, a body being discarded); else (class, since), and the
    /// smallest is chosen: 0 lingering close, 1 a partial head begun at `since`, 2 nothing
    /// received since `since`.
    pub fn eviction_rank(&self) -> Option<(u8, Moment)> {
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
    pub fn end_drain(&mut self, svc: &Service, s: &mut Scratch) -> Next {
        debug_assert!(s.draining);
        if self.phase == Phase::Open && self.unsent.is_empty() && self.read_requests(svc, s, false) == Next::Close {
            return Next::Close;
        }
        if self.phase == Phase::Open && self.unsent.is_empty() { Next::Close } else { Next::Keep }
    }

    /// When the connection expires and what happens then (SPEC §7.4, §7.5).
    pub fn deadline(&self, svc: &Service) -> (Moment, Expiry) {
        let idle = self.last_progress + svc.idle_timeout;
        match (self.phase, self.head_started) {
            (Phase::Lingering { until, .. }, _) => (until, Expiry::Close),
            _ if !self.unsent.is_empty() => (idle, Expiry::Close),
            (_, Some(start)) if !self.leftover.is_empty() => (start + svc.header_timeout, Expiry::RequestTimeout),
            (_, Some(start)) => ((start + svc.header_timeout).min(idle), Expiry::Close),
            (_, None) => (idle, Expiry::Close),
        }
    }

    /// The deadline passed: close, or answer 408 and close.
    pub fn expire(&mut self, svc: &Service, s: &mut Scratch) -> Next {
        match self.deadline(svc).1 {
            Expiry::Close => Next::Close,
            Expiry::RequestTimeout => {
                self.leftover = Vec::new();
                self.progress.next_request();
                respond(&Answer::refusal(Reject::Timeout), svc, s);
                self.phase = Phase::Closing { linger: true };
                self.flush(s)
            }
        }
    }

    /// Handle one readiness event: `events` are epoll's flags for the socket, read as mio
    /// reads them (EPOLLHUP, EPOLLERR, or EPOLLRDHUP with EPOLLIN: the peer closed).
    pub fn on_event(&mut self, events: u32, svc: &Service, s: &mut Scratch) -> Next {
        let has = |flag: libc::c_int| events & flag as u32 != 0;
        if has(libc::EPOLLOUT) && self.on_writable(svc, s) == Next::Close {
            return Next::Close;
        }
        let peer_closed = has(libc::EPOLLHUP) || has(libc::EPOLLERR) || (has(libc::EPOLLIN) && has(libc::EPOLLRDHUP));
        if has(libc::EPOLLIN) || has(libc::EPOLLPRI) || peer_closed {
            return self.on_readable(svc, s, peer_closed);
        }
        Next::Keep
    }

    /// The socket is readable; `peer_closed`: the event also reported the peer's FIN
    /// (then a short read does not mean drained: the end of input is still to be read).
    /// Inlined into the event loop, where the keep-alive request's wake goes through it
    /// (a call of its own cost 19 instructions per request under callgrind).
    #[inline(always)]
    pub fn on_readable(&mut self, svc: &Service, s: &mut Scratch, peer_closed: bool) -> Next {
        match self.phase {
            Phase::Open => self.read_requests(svc, s, peer_closed),
            Phase::Closing { .. } => Next::Keep,
            Phase::Lingering { .. } => self.linger(s),
        }
    }

    /// The socket is writable.
    pub fn on_writable(&mut self, svc: &Service, s: &mut Scratch) -> Next {
        if self.unsent.is_empty() {
            return Next::Keep;
        }
        if self.flush(s) == Next::Close {
            return Next::Close;
        }
        // Reading was paused while the output bound was reached: resume.
        if self.phase == Phase::Open && self.unsent.len() + s.max_response <= OUTPUT_BOUND {
            return self.read_requests(svc, s, false);
        }
        Next::Keep
    }

    /// Read and answer until the socket is drained, the output bound is reached, or the
    /// connection is closing. Edge-triggered: a read shorter than the room means drained,
    /// unless `peer_closed` says that the end of input waits behind the data.
    fn read_requests(&mut self, svc: &Service, s: &mut Scratch, peer_closed: bool) -> Next {
        while self.phase == Phase::Open && self.unsent.len() + s.max_response <= OUTPUT_BOUND {
            let held = self.leftover.len();
            if held > 0 {
                s.input[..held].copy_from_slice(&self.leftover);
                self.leftover = Vec::new();
            }
            let room = s.input.len() - held;
            let (received, drained) = if room < MIN_READ || self.peer_done {
                (0, false)
            } else {
                match self.stream.read(&mut s.input[held..]) {
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
                self.last_progress = s.now;
            }
            let paused = self.serve_held(svc, s, held + received);
            if self.peer_done && !paused && self.phase == Phase::Open {
                // Every whole request the peer sent is answered; a partial one never ends.
                // The peer has shut its side: nothing more can come, no need to linger.
                self.phase = Phase::Closing { linger: false };
                self.leftover = Vec::new();
            }
            if self.flush(s) == Next::Close {
                return Next::Close;
            }
            // Paused: `leftover` holds whole requests; go on once the output has room.
            if drained && !paused {
                break;
            }
        }
        Next::Keep
    }

    /// Answer the requests in `s.input[..len]`, keep what is left as `leftover`, and
    /// move the header deadline's start. True when stopped by the output bound.
    fn serve_held(&mut self, svc: &Service, s: &mut Scratch, len: usize) -> bool {
        if len == 0 {
            return false;
        }
        let input = std::mem::take(&mut s.input);
        let (consumed, answered, paused) = self.serve(&input[..len], svc, s);
        if consumed < len && self.phase == Phase::Open {
            self.leftover = input[consumed..len].to_vec();
        }
        s.input = input;
        if answered || self.head_started.is_none() {
            self.head_started = (!self.leftover.is_empty()).then_some(s.now);
        }
        paused
    }

    /// Answer every complete request at the start of `input` into `s.out`, discarding
    /// bodies. Returns the octets consumed, whether any request was answered, and whether
    /// it stopped at the output bound (else at the end, a partial head or a closing
    /// response).
    fn serve(&mut self, input: &[u8], svc: &Service, s: &mut Scratch) -> (usize, bool, bool) {
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
            if self.unsent.len() + s.out.len() + s.max_response > OUTPUT_BOUND {
                return (at, answered, true);
            }
            match request::parse_more(&input[at..], &mut self.progress) {
                Parse::Complete(req) => {
                    self.progress.next_request();
                    answered = true;
                    at += req.head_len;
                    let answer = response::answer(&req, s.count, svc.config.metrics, s.draining, &mut s.rng);
                    match s.hot.get(&answer) {
                        // The only answer of this read (one request per round trip): written
                        // from its prerendered bytes, without a copy into the batch.
                        Some(whole) if s.out.is_empty() && at == input.len() && self.unsent.is_empty() => {
                            s.counters.add(metrics::REDIRECT);
                            if self.send(whole, s.now).is_err() {
                                // The batch's write fails the same way and closes the connection.
                                s.out.extend_from_slice(whole);
                            }
                        }
                        Some(whole) => {
                            s.out.extend_from_slice(whole);
                            s.counters.add(metrics::REDIRECT);
                        }
                        None => respond(&answer, svc, s),
                    }
                    if answer.persistence == Persistence::Close {
                        // A request that asked to close, with nothing after it and no
                        // body to come, leaves the client nothing to send.
                        let done = !req.keep_alive
                            && !req.chunked
                            && req.content_length == 0
                            && !s.draining
                            && at == input.len();
                        self.phase = Phase::Closing { linger: !done };
                        return (input.len(), answered, false);
                    }
                    self.body_left = req.content_length;
                }
                Parse::Partial { empty_lines } => return (at + empty_lines, answered, false),
                Parse::Error(reject) => {
                    self.progress.next_request();
                    respond(&Answer::refusal(reject), svc, s);
                    self.phase = Phase::Closing { linger: true };
                    return (input.len(), true, false);
                }
            }
        }
    }

    /// Write `s.out` (then empty) after anything unsent; keep what the socket does not
    /// take. A closing connection whose output is all sent moves to lingering.
    #[inline(always)]
    fn flush(&mut self, s: &mut Scratch) -> Next {
        if !s.out.is_empty() {
            if self.unsent.is_empty() {
                if self.send(&s.out, s.now).is_err() {
                    s.out.clear();
                    return Next::Close;
                }
            } else {
                self.unsent.extend_from_slice(&s.out);
            }
            s.out.clear();
        } else if !self.unsent.is_empty() {
            match write_some(&mut self.stream, &self.unsent) {
                Ok(0) => {}
                Ok(n) => {
                    self.last_progress = s.now;
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
            if self.stream.shut_write().is_err() {
                return Next::Close;
            }
            self.leftover = Vec::new();
            self.phase = Phase::Lingering { until: s.now + LINGER_TIME, discarded: 0 };
            return self.linger(s);
        }
        Next::Keep
    }

    /// Write `bytes` (nothing being unsent before them) as far as the socket takes them now;
    /// the rest waits in `unsent`. Err when the socket failed.
    #[inline(always)]
    fn send(&mut self, bytes: &[u8], now: Moment) -> std::io::Result<()> {
        let n = write_some(&mut self.stream, bytes)?;
        if n > 0 {
            self.last_progress = now;
        }
        self.unsent.extend_from_slice(&bytes[n..]);
        Ok(())
    }

    /// Discard input after the write side is shut, until EOF, [`LINGER_BYTES`], or an
    /// error (the deadline is the caller's).
    fn linger(&mut self, s: &mut Scratch) -> Next {
        let Phase::Lingering { until, mut discarded } = self.phase else { return Next::Keep };
        loop {
            match self.stream.read(&mut s.input) {
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

/// Append the response for `answer` to `s.out` and count it (SPEC §8, metrics).
fn respond(answer: &Answer, svc: &Service, s: &mut Scratch) {
    match answer.status {
        Status::Metrics => response::write_metrics(&mut s.out, answer, &metrics::body(&svc.snapshot()), &s.date),
        _ => response::write(&mut s.out, answer, &s.content.redirects, &s.date),
    }
    s.counters.sent(answer.status);
}

/// Write as much of `bytes` as the socket takes now; Ok(0) when it takes nothing.
#[inline(always)]
fn write_some(stream: &mut impl Write, bytes: &[u8]) -> std::io::Result<usize> {
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
    use std::io::Read;

    /// A connection over loopback and the client's end of it.
    fn connected(now: Moment) -> (Conn, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        client.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        (Conn::new(Stream::new(server.into()), now), client)
    }

    /// The default configuration's service.
    fn service() -> Service {
        match crate::config::parse(Vec::new(), |_| None, 1) {
            Ok(crate::config::Command::Serve(config)) => Service::new(config),
            _ => unreachable!("the defaults are a configuration"),
        }
    }

    /// Read from `conn` until the client's bytes have arrived (loopback: at once).
    fn read_until_settled(conn: &mut Conn, svc: &Service, s: &mut Scratch) -> Next {
        std::thread::sleep(Duration::from_millis(20));
        conn.on_readable(svc, s, false)
    }

    #[test]
    fn fresh_connection_ranks_as_waiting_since_accept() {
        let (conn, _client) = connected(Moment::now());
        assert_eq!(conn.eviction_rank().map(|r| r.0), Some(2));
    }

    #[test]
    fn partial_head_ranks_before_waiting_and_after_lingering() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let (mut partial, mut client) = connected(s.now);
        client.write_all(b"GET / HTTP/1.1\r\nHo").unwrap();
        assert_eq!(read_until_settled(&mut partial, &svc, &mut s), Next::Keep);
        assert_eq!(partial.eviction_rank(), Some((1, s.now)));

        let (mut lingering, mut client) = connected(s.now);
        client.write_all(b"BAD\x01 / HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut lingering, &svc, &mut s), Next::Keep);
        assert_eq!(lingering.eviction_rank().map(|r| r.0), Some(0));
    }

    #[test]
    fn answered_connection_ranks_as_waiting_since_its_answer() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let (mut conn, mut client) = connected(s.now - Duration::from_secs(5));
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &svc, &mut s), Next::Keep);
        assert_eq!(conn.eviction_rank(), Some((2, s.now)));
    }

    #[test]
    fn connection_discarding_a_body_is_never_evicted() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let (mut conn, mut client) = connected(s.now);
        client.write_all(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nabc").unwrap();
        assert_eq!(read_until_settled(&mut conn, &svc, &mut s), Next::Keep);
        assert_eq!(conn.eviction_rank(), None);
    }

    #[test]
    fn request_during_drain_is_answered_with_close() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        s.draining = true;
        let (mut conn, mut client) = connected(s.now);
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &svc, &mut s), Next::Keep);
        let mut answer = [0u8; 512];
        let n = client.read(&mut answer).unwrap();
        assert!(answer[..n].ends_with(b"Content-Length: 0\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn end_of_drain_answers_what_arrived_and_closes_idle_and_partial() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        s.draining = true;
        let (mut idle, _c1) = connected(s.now);
        let (mut partial, mut c2) = connected(s.now);
        let (mut arrived, mut c3) = connected(s.now);
        c2.write_all(b"GET / HT").unwrap();
        assert_eq!(read_until_settled(&mut partial, &svc, &mut s), Next::Keep);
        c3.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(idle.end_drain(&svc, &mut s), Next::Close);
        assert_eq!(partial.end_drain(&svc, &mut s), Next::Close);
        assert_eq!(arrived.end_drain(&svc, &mut s), Next::Keep); // answered, now lingering
        let mut answer = [0u8; 512];
        let n = c3.read(&mut answer).unwrap();
        assert!(answer[..n].starts_with(b"HTTP/1.1 302 Found\r\n"));
    }

    #[test]
    fn every_response_is_counted_by_status() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let (mut conn, mut client) = connected(s.now);
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /?seed=x HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        client.write_all(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &svc, &mut s), Next::Keep);
        // Two 302 (the hot path and the seeded one), a 404 (no --metrics), a 400 (no Host).
        assert_eq!(svc.responses(), [0, 2, 1, 1, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn metrics_are_answered_when_asked_for() {
        let svc = match crate::config::parse(["--metrics".into()], |_| None, 1) {
            Ok(crate::config::Command::Serve(config)) => Service::new(config),
            _ => unreachable!("a configuration"),
        };
        let mut s = Scratch::new(&svc, 1);
        let (mut conn, mut client) = connected(s.now);
        client.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        assert_eq!(read_until_settled(&mut conn, &svc, &mut s), Next::Keep);
        let mut answers = vec![0u8; 8192];
        let n = client.read(&mut answers).unwrap();
        let text = String::from_utf8_lossy(&answers[..n]);
        let metrics = &text[text.find("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n").unwrap()..];
        let body = &metrics[metrics.find("\r\n\r\n").unwrap() + 4..];
        assert!(metrics.contains(&format!("\r\nContent-Length: {}\r\n", body.len())));
        assert!(body.contains("\nrenard_responses_total{status=\"302\"} 1\n"), "{body}");
        assert!(body.contains("\nrenard_open_connections 0\n")); // not counted by Conns here
    }

    /// An in-memory socket: reads `input`, takes at most `room` octets of output (then
    /// WouldBlock), or fails every write when `broken`.
    #[derive(Default)]
    struct Pipe {
        input: Vec<u8>,
        room: usize,
        written: Vec<u8>,
        broken: bool,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.input.is_empty() {
                return Err(ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.input.len());
            buf[..n].copy_from_slice(&self.input[..n]);
            self.input.drain(..n);
            Ok(n)
        }
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.broken {
                return Err(ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room);
            if n == 0 {
                return Err(ErrorKind::WouldBlock.into());
            }
            self.room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Socket for Pipe {
        fn shut_write(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lone_answer_the_socket_takes_in_part_is_finished_when_writable() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let pipe = Pipe { input: b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(), room: 10, ..Pipe::default() };
        let mut conn = Conn::new(pipe, s.now);
        assert_eq!(conn.on_readable(&svc, &mut s, false), Next::Keep);
        let (_, unsent) = conn.held();
        assert_eq!(conn.stream.written, b"HTTP/1.1 3");
        assert!(unsent > 100, "the rest of the answer waits: {unsent}");
        conn.stream.room = 4096;
        assert_eq!(conn.on_writable(&svc, &mut s), Next::Keep);
        assert_eq!(conn.held(), (0, 0));
        let written = String::from_utf8(conn.stream.written.clone()).unwrap();
        assert_eq!(written.len(), 10 + unsent);
        assert!(
            written.starts_with("HTTP/1.1 302 Found\r\nLocation: ")
                && written.ends_with("\r\nContent-Length: 0\r\n\r\n")
        );
        assert_eq!(svc.responses()[1], 1, "counted once, as a 302");
    }

    #[test]
    fn lone_answer_on_a_broken_socket_closes_the_connection() {
        let svc = service();
        let mut s = Scratch::new(&svc, 1);
        let pipe = Pipe { input: b"GET / HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(), broken: true, ..Pipe::default() };
        let mut conn = Conn::new(pipe, s.now);
        assert_eq!(conn.on_readable(&svc, &mut s, false), Next::Close);
        assert!(s.out.is_empty(), "nothing left in the thread's batch for the next connection");
    }
}
