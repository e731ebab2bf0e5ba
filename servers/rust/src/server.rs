//! Listeners and the event loop of one thread (SPEC §7.5, §7.6). Each thread owns a
//! SO_REUSEPORT listener on the same address, a mio poll, and its connections; the only
//! state shared between threads is the count of open connections (for the cap).

use crate::config::Config;
use crate::conn::{Conn, Env, Next};
use crate::response::{DateLine, Redirects};
use mio::net::{TcpListener, UnixStream};
use mio::{Events, Interest, Poll, Token};
use std::io::{ErrorKind, Read};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

const LISTENER: Token = Token(usize::MAX);
const SIGNAL: Token = Token(usize::MAX - 1);
/// Read buffer per thread, in octets: larger than the largest head (about 24.6 KiB), and
/// at the allocator's mmap threshold, so that its pages cost memory only once read into.
const INPUT_BUFFER: usize = 128 * 1024;
/// After the drain window, time left to finish responses already begun; the process
/// exits within the window plus 1 s (SPEC §7.6).
const FINISH_GRACE: Duration = Duration::from_millis(500);

/// What every thread reads; built once.
pub struct Shared {
    /// The configuration.
    pub config: Config,
    /// Rendered 302 heads.
    pub redirects: Redirects,
    /// Open connections across all threads.
    pub open: AtomicUsize,
}

/// A listening socket on `addr` with SO_REUSEPORT, so that every thread can bind one.
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(TcpListener::from_std(socket.into()))
}

/// The connections of one thread, indexed by token.
struct Slots {
    slots: Vec<Option<Conn>>,
    free: Vec<usize>,
    live: usize,
}

impl Slots {
    /// The connection to close for a newcomer at the cap (SPEC §7.5), if any may go. A
    /// scan of this thread's connections: it runs only at the cap, and costs about what
    /// accepting and answering that many connections did.
    fn eviction_victim(&self) -> Option<usize> {
        let ranked = self.slots.iter().enumerate();
        ranked.filter_map(|(index, slot)| Some((slot.as_ref()?.eviction_rank()?, index))).min().map(|(_, index)| index)
    }

    fn insert(&mut self, conn: Conn) -> usize {
        self.live += 1;
        match self.free.pop() {
            Some(index) => {
                self.slots[index] = Some(conn);
                index
            }
            None => {
                self.slots.push(Some(conn));
                self.slots.len() - 1
            }
        }
    }

    /// Drop the connection at `index` (closing its socket). When none is left, memory
    /// returns to its baseline.
    fn remove(&mut self, index: usize) {
        if self.slots[index].take().is_some() {
            self.live -= 1;
            self.free.push(index);
            if self.live == 0 {
                self.slots = Vec::new();
                self.free = Vec::new();
            }
        }
    }
}

/// Run one thread's event loop until shutdown completes.
pub fn run(shared: &Shared, mut listener: TcpListener, mut signal: UnixStream) -> std::io::Result<()> {
    let mut poll = Poll::new()?;
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE)?;
    poll.registry().register(&mut signal, SIGNAL, Interest::READABLE)?;
    let mut listener = Some(listener);
    let mut events = Events::with_capacity(1024);
    let config = &shared.config;
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut env = Env {
        input: vec![0; INPUT_BUFFER].into_boxed_slice(),
        out: Vec::with_capacity(crate::conn::OUTPUT_BOUND),
        date: DateLine::new(SystemTime::now()),
        rng: fastrand::Rng::with_seed(u64::from_ne_bytes(seed)),
        now: Instant::now(),
        count: config.count,
        redirects: &shared.redirects,
        max_response: shared.redirects.max_response_len(),
        header_timeout: config.header_timeout,
        idle_timeout: config.idle_timeout,
        shutting_down: false,
    };
    let mut conns = Slots { slots: Vec::new(), free: Vec::new(), live: 0 };
    // No connection's deadline is before this instant (None: no connection).
    let mut next_scan: Option<Instant> = None;
    // SPEC §7.6: the drain window's end (None once it has passed), then the exit deadline.
    let mut drain_end: Option<Instant> = None;
    let mut exit_by: Option<Instant> = None;
    loop {
        let wake = [next_scan, drain_end, exit_by].into_iter().flatten().min();
        let timeout = wake.map(|at| at.saturating_duration_since(Instant::now()) + Duration::from_millis(1));
        match poll.poll(&mut events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        env.now = Instant::now();
        env.date.update(SystemTime::now());
        for event in events.iter() {
            match event.token() {
                LISTENER => {
                    if let Some(listener) = &listener {
                        accept_all(shared, listener, poll.registry(), &mut conns, &mut env, &mut next_scan);
                    }
                }
                SIGNAL => {
                    let mut drain = [0u8; 64];
                    while matches!(signal.read(&mut drain), Ok(n) if n > 0) {}
                    if !env.shutting_down {
                        // Drain (SPEC §7.6): refuse new connections at once; keep serving,
                        // every answer closing, until the window ends.
                        env.shutting_down = true;
                        // What the kernel has already accepted is served, not reset.
                        if let Some(listener) = listener.take() {
                            accept_all(shared, &listener, poll.registry(), &mut conns, &mut env, &mut next_scan);
                        }
                        let end = env.now + config.drain_timeout.min(config.header_timeout);
                        drain_end = Some(end);
                        exit_by = Some(end + FINISH_GRACE);
                    }
                }
                Token(index) => {
                    let Some(Some(conn)) = conns.slots.get_mut(index) else { continue };
                    let mut next = Next::Keep;
                    if event.is_writable() {
                        next = conn.on_writable(&mut env);
                    }
                    if next == Next::Keep && (event.is_readable() || event.is_read_closed() || event.is_error()) {
                        next = conn.on_readable(&mut env, event.is_read_closed() || event.is_error());
                    }
                    match next {
                        Next::Keep => {
                            let at = conn.deadline(&env).0;
                            next_scan = Some(next_scan.map_or(at, |n| n.min(at)));
                        }
                        Next::Close => {
                            conns.remove(index);
                            shared.open.fetch_sub(1, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
        if next_scan.is_some_and(|at| at <= env.now) {
            next_scan = expire(&mut conns, &mut env, shared);
        }
        if drain_end.is_some_and(|at| at <= env.now) {
            drain_end = None;
            for index in 0..conns.slots.len() {
                let Some(Some(conn)) = conns.slots.get_mut(index) else { continue };
                if conn.end_drain(&mut env) == Next::Close {
                    conns.remove(index);
                    shared.open.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        if env.shutting_down && (conns.live == 0 || exit_by.is_some_and(|at| at <= env.now)) {
            shared.open.fetch_sub(conns.live, Ordering::Relaxed);
            return Ok(());
        }
    }
}

/// Accept every pending connection. At the cap, the new connection takes the place of
/// the least client-like one of this thread, or is closed at once if none may go
/// (SPEC §7.5).
fn accept_all(
    shared: &Shared,
    listener: &TcpListener,
    registry: &mio::Registry,
    conns: &mut Slots,
    env: &mut Env,
    next_scan: &mut Option<Instant>,
) {
    loop {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return, // WouldBlock, or out of descriptors: wait for the next event
        };
        if shared.open.fetch_add(1, Ordering::Relaxed) >= shared.config.max_connections {
            shared.open.fetch_sub(1, Ordering::Relaxed);
            match conns.eviction_victim() {
                // The victim's place in the count passes to the new connection.
                Some(victim) => conns.remove(victim),
                None => continue, // drops (closes) the new connection unread
            }
        }
        let _ = stream.set_nodelay(true);
        let index = conns.free.last().copied().unwrap_or(conns.slots.len());
        if registry.register(&mut stream, Token(index), Interest::READABLE | Interest::WRITABLE).is_err() {
            shared.open.fetch_sub(1, Ordering::Relaxed);
            continue;
        }
        // Read at once: a client's request is usually there already, and a connection
        // with its request answered is not the one an attacker's next arrival evicts.
        let mut conn = Conn::new(stream, env.now);
        if conn.on_readable(env, false) == Next::Close {
            shared.open.fetch_sub(1, Ordering::Relaxed);
            continue;
        }
        let at = conn.deadline(env).0;
        *next_scan = Some(next_scan.map_or(at, |n| n.min(at)));
        conns.insert(conn);
    }
}

/// Apply every passed deadline; return the earliest deadline left (None: no connection).
fn expire(conns: &mut Slots, env: &mut Env, shared: &Shared) -> Option<Instant> {
    let mut earliest: Option<Instant> = None;
    for index in 0..conns.slots.len() {
        let Some(Some(conn)) = conns.slots.get_mut(index) else { continue };
        let (at, _) = conn.deadline(env);
        let next = if at <= env.now { conn.expire(env) } else { Next::Keep };
        match next {
            Next::Keep => {
                let at = conn.deadline(env).0;
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
            Next::Close => {
                conns.remove(index);
                shared.open.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
    earliest
}
