//! `--listen unix:PATH` on the real binary (SPEC §8): the same answers as over TCP, the
//! file's mode and owner, a stale file replaced, a live one or another file refused with
//! exit 2, and the file removed at a clean exit.

mod common;

use common::{Running, get_over_unix, renard_path, scratch};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::process::Command;

fn renard_on(path: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = Command::new(renard_path());
    command.arg("--listen").arg(format!("unix:{}", path.display())).args(["--threads", "2"]).args(extra);
    command
}

#[test]
fn answers_over_the_socket_then_removes_it_at_exit() {
    let path = scratch("serve").join("renard.sock");
    let server = Running::start(renard_on(&path, &["--count", "1", "--location", "/img/{n}.png"]));
    assert_eq!(server.listening, format!("unix:{}", path.display()));
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o7777, 0o660, "the default mode");
    for _ in 0..4 {
        let answer = get_over_unix(&path).unwrap();
        assert!(answer.starts_with("HTTP/1.1 302 Found\r\nLocation: /img/1.png\r\n"), "{answer}");
        assert!(answer.contains("\r\nConnection: close\r\n"), "{answer}");
    }
    let (status, rest) = server.stop();
    assert_eq!((status, rest.as_str()), (Some(0), ""));
    assert!(!path.exists(), "the socket file is removed at a clean exit");
}

#[test]
fn mode_and_owner_are_applied() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: giving a file to another user needs root");
        return;
    }
    let path = scratch("owner").join("renard.sock");
    let server = Running::start(renard_on(&path, &["--socket-mode", "0606", "--socket-owner", "65534:65533"]));
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!((meta.permissions().mode() & 0o7777, meta.uid(), meta.gid()), (0o606, 65534, 65533));
    assert!(get_over_unix(&path).unwrap().starts_with("HTTP/1.1 302 Found\r\n"));
    assert_eq!(server.stop().0, Some(0));
}

#[test]
fn a_stale_socket_is_replaced() {
    let path = scratch("stale").join("renard.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap()); // left behind, nobody listening
    let server = Running::start(renard_on(&path, &[]));
    assert!(get_over_unix(&path).unwrap().starts_with("HTTP/1.1 302 Found\r\n"));
    assert_eq!(server.stop().0, Some(0));
}

#[test]
fn a_live_socket_is_refused_with_one_line_and_exit_2() {
    let path = scratch("live").join("renard.sock");
    let first = Running::start(renard_on(&path, &[]));
    let second = renard_on(&path, &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(2));
    let line = format!("renard: --listen: {}: in use by another process\n", path.display());
    assert_eq!(String::from_utf8_lossy(&second.stderr), line);
    assert!(get_over_unix(&path).unwrap().starts_with("HTTP/1.1 302 Found\r\n"), "the first still answers");
    assert_eq!(first.stop().0, Some(0));
}

#[test]
fn another_kind_of_file_is_refused_with_exit_2_and_kept() {
    let path = scratch("regular").join("renard.sock");
    std::fs::write(&path, b"not a socket").unwrap();
    let out = renard_on(&path, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = format!("renard: --listen: {}: exists and is not a socket\n", path.display());
    assert_eq!(String::from_utf8_lossy(&out.stderr), line);
    assert_eq!(std::fs::read(&path).unwrap(), b"not a socket");
}
