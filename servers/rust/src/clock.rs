//! The monotonic clock as one integer: a [`Moment`] is nanoseconds of `CLOCK_MONOTONIC`,
//! the clock `std::time::Instant` reads. Every deadline of a connection is a moment, and
//! each wake reads the clock once; as integers, a deadline is one addition and a
//! comparison one instruction, where `Instant` normalises a (seconds, nanoseconds) pair
//! at every step (about 60 instructions per keep-alive request, by callgrind).

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A reading of the monotonic clock, in nanoseconds (from the clock's own origin: the
/// boot, on Linux; 2⁶⁴ ns is 584 years).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Moment(u64);

impl Moment {
    /// The clock now.
    #[inline]
    pub fn now() -> Self {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid timespec to write to; CLOCK_MONOTONIC always exists on
        // Linux, so the call cannot fail.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        Moment((ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64))
    }

    /// Whole milliseconds from this moment to `later`, rounded up (epoll's unit: a wait
    /// of that many milliseconds never ends before `later`); zero when `later` has passed.
    #[inline]
    pub fn millis_until(self, later: Moment) -> u64 {
        later.0.saturating_sub(self.0).div_ceil(1_000_000)
    }

    /// The time from `earlier` to this moment; zero when `earlier` is later.
    #[inline]
    pub fn saturating_duration_since(self, earlier: Moment) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// A length of time in the clock's unit, converted once from a `Duration`: a timeout
/// that a deadline adds at every event (a `Duration` is converted at each addition).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Span(u64);

impl From<Duration> for Span {
    fn from(d: Duration) -> Span {
        Span(nanos(d))
    }
}

impl Add<Span> for Moment {
    type Output = Moment;
    /// Later by `span`; saturates at the end of time rather than wrapping.
    #[inline]
    fn add(self, span: Span) -> Moment {
        Moment(self.0.saturating_add(span.0))
    }
}

/// `d` in nanoseconds, at most `u64::MAX` (a timeout of centuries is never reached).
#[inline]
fn nanos(d: Duration) -> u64 {
    d.as_secs().saturating_mul(1_000_000_000).saturating_add(u64::from(d.subsec_nanos()))
}

impl Add<Duration> for Moment {
    type Output = Moment;
    /// Later by `d`; saturates at the end of time rather than wrapping.
    #[inline]
    fn add(self, d: Duration) -> Moment {
        self + Span::from(d)
    }
}

impl AddAssign<Duration> for Moment {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Duration> for Moment {
    type Output = Moment;
    /// Earlier by `d`; saturates at the clock's origin.
    #[inline]
    fn sub(self, d: Duration) -> Moment {
        Moment(self.0.saturating_sub(nanos(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn moments_follow_the_clock_instant_reads() {
        // Each Moment read between two Instant reads: on the same clock, the Moments' interval
        // lies between the inner and the outer Instants' intervals, however late a thread is
        // scheduled between the reads (a bound in milliseconds would be crossed on a busy
        // machine); another clock, or another unit, falls outside.
        let (before_a, a, after_a) = (Instant::now(), Moment::now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (before_b, b, after_b) = (Instant::now(), Moment::now(), Instant::now());
        let measured = b.saturating_duration_since(a);
        let (inner, outer) = (before_b - after_a, after_b - before_a);
        assert!(measured >= Duration::from_millis(20), "{measured:?}");
        assert!(inner <= measured && measured <= outer, "{measured:?} not within [{inner:?}, {outer:?}]");
        assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
    }

    #[test]
    fn arithmetic_is_exact_and_saturates() {
        let at = Moment(5_000_000_000);
        assert_eq!(at + Duration::new(2, 500), Moment(7_000_000_500));
        assert_eq!(at - Duration::from_secs(6), Moment(0));
        assert_eq!(at + Duration::MAX, Moment(u64::MAX));
        assert_eq!((at + Duration::from_nanos(1)).saturating_duration_since(at), Duration::from_nanos(1));
        assert_eq!(at.millis_until(at + Duration::from_nanos(1)), 1);
        assert_eq!(at.millis_until(at + Duration::from_millis(3)), 3);
        assert_eq!(at.millis_until(at + Duration::from_nanos(3_000_001)), 4);
        assert_eq!((at + Duration::from_secs(1)).millis_until(at), 0);
        assert_eq!(at + Span::from(Duration::new(2, 500)), at + Duration::new(2, 500));
        assert_eq!(at + Span::from(Duration::MAX), Moment(u64::MAX));
        let mut later = at;
        later += Duration::from_millis(20);
        assert!(later > at && later == at + Duration::from_micros(20_000));
    }
}
