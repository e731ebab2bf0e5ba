//! sd_notify on the real binary: with `NOTIFY_SOCKET` set, renard says `READY=1` once
//! listening, `RELOADING=1` (with `MONOTONIC_USEC`) then `READY=1` around a SIGHUP reload,
//! and `STOPPING=1` once when the drain begins, whatever the number of threads.

mod common;

use common::{PATIENCE, Running, renard_path, scratch};
use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::time::Duration;

/// The next message on `socket`, or None when none comes within `wait`.
fn message(socket: &UnixDatagram, wait: Duration) -> Option<String> {
    socket.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

#[test]
fn ready_reloading_ready_and_stopping_once() {
    let dir = scratch("notify");
    let socket_path = dir.join("notify.sock");
    let manager = UnixDatagram::bind(&socket_path).unwrap();
    let mut command = Command::new(renard_path());
    command.args(["--listen", "127.0.0.1:0", "--threads", "3"]).env("NOTIFY_SOCKET", &socket_path);
    let server = Running::start(command);
    assert_eq!(message(&manager, PATIENCE).as_deref(), Some("READY=1\n"));

    server.signal(libc::SIGHUP);
    let reloading = message(&manager, PATIENCE).unwrap();
    let usec = reloading.strip_prefix("RELOADING=1\nMONOTONIC_USEC=").and_then(|r| r.strip_suffix('\n'));
    assert!(usec.is_some_and(|u| u.parse::<u64>().is_ok_and(|u| u > 0)), "{reloading:?}");
    assert_eq!(message(&manager, PATIENCE).as_deref(), Some("READY=1\n"));

    let (status, _) = server.stop();
    assert_eq!(status, Some(0));
    assert_eq!(message(&manager, PATIENCE).as_deref(), Some("STOPPING=1\n"));
    assert_eq!(message(&manager, Duration::from_millis(300)), None, "one STOPPING=1 for three threads");
}

#[test]
fn without_notify_socket_nothing_is_sent_and_renard_runs() {
    let mut command = Command::new(renard_path());
    command.args(["--listen", "127.0.0.1:0", "--threads", "1"]).env_remove("NOTIFY_SOCKET");
    let server = Running::start(command);
    server.signal(libc::SIGHUP);
    assert_eq!(server.stop().0, Some(0));
}
