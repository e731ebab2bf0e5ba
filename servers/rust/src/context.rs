//! What a connection works with besides itself: the [`Service`] every thread reads (the
//! configuration and what is built from it once) and the [`Scratch`] state each thread
//! owns and lends to one connection at a time.

use crate::config::Config;
use crate::response::{DateLine, Hot, Redirects};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Read buffer per thread, in octets: larger than the largest head (about 24.6 KiB), and
/// at the allocator's mmap threshold, so that its pages cost memory only once read into.
pub const INPUT_BUFFER: usize = 128 * 1024;
/// Most unsent response octets held per connection (SPEC §7.5).
pub const OUTPUT_BOUND: usize = 64 * 1024;

/// Built once, read by every thread.
pub struct Service {
    /// The configuration.
    pub config: Config,
    /// The rendered 302 heads.
    pub redirects: Redirects,
    /// The longest response any request can get, in octets.
    pub max_response: usize,
    /// Open connections across all threads; only [`crate::conns::Conns`] touches it.
    pub open: AtomicUsize,
}

impl Service {
    /// Render what can be rendered ahead from `config`.
    pub fn new(config: Config) -> Self {
        let redirects = Redirects::new(&config.location, config.count);
        let max_response = redirects.max_response_len();
        Service { config, redirects, max_response, open: AtomicUsize::new(0) }
    }
}

/// One thread's working state.
pub struct Scratch {
    /// Read buffer; its contents do not outlive one call.
    pub input: Box<[u8]>,
    /// Responses of the current read batch, written at once.
    pub out: Vec<u8>,
    /// The current Date line.
    pub date: DateLine,
    /// Whole `GET /` responses showing `date`.
    pub hot: Hot,
    /// Uniform draws for unseeded redirects (SPEC §3), seeded from the OS.
    pub rng: fastrand::Rng,
    /// The time of the current event batch.
    pub now: Instant,
    /// SIGTERM/SIGINT seen: every answer closes (SPEC §7.6).
    pub draining: bool,
    /// When the wall clock's next second begins (by the monotonic clock): the Date line is
    /// read and rendered again then, so that a wake reads one clock, not two.
    date_due: Instant,
}

impl Scratch {
    /// Fresh state for `svc`; `seed` seeds the generator.
    pub fn new(svc: &Service, seed: u64) -> Self {
        let date = DateLine::new(SystemTime::now());
        Scratch {
            input: vec![0; INPUT_BUFFER].into_boxed_slice(),
            out: Vec::with_capacity(OUTPUT_BOUND),
            hot: Hot::new(&svc.redirects, &date),
            date,
            rng: fastrand::Rng::with_seed(seed),
            now: Instant::now(),
            draining: false,
            date_due: Instant::now(),
        }
    }

    /// Read the clock once for a batch of events; the wall clock too when a second has
    /// begun since it was last read.
    pub fn tick(&mut self) {
        self.now = Instant::now();
        if self.now >= self.date_due {
            let wall = SystemTime::now();
            if self.date.update(wall) {
                self.hot.set_date(&self.date);
            }
            let into_second = wall.duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            self.date_due = self.now + Duration::from_nanos(u64::from(1_000_000_000 - into_second));
        }
    }
}
