//! `GET /metrics` (SPEC §8): the counts, in the Prometheus text exposition format 0.0.4.
//!
//! Counting costs the hot path one load, one add and one store per response, on a line no
//! other thread writes: each thread owns its [`Counters`], updated with relaxed atomics
//! (no lock prefix, no shared cache line), and a read of the metrics sums them.

use crate::context::Service;
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
/// largest (20 digits for a count, 26 for the uptime).
pub const MAX_BODY: usize = 2048;
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

/// The metrics of SPEC §8 as text, at most [`MAX_BODY`] octets.
pub fn body(svc: &Service) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_BODY);
    let uptime = svc.started.elapsed().as_secs_f64();
    let open = svc.open.load(Ordering::Relaxed);
    let evicted = svc.evicted.load(Ordering::Relaxed);
    let refused = svc.refused.load(Ordering::Relaxed);
    render(&mut out, &svc.responses(), open as u64, evicted, refused, uptime);
    out
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
        assert!(out.len() <= MAX_BODY, "{} octets", out.len());
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
