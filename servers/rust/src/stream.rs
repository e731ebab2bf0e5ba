//! A connected stream socket, TCP or Unix: the descriptor itself, read with `recv` and
//! written with `send`, as std does for TCP. One type for both kinds, so that the
//! connection code exists once (a copy of the loop per kind made the keep-alive path
//! longer under callgrind: the inliner no longer inlined into both).

use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};

/// What a connection reads from and writes to: a TCP or Unix [`Stream`], or an in-memory one in the
/// fuzz target (`fuzz/fuzz_targets/connection.rs`). Non-blocking: WouldBlock when empty/full.
pub trait Socket: Read + Write {
    /// Shut the write side (the FIN of a lingering close, SPEC §7.4).
    fn shut_write(&mut self) -> std::io::Result<()>;
}

/// A connected, non-blocking stream socket; closed when dropped.
pub struct Stream(OwnedFd);

impl Stream {
    /// Take `fd`, a connected, non-blocking stream socket.
    pub fn new(fd: OwnedFd) -> Self {
        Stream(fd)
    }
}

impl std::os::fd::AsFd for Stream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// A byte count from a system call's return, or errno when it is -1: as std's sockets
/// check it. (Tested under callgrind: `< 0` with errno read out of line, a cold function,
/// made the inlined parser's code 5 instructions per request longer.)
#[inline(always)]
fn checked(n: isize) -> io::Result<usize> {
    if n == -1 { Err(io::Error::last_os_error()) } else { Ok(n as usize) }
}

impl Read for Stream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is writable for its length; the descriptor is open while `self` lives.
        checked(unsafe { libc::recv(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) })
    }
}

impl Write for Stream {
    /// MSG_NOSIGNAL: a peer that has gone is an EPIPE error, not a SIGPIPE.
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: `buf` is readable for its length; the descriptor is open while `self` lives.
        checked(unsafe { libc::send(self.0.as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) })
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Socket for Stream {
    fn shut_write(&mut self) -> io::Result<()> {
        // SAFETY: shutdown(2) on a descriptor open while `self` lives.
        checked(unsafe { libc::shutdown(self.0.as_raw_fd(), libc::SHUT_WR) } as isize).map(drop)
    }
}

impl Source for Stream {
    fn register(&mut self, registry: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).register(registry, token, interests)
    }
    fn reregister(&mut self, registry: &Registry, token: Token, interests: Interest) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).reregister(registry, token, interests)
    }
    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.0.as_raw_fd()).deregister(registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Stream, std::os::unix::net::UnixStream) {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        (Stream::new(ours.into()), theirs)
    }

    #[test]
    fn reads_writes_and_shuts_its_write_side() {
        let (mut stream, mut peer) = pair();
        assert_eq!(stream.read(&mut [0; 8]).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        peer.write_all(b"ping").unwrap();
        let mut buf = [0; 8];
        assert_eq!(stream.read(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"ping");
        assert_eq!(stream.write(b"pong").unwrap(), 4);
        stream.shut_write().unwrap();
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"pong");
    }

    #[test]
    fn writing_to_a_gone_peer_is_an_error_not_a_signal() {
        let (mut stream, peer) = pair();
        drop(peer);
        assert_eq!(stream.write(b"x").unwrap_err().kind(), io::ErrorKind::BrokenPipe);
    }
}
