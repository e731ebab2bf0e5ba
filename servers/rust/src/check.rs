//! `--check URL` (SPEC §8): one `GET` to a running renard, for a container image that has
//! no HTTP client. Blocking and alone: the process does nothing else.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The whole check, from connect to the status line, is bounded by this.
pub const LIMIT: Duration = Duration::from_secs(2);

/// Send `GET path` to `addr` and read the status line: Ok on a `200`, else the reason
/// (one line, for stderr).
pub fn check(addr: SocketAddr, path: &[u8]) -> Result<(), String> {
    let deadline = Instant::now() + LIMIT;
    let left = || {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() { Err(format!("no answer within {} s", LIMIT.as_secs())) } else { Ok(left) }
    };
    let timed_out = |e: std::io::Error, what: &str| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => format!("no answer within {} s", LIMIT.as_secs()),
        _ => format!("{what}: {e}"),
    };
    let mut stream = TcpStream::connect_timeout(&addr, left()?).map_err(|e| timed_out(e, "cannot connect"))?;
    let mut request = b"GET ".to_vec();
    request.extend_from_slice(path);
    request.extend_from_slice(format!(" HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes());
    stream.set_write_timeout(Some(left()?)).map_err(|e| format!("socket: {e}"))?;
    stream.write_all(&request).map_err(|e| timed_out(e, "cannot send"))?;
    // The status line is all that is read: `HTTP/1.1 200 OK\r\n`.
    let mut head = Vec::new();
    let mut buf = [0u8; 512];
    while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 4096 {
        stream.set_read_timeout(Some(left()?)).map_err(|e| format!("socket: {e}"))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(timed_out(e, "cannot read the answer")),
        }
    }
    let line = &head[..head.windows(2).position(|w| w == b"\r\n").unwrap_or(head.len())];
    match line {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', _, b' ', b'2', b'0', b'0', ..] => Ok(()),
        [] => Err("the connection closed without an answer".to_string()),
        _ => Err(format!("answered \"{}\"", line[..line.len().min(80)].escape_ascii())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-shot server that answers `reply` to the first connection.
    fn answering(reply: &'static [u8]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut client, _) = listener.accept().unwrap();
            let mut request = [0u8; 512];
            let _ = client.read(&mut request);
            let _ = client.write_all(reply);
        });
        addr
    }

    #[test]
    fn ok_answer_passes() {
        assert_eq!(check(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"), b"/healthz"), Ok(()));
    }

    #[test]
    fn other_status_fails_and_is_named() {
        let e = check(answering(b"HTTP/1.1 404 Not Found\r\n\r\n"), b"/x").unwrap_err();
        assert_eq!(e, "answered \"HTTP/1.1 404 Not Found\"");
    }

    #[test]
    fn closed_port_fails() {
        let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        assert!(check(addr, b"/").unwrap_err().starts_with("cannot connect: "));
    }

    #[test]
    fn silent_server_fails_within_the_limit() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let started = Instant::now();
        let e = check(listener.local_addr().unwrap(), b"/").unwrap_err();
        assert_eq!(e, "no answer within 2 s");
        assert!(started.elapsed() < LIMIT + Duration::from_millis(500));
    }
}
