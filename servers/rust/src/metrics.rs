//! `GET /metrics` (SPEC §8): the counts, in the Prometheus text exposition format 0.0.4,
//! with `renard_build_info` and the process metrics every Prometheus client library
//! exports under the same names (`process_*`, read from /proc/self at each scrape).
//!
//! Counting costs the hot path one load, one add and one store per response, on a line no
//! other thread writes: each thread owns its [`Counters`], updated with relaxed atomics
//! (no lock prefix, no shared cache line), and a read of the metrics sums them.

use crate::request::Reject;
use crate::response::Status;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// The statuses counted, in the order of [`Counters`] and of the output: every status of
/// SPEC §4.
pub const STATUSES: [u16; 10] = [200, 302, 400, 404, 405, 408, 414, 431, 501, 505];
/// The index of 302 in [`STATUSES`]: the commonest answer, counted without a `match`.
pub const REDIRECT: usize = 1;

/// The longest body [`body`] can produce, in octets: every line with its value at the
/// largest (20 digits for a count, 26 for a number of seconds; a test renders it).
pub const MAX_BODY: usize = 4096;
/// The longest `/metrics` response: the body and its head.
pub const MAX_RESPONSE: usize = MAX_BODY + 256;

/// One thread's responses by status. Only the owning thread writes; a reader of the
/// metrics may see a count one response behind.
#[derive(Default)]
#[repr(align(64))]
pub struct Counters {
    responses: [AtomicU64; STATUSES.len()],
}

impl Counters {
    /// Count one response of `status`.
    #[inline]
    pub fn sent(&self, status: Status) {
        self.add(index(status));
    }

    /// Count one response of `STATUSES[index]`.
    #[inline(always)]
    pub fn add(&self, index: usize) {
        // One writer: a load and a store, not a read-modify-write.
        let count = &self.responses[index];
        count.store(count.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// The counts, in the order of [`STATUSES`].
    pub fn read(&self) -> [u64; STATUSES.len()] {
        std::array::from_fn(|i| self.responses[i].load(Ordering::Relaxed))
    }
}

/// Where `status` is counted in [`STATUSES`].
fn index(status: Status) -> usize {
    match status {
        Status::Health | Status::Metrics => 0,
        Status::Redirect { .. } => REDIRECT,
        Status::Refused(Reject::BadRequest) => 2,
        Status::NotFound => 3,
        Status::MethodNotAllowed => 4,
        Status::Refused(Reject::Timeout) => 5,
        Status::Refused(Reject::UriTooLong) => 6,
        Status::Refused(Reject::FieldsTooLarge) => 7,
        Status::Refused(Reject::NotImplemented) => 8,
        Status::Refused(Reject::VersionNotSupported) => 9,
    }
}

/// The service's counts at one scrape (`context::Service::snapshot` takes them): this
/// module renders them and knows nothing of the service.
pub struct Snapshot {
    /// Responses sent by status, in the order of [`STATUSES`].
    pub responses: [u64; STATUSES.len()],
    /// Connections open now; closed to make room at the cap; new ones closed unread there.
    pub open: u64,
    pub evicted: u64,
    pub refused: u64,
    /// Seconds since the service started.
    pub uptime_s: f64,
}

/// The metrics of SPEC §8 as text, at most [`MAX_BODY`] octets.
pub fn body(now: &Snapshot) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_BODY);
    render(&mut out, &now.responses, now.open, now.evicted, now.refused, now.uptime_s);
    render_build(&mut out, env!("CARGO_PKG_VERSION"), env!("RENARD_COMMIT"));
    if let Some(process) = Process::read() {
        render_process(&mut out, &process);
    }
    out
}

/// What the process metrics show, as the Prometheus client libraries define them.
#[derive(Debug, PartialEq)]
pub struct Process {
    /// User and system CPU time, seconds.
    pub cpu_seconds: f64,
    /// Resident set, bytes.
    pub resident_bytes: u64,
    /// Descriptors open, and the most that may be (the soft RLIMIT_NOFILE).
    pub open_fds: u64,
    pub max_fds: u64,
    /// When the process started, seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

impl Process {
    /// This process's figures from /proc/self (None where /proc cannot be read).
    pub fn read() -> Option<Process> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let boot_time = std::fs::read_to_string("/proc/stat").ok()?;
        let boot_time = boot_time.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
        // SAFETY: sysconf only reads its argument.
        let (ticks, page) = unsafe { (libc::sysconf(libc::_SC_CLK_TCK), libc::sysconf(libc::_SC_PAGESIZE)) };
        let mut process = Process::from_stat(&stat, boot_time, ticks as u64, page as u64)?;
        // The directory's own descriptor is listed while it is read: not counted.
        process.open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count().saturating_sub(1) as u64;
        // SAFETY: getrlimit writes the struct passed by pointer.
        let mut limit = unsafe { std::mem::zeroed::<libc::rlimit>() };
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            process.max_fds = limit.rlim_cur;
        }
        Some(process)
    }

    /// From a /proc/PID/stat line (proc(5)): utime and stime (fields 14, 15) and starttime
    /// (22) in clock ticks, rss (24) in pages; `boot_time` is /proc/stat's btime. The
    /// descriptor counts are left at 0.
    fn from_stat(stat: &str, boot_time: u64, ticks_per_second: u64, page_bytes: u64) -> Option<Process> {
        // The command name (field 2) is in parentheses and may hold spaces and parentheses.
        let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
        let field = |n: usize| -> Option<u64> { fields.get(n - 3)?.parse().ok() };
        let ticks = ticks_per_second.max(1) as f64;
        Some(Process {
            cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
            resident_bytes: field(24)? * page_bytes,
            open_fds: 0,
            max_fds: 0,
            start_time_seconds: boot_time as f64 + field(22)? as f64 / ticks,
        })
    }
}

/// `renard_build_info`: a gauge at 1 whose labels say which build this is.
fn render_build(out: &mut Vec<u8>, version: &str, commit: &str) {
    let _ = writeln!(out, "# HELP renard_build_info The version of renard and the commit it was built from.");
    let _ = writeln!(out, "# TYPE renard_build_info gauge");
    let _ = writeln!(out, "renard_build_info{{version=\"{version}\",commit=\"{commit}\"}} 1");
}

fn render_process(out: &mut Vec<u8>, p: &Process) {
    let _ = writeln!(out, "# HELP process_cpu_seconds_total CPU time used in user and system mode, in seconds.");
    let _ = writeln!(out, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total {:.2}", p.cpu_seconds);
    let gauges = [
        ("process_resident_memory_bytes", "Resident memory, in bytes.", p.resident_bytes),
        ("process_open_fds", "File descriptors open.", p.open_fds),
        ("process_max_fds", "File descriptors the process may open (the soft limit).", p.max_fds),
    ];
    for (name, help, value) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}");
    }
    let _ =
        writeln!(out, "# HELP process_start_time_seconds When the process started, in seconds since the Unix epoch.");
    let _ = writeln!(
        out,
        "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {:.2}",
        p.start_time_seconds
    );
}

fn render(out: &mut Vec<u8>, responses: &[u64], open: u64, evicted: u64, refused: u64, uptime: f64) {
    // Writes to a Vec cannot fail.
    let _ = writeln!(out, "# HELP renard_responses_total Responses sent, by status.");
    let _ = writeln!(out, "# TYPE renard_responses_total counter");
    for (status, count) in STATUSES.iter().zip(responses) {
        let _ = writeln!(out, "renard_responses_total{{status=\"{status}\"}} {count}");
    }
    let gauges_and_counters = [
        ("renard_open_connections", "gauge", "Connections open now.", open),
        ("renard_evicted_total", "counter", "Connections closed at the cap to make room (SPEC 7.5).", evicted),
        ("renard_refused_total", "counter", "New connections closed unread at the cap (SPEC 7.5).", refused),
    ];
    for (name, kind, help, value) in gauges_and_counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
    }
    let _ = writeln!(out, "# HELP renard_uptime_seconds Seconds since renard started.");
    let _ = writeln!(out, "# TYPE renard_uptime_seconds gauge\nrenard_uptime_seconds {uptime:.3}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_body_fits_the_bound() {
        let mut out = Vec::new();
        render(&mut out, &[u64::MAX; STATUSES.len()], u64::MAX, u64::MAX, u64::MAX, 1e22);
        render_build(&mut out, env!("CARGO_PKG_VERSION"), "0123456789ab");
        let most = Process {
            cpu_seconds: 1e22,
            resident_bytes: u64::MAX,
            open_fds: u64::MAX,
            max_fds: u64::MAX,
            start_time_seconds: 1e22,
        };
        render_process(&mut out, &most);
        assert!(out.len() <= MAX_BODY, "{} octets", out.len());
    }

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        // A command name with a space and a parenthesis; 100 ticks per second, 4 KiB pages.
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 3 0 9000 1000000 300 \
                    18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0";
        let p = Process::from_stat(stat, 1_700_000_000, 100, 4096).unwrap();
        assert_eq!((p.cpu_seconds, p.resident_bytes, p.start_time_seconds), (3.75, 300 * 4096, 1_700_000_090.0));
        assert_eq!(Process::from_stat("42 (x) S 1", 0, 100, 4096), None);
    }

    #[test]
    fn this_process_has_figures() {
        let p = Process::read().unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        assert!(p.resident_bytes > 0 && p.open_fds >= 3 && p.max_fds >= p.open_fds, "{p:?}");
        assert!(p.start_time_seconds <= now + 1.0 && p.start_time_seconds > now - 86_400.0, "{p:?}");
    }

    #[test]
    fn build_info_and_process_metrics_are_rendered() {
        let mut out = Vec::new();
        render_build(&mut out, "1.0.0", "0123456789ab");
        let p = Process { cpu_seconds: 1.5, resident_bytes: 2, open_fds: 3, max_fds: 4, start_time_seconds: 5.25 };
        render_process(&mut out, &p);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\nrenard_build_info{version=\"1.0.0\",commit=\"0123456789ab\"} 1\n"), "{text}");
        for line in [
            "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.50\n",
            "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 2\n",
            "# TYPE process_open_fds gauge\nprocess_open_fds 3\n",
            "# TYPE process_max_fds gauge\nprocess_max_fds 4\n",
            "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 5.25\n",
        ] {
            assert!(text.contains(line), "{line:?} not in {text}");
        }
    }

    #[test]
    fn every_status_has_its_own_counter() {
        let statuses = [
            Status::Health,
            Status::Redirect { k: 1, seeded: false },
            Status::Refused(Reject::BadRequest),
            Status::NotFound,
            Status::MethodNotAllowed,
            Status::Refused(Reject::Timeout),
            Status::Refused(Reject::UriTooLong),
            Status::Refused(Reject::FieldsTooLarge),
            Status::Refused(Reject::NotImplemented),
            Status::Refused(Reject::VersionNotSupported),
        ];
        let counters = Counters::default();
        for (i, &status) in statuses.iter().enumerate() {
            for _ in 0..=i {
                counters.sent(status);
            }
        }
        assert_eq!(counters.read(), std::array::from_fn(|i| i as u64 + 1));
    }

    #[test]
    fn counts_and_gauges_are_rendered() {
        let mut out = Vec::new();
        render(&mut out, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 11, 12, 13, 14.5);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\nrenard_responses_total{status=\"302\"} 2\n"));
        assert!(text.contains("\nrenard_responses_total{status=\"505\"} 10\n"));
        assert!(text.contains("\nrenard_open_connections 11\n"));
        assert!(text.contains("\nrenard_evicted_total 12\n"));
        assert!(text.contains("\nrenard_refused_total 13\n"));
        assert!(text.ends_with("\nrenard_uptime_seconds 14.500\n"));
    }
}
