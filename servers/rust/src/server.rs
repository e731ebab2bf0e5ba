//! The event loop of one thread (SPEC §7.5, §7.6). Each thread owns a listener (its own
//! SO_REUSEPORT socket on the same TCP port, or its own descriptor of the one Unix socket:
//! `listener.rs`), a mio poll, and its connections; the only state shared between threads
//! is the count of open connections (for the cap).

use crate::clock::Moment;
use crate::conn::{Conn, Next};
use crate::conns::Conns;
use crate::context::{Scratch, Service};
use crate::listener::Listener;
use mio::net::UnixStream;
use mio::{Interest, Poll, Registry, Token};
use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const LISTENER: Token = Token(usize::MAX);
const SIGNAL: Token = Token(usize::MAX - 1);
/// After the drain window, time left to finish responses already begun; the process
/// exits within the window plus 1 s (SPEC §7.6).
const FINISH_GRACE: Duration = Duration::from_millis(500);
/// Longest wait, when the drain begins, for the other threads to close their listeners: a
/// thread the machine does not run for that long does not hold back the others' drain.
/// Measured beside the flake campaign's busy loops and tests (20 drains, `--threads 2`, 8
/// keep-alive clients): every listener closed within 13.8 ms of the signal, a margin of
/// 17 times that.
const LISTENERS_WAIT: Duration = Duration::from_millis(250);

/// The shutdown of SPEC §7.6, once a signal came.
#[derive(Copy, Clone)]
enum Drain {
    /// Serving, every answer closing, until this instant.
    Window(Moment),
    /// The window is over: finishing responses until this instant, then exiting.
    Finishing(Moment),
}

/// Run one thread's event loop until shutdown completes.
pub fn run(svc: &Service, listener: Listener, mut signal: UnixStream) -> std::io::Result<()> {
    let poll = Poll::new()?;
    let mut listener = Some(listener);
    if let Some(listener) = &mut listener {
        poll.registry().register(listener, LISTENER, Interest::READABLE)?;
    }
    poll.registry().register(&mut signal, SIGNAL, Interest::READABLE)?;
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut s = Scratch::new(svc, u64::from_ne_bytes(seed));
    let mut conns = Conns::new(svc);
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut drain: Option<Drain> = None;
    loop {
        let wake = match drain {
            Some(Drain::Window(at) | Drain::Finishing(at)) => Some(conns.earliest_deadline().map_or(at, |d| d.min(at))),
            None => conns.earliest_deadline(),
        };
        // From the batch's clock reading: the work since then makes the wake later by that
        // much (microseconds), never earlier (SPEC §7.5 allows up to 1 s late).
        let timeout =
            wake.map_or(-1, |at| libc::c_int::try_from(s.now.millis_until(at) + 1).unwrap_or(libc::c_int::MAX));
        // The wait is epoll_wait on the poll's descriptor (mio registers the sockets): the
        // timeout goes in whole milliseconds as computed here, and the events come back as
        // epoll's flags, without mio's conversions on every wake (12 instructions, by callgrind).
        // SAFETY: `events` is writable for its length; the descriptor is the poll's.
        let ready =
            unsafe { libc::epoll_wait(poll.as_raw_fd(), events.as_mut_ptr(), events.len() as libc::c_int, timeout) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(e);
            }
        }
        s.tick();
        s.follow(svc);
        for event in &events[..ready.max(0) as usize] {
            match Token(event.u64 as usize) {
                LISTENER => {
                    if let Some(listener) = &listener {
                        accept_all(svc, listener, poll.registry(), &mut conns, &mut s, true);
                    }
                }
                SIGNAL => {
                    while matches!(signal.read(&mut [0u8; 64]), Ok(n) if n > 0) {}
                    if drain.is_none() {
                        drain = Some(start_drain(svc, &mut listener, poll.registry(), &mut conns, &mut s));
                    }
                }
                Token(index) => conns.with(index, |conn| conn.on_event(event.events, svc, &mut s)),
            }
        }
        conns.expire(&mut s);
        match drain {
            Some(Drain::Window(end)) if end <= s.now => {
                conns.each(|conn| conn.end_drain(svc, &mut s));
                drain = Some(Drain::Finishing(end + FINISH_GRACE));
            }
            Some(Drain::Finishing(end)) if end <= s.now => return Ok(()),
            _ => {}
        }
        if drain.is_some() && conns.is_empty() {
            return Ok(());
        }
    }
}

/// SPEC §7.6, in an order that keeps "a new connection is refused" true across threads:
/// this thread takes what the kernel has already queued on its listener (served in the
/// loop, with `Connection: close`), closes the listener, and waits until every thread has
/// closed its own (at most LISTENERS_WAIT) before it answers anything: a client told to
/// close must not reconnect to another thread's listener that has not seen the signal yet.
fn start_drain(
    svc: &Service,
    listener: &mut Option<Listener>,
    registry: &Registry,
    conns: &mut Conns,
    s: &mut Scratch,
) -> Drain {
    crate::notify::stopping();
    s.draining = true;
    if let Some(listener) = listener.take() {
        accept_all(svc, &listener, registry, conns, s, false);
        drop(listener); // closed before the count says so: no sibling answers while it listens
        svc.listening.fetch_sub(1, Ordering::Release);
    }
    let until = Instant::now() + LISTENERS_WAIT;
    while svc.listening.load(Ordering::Acquire) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    Drain::Window(s.now + svc.config.drain_timeout.min(svc.config.header_timeout))
}

/// Accept every pending connection and, when `read_now`, read it at once: a client's request
/// is usually there already, and a connection whose request is answered is not the one the
/// next arrival at the cap evicts. Unread, a connection is read when its first event comes
/// (registering a socket that holds input reports it readable).
fn accept_all(
    svc: &Service,
    listener: &Listener,
    registry: &Registry,
    conns: &mut Conns,
    s: &mut Scratch,
    read_now: bool,
) {
    loop {
        let stream = match listener.accept() {
            Ok(stream) => stream,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return, // WouldBlock, or out of descriptors: wait for the next event
        };
        if !conns.make_room() {
            continue; // dropped: closed unread (SPEC §7.5)
        }
        let mut conn = Conn::new(stream, s.now);
        let next = if read_now { conn.on_readable(svc, s, false) } else { Next::Keep };
        // Registered only if it stays: a request answered with `Connection: close` straight
        // from the accept never costs an epoll_ctl. Registering reports what is pending, so
        // input that arrived after the read above is not missed.
        let token = Token(conns.next_index());
        if next == Next::Keep
            && registry.register(conn.stream_mut(), token, Interest::READABLE | Interest::WRITABLE).is_err()
        {
            conns.unmake_room();
            continue;
        }
        conns.insert(conn, next);
    }
}
