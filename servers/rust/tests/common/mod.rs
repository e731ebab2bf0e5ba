//! The real binary, started as an operator or a service manager would start it.
#![allow(dead_code)] // each test file uses its own part of this

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a start or an exit may take on a slow, busy machine.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub fn renard_path() -> &'static str {
    env!("CARGO_BIN_EXE_renard")
}

/// A fresh directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("renard-it-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A running renard, its stderr read line by line; SIGTERM and wait on drop.
pub struct Running {
    pub child: Child,
    pub stderr: BufReader<ChildStderr>,
    /// The `listening on` line, without the prefix.
    pub listening: String,
}

impl Running {
    /// Start `command` (stderr piped) and wait for its `listening on` line.
    pub fn start(mut command: Command) -> Running {
        let mut child = command.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().expect("renard starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let listening = line.trim_end().strip_prefix("listening on ").unwrap_or_else(|| panic!("first line: {line:?}"));
        Running { listening: listening.to_string(), child, stderr }
    }

    /// The next stderr line (blocking; the caller knows one comes).
    pub fn next_line(&mut self) -> String {
        let mut line = String::new();
        self.stderr.read_line(&mut line).unwrap();
        line
    }

    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, signal) }, 0);
    }

    /// SIGTERM, then the exit status (within PATIENCE) and the rest of stderr.
    pub fn stop(mut self) -> (Option<i32>, String) {
        self.signal(libc::SIGTERM);
        let status = wait_within(&mut self.child, PATIENCE);
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        (status, rest)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The exit code of `child` once it exits within `limit` (None: killed by a signal);
/// panics when it does not.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(start.elapsed() < limit, "renard did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `GET /` over the Unix socket at `path`: the response's head.
pub fn get_over_unix(path: &Path) -> std::io::Result<String> {
    let mut stream = std::os::unix::net::UnixStream::connect(path)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}
