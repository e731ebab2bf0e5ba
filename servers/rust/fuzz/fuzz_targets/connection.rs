//! Fuzz target for one connection as a whole (`renard::conn::Conn` over an in-memory
//! socket): arbitrary octets delivered in arbitrary pieces, interleaved with write room,
//! the peer's FIN, the clock and the drain of SPEC §7.6 in arbitrary orders. Invariants:
//! never panics; the answers are those of the requests, in order (checked against the
//! parser run over everything delivered); never more answers than complete requests (plus
//! one refusal or 408); nothing after a `Connection: close` answer, and no write after the
//! write side is shut; held input and output stay within their bounds (SPEC §7.5).
//! Run: `cargo fuzz run connection` (or `fuzz/run SECONDS`).
#![no_main]

use renard::config::{self, Command};
use renard::conn::{Conn, Expiry, Next, Socket};
use renard::context::{INPUT_BUFFER, OUTPUT_BOUND, Scratch, Service};
use renard::request::{Parse, Reject, Route, parse};
use std::cell::RefCell;
use std::io::{ErrorKind, Read, Write};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Duration;

/// The peer's side of the in-memory socket.
#[derive(Default)]
struct Wire {
    /// Octets sent by the client, not yet read by the server.
    unread: Vec<u8>,
    /// The client shut its side: reads end after `unread`.
    fin: bool,
    /// Octets the socket takes before it blocks.
    room: usize,
    /// Everything the server wrote.
    written: Vec<u8>,
    /// The server shut its write side.
    shut: bool,
}

#[derive(Clone, Default)]
struct Fake(Rc<RefCell<Wire>>);

impl Read for Fake {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut wire = self.0.borrow_mut();
        if wire.unread.is_empty() {
            return if wire.fin { Ok(0) } else { Err(ErrorKind::WouldBlock.into()) };
        }
        let n = buf.len().min(wire.unread.len());
        buf[..n].copy_from_slice(&wire.unread[..n]);
        wire.unread.drain(..n);
        Ok(n)
    }
}

impl Write for Fake {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut wire = self.0.borrow_mut();
        assert!(!wire.shut, "a write after the write side was shut");
        if wire.room == 0 {
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(wire.room);
        wire.room -= n;
        wire.written.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Socket for Fake {
    fn shut_write(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().shut = true;
        Ok(())
    }
}

fn service() -> &'static Service {
    static SERVICE: OnceLock<Service> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let args = ["--count", "21", "--header-timeout", "2", "--idle-timeout", "3"].map(Into::into);
        match config::parse(args, |_| None, 1) {
            Ok(Command::Serve(config)) => Service::new(config),
            _ => unreachable!("a valid configuration"),
        }
    })
}

/// The answers the requests in `delivered` call for, in order, as (status, body octets),
/// up to the first that closes; `timed_out`: a 408 ended a partial head.
fn expected_answers(delivered: &[u8], timed_out: bool) -> Vec<(u16, usize)> {
    let mut answers = Vec::new();
    let mut at = 0;
    loop {
        match parse(&delivered[at..]) {
            Parse::Complete(r) => {
                let status = match r.route {
                    Route::Redirect { .. } => 302,
                    Route::Health => 200,
                    Route::NotFound | Route::Metrics { .. } => 404, // without --metrics
                    Route::MethodNotAllowed => 405,
                };
                let body = if r.route == Route::Health && !r.head_method { 3 } else { 0 };
                answers.push((status, body));
                at += r.head_len;
                at += usize::try_from(r.content_length).unwrap_or(usize::MAX).min(delivered.len() - at);
                if !r.keep_alive || r.chunked || r.expect_continue {
                    return answers;
                }
            }
            Parse::Partial { .. } => {
                if timed_out {
                    answers.push((408, 0));
                }
                return answers;
            }
            Parse::Error(reject) => {
                let status = match reject {
                    Reject::BadRequest => 400,
                    Reject::Timeout => 408,
                    Reject::UriTooLong => 414,
                    Reject::FieldsTooLarge => 431,
                    Reject::NotImplemented => 501,
                    Reject::VersionNotSupported => 505,
                };
                answers.push((status, 0));
                return answers;
            }
        }
    }
}

/// The written octets are a prefix of the expected answers, each whole but maybe the
/// last (its head or its body cut where the socket's room ran out), and nothing follows a
/// `Connection: close` answer.
fn check_output(written: &[u8], expected: &[(u16, usize)]) {
    let mut pos = 0;
    for &(status, body) in expected {
        // Past the end: the last answer's body was cut (a whole head, part of its body).
        if pos >= written.len() {
            return;
        }
        let status_line = format!("HTTP/1.1 {status} ");
        let rest = &written[pos..];
        assert!(
            rest.starts_with(status_line.as_bytes()) || status_line.as_bytes().starts_with(rest),
            "expected {status}, got {:?}",
            String::from_utf8_lossy(&rest[..rest.len().min(40)])
        );
        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else { return };
        let closes = rest[..end].windows(19).any(|w| w == b"\r\nConnection: close");
        pos += end + 4 + body;
        if closes {
            assert!(pos >= written.len(), "octets after a Connection: close answer");
            return;
        }
    }
    assert!(pos >= written.len(), "more answers than requests");
}

thread_local! {
    /// One thread's scratch state, reused (its 128 KiB buffer would dominate a run).
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new(service(), 1));
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| SCRATCH.with_borrow_mut(|s| one_connection(data, s)));

fn one_connection(data: &[u8], s: &mut Scratch) {
    let svc = service();
    s.tick();
    s.draining = false;
    s.out.clear();
    let fake = Fake::default();
    let mut conn = Conn::new(fake.clone(), s.now);
    let mut delivered = Vec::new();
    // Set when a 408 ends a partial head: the octets the request stream had then.
    let mut timed_out: Option<usize> = None;
    let mut ops = data.iter().copied();
    let mut next = Next::Keep;
    while next == Next::Keep {
        let Some(op) = ops.next() else { break };
        next = match op % 8 {
            // The client sends a piece (length from the next octet): a readable event.
            0..=2 => {
                let len = usize::from(ops.next().unwrap_or(0));
                let piece: Vec<u8> = ops.by_ref().take(len).collect();
                if fake.0.borrow().fin {
                    continue; // nothing can follow the client's FIN
                }
                delivered.extend_from_slice(&piece);
                fake.0.borrow_mut().unread.extend_from_slice(&piece);
                conn.on_readable(svc, s, false)
            }
            // The socket takes more output: a writable event.
            3 | 4 => {
                fake.0.borrow_mut().room += 64 * usize::from(ops.next().unwrap_or(0));
                conn.on_writable(svc, s)
            }
            // The client shuts its side.
            5 => {
                fake.0.borrow_mut().fin = true;
                conn.on_readable(svc, s, true)
            }
            // Time passes (up to 5.1 s); the deadline is applied when it has passed.
            6 => {
                s.now += Duration::from_millis(20 * u64::from(ops.next().unwrap_or(0)));
                let (at, expiry) = conn.deadline(svc);
                if at <= s.now {
                    if expiry == Expiry::RequestTimeout {
                        timed_out = Some(delivered.len());
                    }
                    conn.expire(svc, s)
                } else {
                    Next::Keep
                }
            }
            // The drain begins, or its window ends.
            _ if !s.draining => {
                s.draining = true;
                Next::Keep
            }
            _ => conn.end_drain(svc, s),
        };
        let (input, output) = conn.held();
        assert!(input <= INPUT_BUFFER && output <= OUTPUT_BOUND, "held {input} in, {output} out");
    }
    let expected = match timed_out {
        Some(len) => expected_answers(&delivered[..len], true),
        None => expected_answers(&delivered, false),
    };
    check_output(&fake.0.borrow().written, &expected);
}
