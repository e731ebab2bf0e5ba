//! systemd's socket activation (sd_listen_fds) on the real binary: renard listens on the
//! socket it is passed as descriptor 3, TCP or Unix, instead of binding `--listen`; more
//! than one socket is refused; and a restart loses nothing, because the socket's holder
//! (systemd, or here the test) keeps it, and its queue, while renard restarts.

mod common;

use common::{PATIENCE, Running, get_over_unix, renard_path, scratch, wait_within};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// renard started as a service manager starts it: `fds` as descriptors 3, 4, ...,
/// `LISTEN_FDS`, and `LISTEN_PID` set to renard's own pid (by a shell that then execs it).
fn activated(fds: &[RawFd], args: &[&str]) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"", renard_path()])
        .args(args)
        .env("LISTEN_FDS", fds.len().to_string())
        .env("LISTEN_FDNAMES", vec!["renard"; fds.len()].join(":"));
    let fds = fds.to_vec();
    // SAFETY: between fork and exec only async-signal-safe calls (fcntl, dup2) are made.
    unsafe {
        command.pre_exec(move || {
            // First out of the way (above 100), so that no dup2 overwrites a later source.
            let mut high = Vec::with_capacity(fds.len());
            for &fd in &fds {
                let copy = libc::fcntl(fd, libc::F_DUPFD, 100);
                if copy < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                high.push(copy);
            }
            for (i, &fd) in high.iter().enumerate() {
                if libc::dup2(fd, 3 + i as RawFd) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    command
}

#[test]
fn a_passed_tcp_socket_is_listened_on_instead_of_listen() {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let server = Running::start(activated(&[socket.as_raw_fd()], &["--listen", "127.0.0.1:1", "--threads", "2"]));
    assert_eq!(server.listening, format!("http://127.0.0.1:{port}"));
    for _ in 0..4 {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 302 Found\r\n"), "{answer}");
    }
    assert_eq!(server.stop().0, Some(0));
}

#[test]
fn more_than_one_socket_is_refused_with_exit_2() {
    let (a, b) =
        (std::net::TcpListener::bind("127.0.0.1:0").unwrap(), std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    let out = activated(&[a.as_raw_fd(), b.as_raw_fd()], &[]).stderr(Stdio::piped()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "renard: LISTEN_FDS: 2 sockets passed; renard listens on one\n");
}

#[test]
fn a_passed_socket_that_is_not_listening_is_refused_with_exit_2() {
    let (ours, _theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let out = activated(&[ours.as_raw_fd()], &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, "renard: LISTEN_FDS: descriptor 3 is not a listening stream socket\n");
}

#[test]
fn sockets_for_another_process_are_not_taken() {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut command = Command::new(renard_path());
    command.args(["--listen", "127.0.0.1:0", "--threads", "1"]).env("LISTEN_FDS", "1").env("LISTEN_PID", "1");
    let server = Running::start(command);
    let passed = format!("http://127.0.0.1:{}", socket.local_addr().unwrap().port());
    assert!(server.listening.starts_with("http://127.0.0.1:") && server.listening != passed, "{}", server.listening);
    assert_eq!(server.stop().0, Some(0));
}

/// Clients sending `GET /` one connection after another until `stop`: (answered, failed).
fn load(
    path: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut failures = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match get_over_unix(&path) {
                Ok(answer) if answer.starts_with("HTTP/1.1 302 Found\r\n") => {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
                Ok(answer) => failures.push(format!("answer {answer:?}")),
                Err(e) => failures.push(e.to_string()),
            }
        }
        failures
    })
}

#[test]
fn a_restart_loses_no_request_while_the_socket_is_held() {
    let path = scratch("restart").join("renard.sock");
    let socket = std::os::unix::net::UnixListener::bind(&path).unwrap(); // the service manager's
    let args = ["--threads", "2", "--drain-timeout", "0.2"];
    let first = Running::start(activated(&[socket.as_raw_fd()], &args));
    assert_eq!(first.listening, format!("unix:{}", path.display()));
    let (stop, answered) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let clients: Vec<_> = (0..3).map(|_| load(path.clone(), stop.clone(), answered.clone())).collect();
    let wait_for = |count: usize| {
        let start = Instant::now();
        while answered.load(Ordering::Relaxed) < count {
            assert!(start.elapsed() < PATIENCE, "only {} answers", answered.load(Ordering::Relaxed));
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(200);
    let (status, rest) = first.stop(); // drains, exits; the socket and its queue stay
    assert_eq!((status, rest.as_str()), (Some(0), ""));
    let during_gap = answered.load(Ordering::Relaxed);
    let second = Running::start(activated(&[socket.as_raw_fd()], &args));
    wait_for(during_gap + 200);
    stop.store(true, Ordering::Relaxed);
    let failures: Vec<String> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
    assert_eq!(second.stop().0, Some(0));
    assert!(
        failures.is_empty(),
        "{} failed of {}: {:?}",
        failures.len(),
        answered.load(Ordering::Relaxed),
        &failures[..failures.len().min(5)]
    );
    assert!(path.exists(), "the socket file is the service manager's: renard leaves it");
}

#[test]
fn systemd_socket_activate_starts_renard_on_its_unix_socket() {
    let Ok(tool) = which("systemd-socket-activate") else {
        eprintln!("skipped: systemd-socket-activate is not installed (Debian package systemd)");
        return;
    };
    let path = scratch("systemd").join("renard.sock");
    let mut child = Command::new(tool)
        .arg("--listen")
        .arg(&path)
        .args(["--", renard_path(), "--threads", "2", "--count", "1", "--location", "/{n}.png"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // Until the tool listens, a connect finds no file (before its bind) or is refused (between
    // its bind and its listen). It execs renard at the first connection, which then waits in
    // the queue.
    let start = Instant::now();
    let answer = loop {
        match get_over_unix(&path) {
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
                assert!(start.elapsed() < PATIENCE, "{} not listened on: {e}", path.display());
                std::thread::sleep(Duration::from_millis(5));
            }
            answered => break answered.unwrap(),
        }
    };
    assert!(answer.starts_with("HTTP/1.1 302 Found\r\nLocation: /1.png\r\n"), "{answer}");
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no listening line in {lines:?}");
        if line.starts_with("listening on ") {
            assert_eq!(line.trim_end(), format!("listening on unix:{}", path.display()));
            break;
        }
        lines.push(line);
    }
    // SAFETY: kill(2) on our own child, which is renard now (the tool exec'd it).
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    assert_eq!(wait_within(&mut child, PATIENCE), Some(0));
}

/// The path of `program` on PATH.
fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file()).ok_or(())
}
