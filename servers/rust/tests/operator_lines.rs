//! The lines renard writes for its operator while serving (SPEC §8), on the real binary:
//! one per reload saying what changed, and a rate-limited one at the connection cap.

mod common;

use common::{Running, renard_path, scratch};
use std::process::Command;

#[test]
fn a_reload_says_what_changed() {
    let dir = scratch("reload-line");
    for k in 1..=3 {
        std::fs::write(dir.join(format!("Renard-{k}.png")), b"").unwrap();
    }
    let mut command = Command::new(renard_path());
    command
        .args(["--listen", "127.0.0.1:0", "--threads", "1", "--max-connections", "77"])
        .arg("--count-from")
        .arg(&dir);
    let mut server = Running::start(command);
    std::fs::write(dir.join("Renard-4.png"), b"").unwrap();
    server.signal(libc::SIGHUP);
    let expected = format!(
        "renard: reloaded: N 3 -> 4 (images in {}), location unchanged, limits unchanged (--max-connections 77, \
         --header-timeout 10 s, --idle-timeout 60 s, --drain-timeout 1 s)\n",
        dir.display()
    );
    assert_eq!(server.next_line(), expected);
    std::fs::remove_file(dir.join("Renard-1.png")).unwrap();
    server.signal(libc::SIGHUP);
    let failed = server.next_line();
    assert!(failed.starts_with("renard: reload failed, nothing changed: --count-from: no image: "), "{failed}");
    let (status, rest) = server.stop();
    assert_eq!((status, rest.as_str()), (Some(0), ""));
}

#[test]
fn the_cap_line_comes_once_for_a_burst_of_evictions() {
    let mut command = Command::new(renard_path());
    command.args(["--listen", "127.0.0.1:0", "--threads", "1", "--max-connections", "2"]);
    let mut server = Running::start(command);
    let addr = server.listening.strip_prefix("http://").unwrap().to_string();
    // Idle connections: each beyond the second evicts the longest idle one (SPEC §7.5).
    let idle: Vec<_> = (0..6).map(|_| std::net::TcpStream::connect(&addr).unwrap()).collect();
    assert_eq!(
        server.next_line(),
        "renard: --max-connections 2 reached: 1 evicted, 0 refused since start (at most one line every 10 s)\n"
    );
    drop(idle);
    // The other three evictions came within the 10 s: no line for them before the exit.
    let (status, rest) = server.stop();
    assert_eq!((status, rest.as_str()), (Some(0), ""));
}
