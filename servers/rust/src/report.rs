//! What renard tells its operator on stderr while serving (SPEC §8): one line per reload
//! saying what changed, and, while the connection cap is reached, one line at most every
//! [`CAP_LINE_INTERVAL_MS`] with the connections evicted and refused since the last one.

use crate::config::Config;
use std::sync::atomic::{AtomicU64, Ordering};

/// The least time between two cap lines, in milliseconds.
pub const CAP_LINE_INTERVAL_MS: u64 = 10_000;

/// The cap line's rate limit and what the last line counted, shared by every thread.
#[derive(Default)]
pub struct CapLine {
    /// No line before this time (milliseconds since the service started; 0: none yet).
    due_ms: AtomicU64,
    /// The evicted and refused totals the last line was written with.
    evicted: AtomicU64,
    refused: AtomicU64,
}

impl CapLine {
    /// At `now_ms`, with these totals, the line to print if one is due (one thread wins
    /// the turn; the others print nothing). Only called at the cap.
    pub fn due(&self, now_ms: u64, max_connections: usize, evicted: u64, refused: u64) -> Option<String> {
        let due = self.due_ms.load(Ordering::Relaxed);
        if now_ms < due
            || self
                .due_ms
                .compare_exchange(due, now_ms + CAP_LINE_INTERVAL_MS, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return None;
        }
        let first = due == 0;
        let evicted = evicted.saturating_sub(self.evicted.swap(evicted, Ordering::Relaxed));
        let refused = refused.saturating_sub(self.refused.swap(refused, Ordering::Relaxed));
        let since = if first { "since start".to_string() } else { "since the last such line".to_string() };
        Some(format!(
            "renard: --max-connections {max_connections} reached: {evicted} evicted, {refused} refused {since} \
             (at most one line every {} s)",
            CAP_LINE_INTERVAL_MS / 1000
        ))
    }
}

/// The line for a reload from the content being served (its N, `old_count`, and template,
/// `old_location`) to `new`: N, the template, and the limits, which a reload does not change
/// (they are the started ones; a restart applies new ones).
pub fn reload_line(old_count: u32, old_location: &[u8], new: &Config, started: &Config) -> String {
    let count = if old_count == new.count {
        format!("N {} unchanged", new.count)
    } else {
        format!("N {} -> {}", old_count, new.count)
    };
    let counted = match &new.count_from {
        Some(dir) => format!(" (images in {})", dir.display()),
        None => String::new(),
    };
    let location = if old_location == new.location.as_slice() {
        "location unchanged".to_string()
    } else {
        format!("location {} -> {}", old_location.escape_ascii(), new.location.escape_ascii())
    };
    let seconds = |d: std::time::Duration| d.as_secs_f64();
    format!(
        "renard: reloaded: {count}{counted}, {location}, limits unchanged (--max-connections {}, \
         --header-timeout {} s, --idle-timeout {} s, --drain-timeout {} s)",
        started.max_connections,
        seconds(started.header_timeout),
        seconds(started.idle_timeout),
        seconds(started.drain_timeout)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cap_line_comes_at_once_then_at_most_one_per_interval() {
        let line = CapLine::default();
        let first = line.due(5, 100, 1, 0).expect("the first line");
        assert_eq!(
            first,
            "renard: --max-connections 100 reached: 1 evicted, 0 refused since start (at most one line every 10 s)"
        );
        assert_eq!(line.due(6, 100, 2, 0), None);
        assert_eq!(line.due(5 + CAP_LINE_INTERVAL_MS - 1, 100, 40, 3), None);
        let next = line.due(5 + CAP_LINE_INTERVAL_MS, 100, 41, 3).expect("due again");
        assert!(
            next.starts_with("renard: --max-connections 100 reached: 40 evicted, 3 refused since the last such line")
        );
        assert_eq!(line.due(5 + CAP_LINE_INTERVAL_MS + 1, 100, 42, 3), None);
    }

    fn config(args: &[&str]) -> Config {
        match crate::config::parse(args.iter().map(Into::into), |_| None, 1).unwrap() {
            crate::config::Command::Serve(config) => config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reload_line_says_what_changed() {
        let started = config(&["--count", "21", "--max-connections", "50"]);
        let line =
            reload_line(21, &started.location, &config(&["--count", "22", "--location", "/b/{n}.png"]), &started);
        assert_eq!(
            line,
            "renard: reloaded: N 21 -> 22, location https://avatar.example.org/Renard-{n}.png -> /b/{n}.png, \
             limits unchanged (--max-connections 50, --header-timeout 10 s, --idle-timeout 60 s, --drain-timeout 1 s)"
        );
        let same = reload_line(21, &started.location, &started, &started);
        assert!(same.starts_with("renard: reloaded: N 21 unchanged, location unchanged, limits unchanged"), "{same}");
    }
}
