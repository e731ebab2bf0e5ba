//! The listening sockets (SPEC §1, §8): TCP, one `SO_REUSEPORT` listener per thread on one
//! port; or a Unix stream socket at a path (`--listen unix:PATH`), one socket that every
//! thread polls through a descriptor of its own; or the one a service manager passed. Either
//! way a connection is a [`Stream`], so the event loop and the connections are one code.

use crate::config::{Listen, Owner};
use crate::stream::Stream;
use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Registry, Token};
use socket2::{Domain, SockAddr, Type};
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Pending connections the kernel queues per listening socket.
const BACKLOG: i32 = 4096;

/// A listening socket an event loop accepts from.
pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    /// The next pending connection, non-blocking (WouldBlock: none).
    pub fn accept(&self) -> io::Result<Stream> {
        match self {
            // TCP_NODELAY is the listener's, which Linux copies to the sockets it accepts
            // (set by `no_delay`): no setsockopt per connection.
            Listener::Tcp(listener) => {
                listener.accept().map(|(stream, _)| Stream::new(OwnedFd::from(std::net::TcpStream::from(stream))))
            }
            Listener::Unix(listener) => listener
                .accept()
                .map(|(stream, _)| Stream::new(OwnedFd::from(std::os::unix::net::UnixStream::from(stream)))),
        }
    }
}

impl mio::event::Source for Listener {
    fn register(&mut self, registry: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        match self {
            Listener::Tcp(listener) => listener.register(registry, token, interests),
            Listener::Unix(listener) => listener.register(registry, token, interests),
        }
    }
    fn reregister(&mut self, registry: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        match self {
            Listener::Tcp(listener) => listener.reregister(registry, token, interests),
            Listener::Unix(listener) => listener.reregister(registry, token, interests),
        }
    }
    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        match self {
            Listener::Tcp(listener) => listener.deregister(registry),
            Listener::Unix(listener) => listener.deregister(registry),
        }
    }
}

/// What renard listens on once bound.
pub struct Listening {
    /// One per thread.
    pub listeners: Vec<Listener>,
    /// For the `listening on` line: `http://127.0.0.1:8080`, `unix:/run/renard.sock`.
    pub shown: String,
    /// The socket file renard made (removed at a clean exit), if it made one.
    pub file: Option<SocketFile>,
}

/// Why listening failed: the stderr line and the exit status (1: the address cannot be
/// had; 2: the command line names something renard must not take, SPEC §1).
#[derive(Debug)]
pub struct Failure {
    pub line: String,
    pub status: i32,
}

/// Listen where `config` says, with `threads` listeners.
pub fn bind(listen: &Listen, mode: u32, owner: Option<&Owner>, threads: usize) -> Result<Listening, Failure> {
    match listen {
        Listen::Tcp(addr) => bind_tcp(*addr, threads),
        Listen::Unix(path) => bind_unix(path, mode, owner, threads),
    }
}

/// `threads` TCP listeners on `addr`; the first bind decides the port when 0 is asked.
fn bind_tcp(addr: SocketAddr, threads: usize) -> Result<Listening, Failure> {
    let cannot_bind = |e: io::Error| Failure { line: format!("renard: --listen: cannot bind {addr}: {e}"), status: 1 };
    let first = bind_reuseport(addr).map_err(cannot_bind)?;
    let bound = first.local_addr().map_err(cannot_bind)?;
    let mut listeners = vec![Listener::Tcp(first)];
    for _ in 1..threads {
        listeners.push(Listener::Tcp(bind_reuseport(bound).map_err(cannot_bind)?));
    }
    Ok(Listening { listeners, shown: format!("http://{bound}"), file: None })
}

/// A listening socket on `addr` with SO_REUSEPORT, so that every thread can bind one.
pub fn bind_reuseport(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = socket2::Socket::new(Domain::for_address(addr), Type::STREAM, Some(socket2::Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    no_delay(&socket)?;
    defer_accept(&socket)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(TcpListener::from_std(socket.into()))
}

/// TCP_NODELAY on a listening socket: every socket it accepts starts with it (Linux copies a
/// listener's options to the connections it accepts), so a response is sent as soon as it is
/// written, without a system call per connection.
fn no_delay(listener: &socket2::Socket) -> io::Result<()> {
    listener.set_tcp_nodelay(true)
}

/// How long the kernel holds a new TCP connection that has sent nothing before handing it
/// to accept anyway (SPEC §7.5: a silent connection's header deadline starts then): one
/// second, which Linux rounds to its first SYN-ACK retransmission (measured: accepted
/// 1.02 s after the connect).
pub const DEFER_ACCEPT_S: u32 = 1;

/// TCP_DEFER_ACCEPT on a listening socket: a connection becomes acceptable when its first
/// octets arrive (or after [`DEFER_ACCEPT_S`]), so one wake-up accepts it and reads its
/// request, instead of one for the handshake and a second for the request (SPEC §7.5, §7.6
/// say what a connection the kernel holds is).
fn defer_accept(listener: &socket2::Socket) -> io::Result<()> {
    let seconds = DEFER_ACCEPT_S as libc::c_int;
    // SAFETY: a valid descriptor, and a pointer to an int of the length given.
    let status = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            std::ptr::from_ref(&seconds).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if status == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// What is at a socket path before binding it.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    Nothing,
    /// A socket nobody listens on (a connect is refused): left by a process that ended.
    Stale,
    /// A socket a process listens on (a connect is accepted or queued).
    Live,
    NotASocket,
}

/// Look at `path`: Err is a reason the caller reports.
fn look(path: &Path) -> io::Result<Found> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(e),
        Ok(meta) if !meta.file_type().is_socket() => return Ok(Found::NotASocket),
        Ok(_) => {}
    }
    // Non-blocking, so that a listener whose queue is full cannot hold the start.
    let probe = socket2::Socket::new(Domain::UNIX, Type::STREAM, None)?;
    probe.set_nonblocking(true)?;
    match probe.connect(&SockAddr::unix(path)?) {
        Ok(()) => Ok(Found::Live),
        Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => Ok(Found::Stale),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINPROGRESS)) => Ok(Found::Live),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Found::Nothing),
        Err(e) => Err(e),
    }
}

/// A Unix stream socket at `path` with permissions `mode` and, if asked, `owner`; a stale
/// socket file there is replaced; a live one, or another kind of file, is left alone and
/// refused (exit 2). One socket, polled by `threads` loops through a descriptor each.
fn bind_unix(path: &Path, mode: u32, owner: Option<&Owner>, threads: usize) -> Result<Listening, Failure> {
    let shown = format!("unix:{}", path.display());
    let refuse = |reason: &str| Failure { line: format!("renard: --listen: {}: {reason}", path.display()), status: 2 };
    let cannot_bind = |e: io::Error| Failure { line: format!("renard: --listen: cannot bind {shown}: {e}"), status: 1 };
    match look(path).map_err(|e| refuse(&format!("cannot tell whether it is in use: {e}")))? {
        Found::Nothing => {}
        Found::Stale => {
            std::fs::remove_file(path).map_err(|e| refuse(&format!("cannot remove the stale socket: {e}")))?
        }
        Found::Live => return Err(refuse("in use by another process")),
        Found::NotASocket => return Err(refuse("exists and is not a socket")),
    }
    let socket = socket2::Socket::new(Domain::UNIX, Type::STREAM, None).map_err(cannot_bind)?;
    socket.bind(&SockAddr::unix(path).map_err(cannot_bind)?).map_err(cannot_bind)?;
    let file = SocketFile::of(path).map_err(cannot_bind)?;
    // The file exists from here on: every failure removes it. Nobody can connect before
    // listen(), so the mode and owner are in place before the first client.
    let ready = || -> Result<Vec<Listener>, Failure> {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| Failure {
            line: format!("renard: --socket-mode: cannot set {mode:03o} on {}: {e}", path.display()),
            status: 1,
        })?;
        if let Some(owner) = owner {
            std::os::unix::fs::chown(path, Some(owner.uid), owner.gid).map_err(|e| Failure {
                line: format!("renard: --socket-owner: cannot give {} to {}: {e}", path.display(), owner.spec),
                status: 1,
            })?;
        }
        socket.listen(BACKLOG).map_err(cannot_bind)?;
        socket.set_nonblocking(true).map_err(cannot_bind)?;
        let first: std::os::unix::net::UnixListener = socket.try_clone().map_err(cannot_bind)?.into();
        let mut listeners = Vec::with_capacity(threads);
        for _ in 0..threads {
            listeners.push(Listener::Unix(UnixListener::from_std(first.try_clone().map_err(cannot_bind)?)));
        }
        Ok(listeners)
    };
    match ready() {
        Ok(listeners) => Ok(Listening { listeners, shown, file: Some(file) }),
        Err(failure) => {
            file.remove_if_ours();
            Err(failure)
        }
    }
}

/// A socket file renard created, known by its device and inode, so that it is removed only
/// while it is still the one renard made: a later instance may have found it stale (once
/// renard's listeners closed) and put its own there, which may even reuse the inode, so
/// a file someone listens on is kept too.
pub struct SocketFile {
    path: PathBuf,
    id: (u64, u64),
}

impl SocketFile {
    fn of(path: &Path) -> io::Result<SocketFile> {
        let meta = std::fs::symlink_metadata(path)?;
        Ok(SocketFile { path: path.to_path_buf(), id: (meta.dev(), meta.ino()) })
    }

    /// Remove the file if it is still ours (call once renard's listeners are closed).
    pub fn remove_if_ours(&self) {
        let same = std::fs::symlink_metadata(&self.path).is_ok_and(|meta| (meta.dev(), meta.ino()) == self.id);
        if same && look(&self.path).is_ok_and(|found| found == Found::Stale) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The listening socket a service manager passed (systemd's socket activation,
/// sd_listen_fds(3)): Some when `LISTEN_PID` is this process and `LISTEN_FDS` is 1 (the
/// socket is descriptor 3), None when nothing was passed to this process; more than one
/// socket, or one renard cannot listen on, is an error (exit 2). `LISTEN_PID`,
/// `LISTEN_FDS` and `LISTEN_FDNAMES` are unset in every case, so that nothing renard
/// might start takes them for its own.
///
/// # Safety
/// No other thread may be running: the environment is changed.
pub unsafe fn from_service_manager(threads: usize) -> Result<Option<Listening>, Failure> {
    let refuse = |reason: String| Failure { line: format!("renard: LISTEN_FDS: {reason}"), status: 2 };
    // SAFETY: no other thread runs (the caller's contract).
    let fds = unsafe {
        let fds = sd_notify::listen_fds_and_unset_env();
        std::env::remove_var("LISTEN_FDNAMES");
        fds
    };
    let mut fds = fds.map_err(|e| refuse(e.to_string()))?;
    match fds.len() {
        0 => Ok(None),
        1 => {
            let fd = fds.next().expect("one descriptor");
            // SAFETY: the service manager passed `fd` to this process for it alone; nothing
            // else in renard opens or owns descriptor 3 before this.
            unsafe { adopt(fd, threads) }.map(Some).map_err(|reason| refuse(format!("descriptor {fd} {reason}")))
        }
        n => Err(refuse(format!("{n} sockets passed; renard listens on one"))),
    }
}

/// A TCP or Unix listener from a descriptor renard was given, as its kind says.
///
/// # Safety
/// `fd` must be an open descriptor that nothing else in this process owns.
pub unsafe fn adopt(fd: std::os::fd::RawFd, threads: usize) -> Result<Listening, String> {
    // SAFETY: the caller's contract; from here on `socket` owns `fd`.
    let socket = unsafe { socket2::Socket::from_raw_fd(fd) };
    let reason = |e: io::Error| e.to_string();
    if socket.r#type().map_err(reason)? != Type::STREAM || !socket.is_listener().map_err(reason)? {
        return Err("is not a listening stream socket".to_string());
    }
    socket.set_nonblocking(true).map_err(reason)?;
    let local = socket.local_addr().map_err(reason)?;
    if local.as_socket().is_some() {
        // The copies below share them: one socket. A service manager's socket gets the same
        // deferral as one renard binds (its unit may set it too: DeferAcceptSec=1s).
        no_delay(&socket).map_err(reason)?;
        defer_accept(&socket).map_err(reason)?;
    }
    let copies = |socket: &socket2::Socket| -> io::Result<Vec<socket2::Socket>> {
        (1..threads).map(|_| socket.try_clone()).collect()
    };
    let others = copies(&socket).map_err(reason)?;
    let all = std::iter::once(socket).chain(others);
    if let Some(addr) = local.as_socket() {
        let listeners = all.map(|s| Listener::Tcp(TcpListener::from_std(s.into()))).collect();
        Ok(Listening { listeners, shown: format!("http://{addr}"), file: None })
    } else if local.is_unix() {
        let shown = match local.as_pathname() {
            Some(path) => format!("unix:{}", path.display()),
            None => "unix:(unnamed)".to_string(),
        };
        // SAFETY: each descriptor is a listening Unix stream socket owned by `s` alone.
        let listeners = all
            .map(|s| Listener::Unix(UnixListener::from_std(unsafe { FromRawFd::from_raw_fd(s.into_raw_fd()) })))
            .collect();
        Ok(Listening { listeners, shown, file: None })
    } else {
        Err("is neither a TCP nor a Unix socket".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("renard-listener-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("renard.sock")
    }
    fn unix(path: &Path, mode: u32) -> Result<Listening, Failure> {
        bind_unix(path, mode, None, 2)
    }

    #[test]
    fn unix_socket_gets_its_mode_and_accepts_on_every_listener() {
        let path = scratch("mode");
        let listening = unix(&path, 0o640).unwrap();
        assert_eq!(listening.shown, format!("unix:{}", path.display()));
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
        assert_eq!(listening.listeners.len(), 2);
        for listener in &listening.listeners {
            assert!(matches!(listener, Listener::Unix(_)));
            let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
            assert!(listener.accept().is_ok());
        }
    }

    #[test]
    fn stale_socket_is_replaced() {
        let path = scratch("stale");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap()); // the file stays
        assert_eq!(look(&path).unwrap(), Found::Stale);
        let listening = unix(&path, 0o660).unwrap();
        assert!(std::os::unix::net::UnixStream::connect(&path).is_ok());
        drop(listening);
    }

    #[test]
    fn live_socket_is_refused_with_exit_2() {
        let path = scratch("live");
        let _other = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let failure = unix(&path, 0o660).err().unwrap();
        assert_eq!(
            (failure.line, failure.status),
            (format!("renard: --listen: {}: in use by another process", path.display()), 2)
        );
        assert!(std::os::unix::net::UnixStream::connect(&path).is_ok(), "the other's socket is untouched");
    }

    #[test]
    fn other_file_is_refused_with_exit_2_and_kept() {
        let path = scratch("file");
        std::fs::write(&path, b"data").unwrap();
        let failure = unix(&path, 0o660).err().unwrap();
        assert_eq!(failure.line, format!("renard: --listen: {}: exists and is not a socket", path.display()));
        assert_eq!(failure.status, 2);
        assert_eq!(std::fs::read(&path).unwrap(), b"data");
    }

    #[test]
    fn missing_directory_cannot_be_bound_with_exit_1() {
        let path = scratch("nodir").with_file_name("missing").join("renard.sock");
        let failure = unix(&path, 0o660).err().unwrap();
        assert!(
            failure.line.starts_with(&format!("renard: --listen: cannot bind unix:{}: ", path.display())),
            "{}",
            failure.line
        );
        assert_eq!(failure.status, 1);
    }

    #[test]
    fn socket_file_is_removed_only_while_it_is_ours() {
        let path = scratch("ours");
        let listening = unix(&path, 0o660).unwrap();
        drop(listening.listeners);
        // Another instance found it stale and made its own at the same path.
        std::fs::remove_file(&path).unwrap();
        let theirs = std::os::unix::net::UnixListener::bind(&path).unwrap();
        listening.file.as_ref().unwrap().remove_if_ours();
        assert!(path.exists(), "the newer socket is kept");
        drop(theirs);
        std::fs::remove_file(&path).unwrap();
        let listening = unix(&path, 0o660).unwrap();
        listening.file.as_ref().unwrap().remove_if_ours();
        assert!(path.exists(), "still listened on");
        drop(listening.listeners);
        listening.file.as_ref().unwrap().remove_if_ours();
        assert!(!path.exists());
    }

    /// The connection `listener` accepts from a client of `port` (bounded: 5 s).
    fn accept_one(listener: &Listener, port: u16) -> (Stream, std::net::TcpStream) {
        accept_one_pending(listener, std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
    }

    #[test]
    fn accepted_tcp_connections_have_no_delay_from_their_listener() {
        let no_delay = |stream: &Stream| socket2::SockRef::from(stream).tcp_nodelay().unwrap();
        let listening = bind_tcp("127.0.0.1:0".parse().unwrap(), 1).unwrap();
        let port: u16 = listening.shown.rsplit(':').next().unwrap().parse().unwrap();
        let (stream, _client) = accept_one(&listening.listeners[0], port);
        assert!(no_delay(&stream), "bound by renard");
        let given = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = given.local_addr().unwrap().port();
        // SAFETY: the descriptor was just released by its owner.
        let listening = unsafe { adopt(given.into_raw_fd(), 1) }.unwrap();
        let (stream, _client) = accept_one(&listening.listeners[0], port);
        assert!(no_delay(&stream), "passed by a service manager");
    }

    /// A client of `port` that sends nothing is not accepted (the kernel holds it); once it
    /// sends an octet it is, with the octet there to read at once.
    fn accepted_only_once_its_first_octet_is_there(listener: &Listener, port: u16) {
        use std::io::{Read, Write};
        let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        // The handshake is done when connect returns on loopback; without the deferral the
        // connection would be acceptable now. 0.3 s is well inside the 1 s deferral.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let early = listener.accept();
        assert!(
            matches!(&early, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "a connection that sent nothing was acceptable: {:?}",
            early.as_ref().err()
        );
        client.write_all(b"G").unwrap();
        let (mut stream, _client) = accept_one_pending(listener, client);
        let mut octet = [0u8; 1];
        assert_eq!(stream.read(&mut octet).unwrap(), 1, "the first octet is there at the accept");
        assert_eq!(&octet, b"G");
    }

    /// The connection pending on `listener` (bounded: 5 s).
    fn accept_one_pending(listener: &Listener, client: std::net::TcpStream) -> (Stream, std::net::TcpStream) {
        for _ in 0..500 {
            match listener.accept() {
                Ok(stream) => return (stream, client),
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(std::time::Duration::from_millis(10)),
                Err(e) => panic!("accept: {e}"),
            }
        }
        panic!("nothing accepted in 5 s");
    }

    #[test]
    fn tcp_listeners_defer_the_accept_until_the_request_comes() {
        let listening = bind_tcp("127.0.0.1:0".parse().unwrap(), 1).unwrap();
        let port: u16 = listening.shown.rsplit(':').next().unwrap().parse().unwrap();
        accepted_only_once_its_first_octet_is_there(&listening.listeners[0], port);
        let given = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = given.local_addr().unwrap().port();
        // SAFETY: the descriptor was just released by its owner.
        let listening = unsafe { adopt(given.into_raw_fd(), 1) }.unwrap();
        accepted_only_once_its_first_octet_is_there(&listening.listeners[0], port);
    }

    #[test]
    fn adopted_descriptors_keep_their_kind() {
        let path = scratch("adopt");
        let unix_fd = std::os::unix::net::UnixListener::bind(&path).unwrap().into_raw_fd();
        // SAFETY: the descriptor was just released by its owner.
        let listening = unsafe { adopt(unix_fd, 3) }.unwrap();
        assert_eq!(listening.listeners.len(), 3);
        assert!(listening.listeners.iter().all(|l| matches!(l, Listener::Unix(_))));
        assert_eq!(listening.shown, format!("unix:{}", path.display()));
        let tcp_fd = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp_fd.local_addr().unwrap().port();
        // SAFETY: as above.
        let listening = unsafe { adopt(tcp_fd.into_raw_fd(), 1) }.unwrap();
        assert_eq!(listening.shown, format!("http://127.0.0.1:{port}"));
        assert!(matches!(listening.listeners[..], [Listener::Tcp(_)]));
        let connected = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap().into_raw_fd();
        // SAFETY: as above.
        assert_eq!(unsafe { adopt(connected, 1) }.err().unwrap(), "is not a listening stream socket");
    }
}
