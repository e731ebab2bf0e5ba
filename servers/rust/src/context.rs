//! What a connection works with besides itself: the [`Service`] every thread reads (the
//! configuration, the [`Content`] a reload replaces, the counts the metrics show) and the
//! [`Scratch`] state each thread owns and lends to one connection at a time.

use crate::clock::{Moment, Span};
use crate::config::Config;
use crate::metrics::Counters;
use crate::response::{DateLine, Hot, Redirects};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Read buffer per thread, in octets: larger than the largest head (about 24.6 KiB), and
/// at the allocator's mmap threshold, so that its pages cost memory only once read into.
pub const INPUT_BUFFER: usize = 128 * 1024;
/// Most unsent response octets held per connection (SPEC §7.5).
pub const OUTPUT_BOUND: usize = 64 * 1024;

/// What SIGHUP replaces (SPEC §8): N, the template, and what is rendered from them.
pub struct Content {
    /// N: k is drawn from 1..=N.
    pub count: u32,
    /// The rendered 302 heads.
    pub redirects: Redirects,
    /// The longest response any request can get, in octets.
    pub max_response: usize,
    /// The template, and the folder N was counted in (for the reload's line).
    pub location: Vec<u8>,
    pub count_from: Option<std::path::PathBuf>,
}

impl Content {
    /// Render what can be rendered ahead from `config`'s N and template.
    pub fn new(config: &Config) -> Self {
        let redirects = Redirects::new(&config.location, config.count);
        let mut max_response = redirects.max_response_len();
        if config.metrics {
            max_response = max_response.max(crate::metrics::MAX_RESPONSE);
        }
        Content {
            count: config.count,
            redirects,
            max_response,
            location: config.location.clone(),
            count_from: config.count_from.clone(),
        }
    }
}

/// Built once, read by every thread.
pub struct Service {
    /// The configuration as started: its listen address, threads, limits, timeouts and
    /// metrics switch hold until exit; N and the template are [`Service::content`]'s.
    pub config: Config,
    /// `config`'s header and idle timeouts in the clock's unit: a connection's deadline,
    /// computed after each of its events, is then one addition.
    pub header_timeout: Span,
    pub idle_timeout: Span,
    /// The current content, and how many times it was replaced.
    content: Mutex<(u64, Arc<Content>)>,
    generation: AtomicU64,
    /// Open connections across all threads; only `Conns` (conns.rs) touches it.
    pub open: AtomicUsize,
    /// Threads whose listener is still open: each closes its own when the drain begins,
    /// and none answers with `Connection: close` before this is 0 (`server::start_drain`).
    pub listening: AtomicUsize,
    /// Connections closed to make room at the cap, and new ones closed unread there (SPEC §7.5).
    pub evicted: AtomicU64,
    pub refused: AtomicU64,
    /// When the service started (`renard_uptime_seconds`).
    pub started: Instant,
    /// Every thread's response counters, summed when the metrics are read.
    counters: Mutex<Vec<Arc<Counters>>>,
    /// The rate limit of the line printed at the cap (SPEC §8).
    pub cap_line: crate::report::CapLine,
}

impl Service {
    /// The service for `config`.
    pub fn new(config: Config) -> Self {
        let content = Arc::new(Content::new(&config));
        let threads = config.threads;
        Service {
            header_timeout: config.header_timeout.into(),
            idle_timeout: config.idle_timeout.into(),
            config,
            content: Mutex::new((0, content)),
            generation: AtomicU64::new(0),
            open: AtomicUsize::new(0),
            listening: AtomicUsize::new(threads),
            evicted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            started: Instant::now(),
            counters: Mutex::new(Vec::new()),
            cap_line: Default::default(),
        }
    }

    /// The current content and its generation.
    pub fn content(&self) -> (u64, Arc<Content>) {
        self.content.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Answer new requests with `config`'s N and template (SPEC §8, reload); every
    /// thread takes them at its next wake.
    pub fn replace_content(&self, config: &Config) {
        let content = Arc::new(Content::new(config));
        let mut current = self.content.lock().unwrap_or_else(PoisonError::into_inner);
        *current = (current.0 + 1, content);
        self.generation.store(current.0, Ordering::Release);
    }

    /// At the cap (SPEC §7.5): print the cap line if one is due.
    pub fn note_cap(&self) {
        let now_ms = self.started.elapsed().as_millis() as u64;
        let (evicted, refused) = (self.evicted.load(Ordering::Relaxed), self.refused.load(Ordering::Relaxed));
        if let Some(line) = self.cap_line.due(now_ms.max(1), self.config.max_connections, evicted, refused) {
            eprintln!("{line}");
        }
    }

    /// How many times the content was replaced: one load, read at every wake.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// Fresh response counters for one thread, counted in the metrics from now on.
    pub fn new_counters(&self) -> Arc<Counters> {
        let counters = Arc::new(Counters::default());
        self.counters.lock().unwrap_or_else(PoisonError::into_inner).push(counters.clone());
        counters
    }

    /// The counts `/metrics` shows, now (SPEC §8).
    pub fn snapshot(&self) -> crate::metrics::Snapshot {
        crate::metrics::Snapshot {
            responses: self.responses(),
            open: self.open.load(Ordering::Relaxed) as u64,
            evicted: self.evicted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            uptime_s: self.started.elapsed().as_secs_f64(),
        }
    }

    /// Responses sent by status, over every thread (the order of [`crate::metrics::STATUSES`]).
    pub fn responses(&self) -> [u64; crate::metrics::STATUSES.len()] {
        let mut sum = [0; crate::metrics::STATUSES.len()];
        for counters in self.counters.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            for (total, count) in sum.iter_mut().zip(counters.read()) {
                *total += count;
            }
        }
        sum
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
    pub now: Moment,
    /// SIGTERM/SIGINT seen: every answer closes (SPEC §7.6).
    pub draining: bool,
    /// N and the template this thread answers with, and their generation.
    pub content: Arc<Content>,
    generation: u64,
    /// `content`'s N and longest response, copied where the loop over requests reads them.
    pub count: u32,
    pub max_response: usize,
    /// This thread's responses by status (SPEC §8, metrics).
    pub counters: Arc<Counters>,
    /// When the wall clock's next second begins (by the monotonic clock): the Date line is
    /// read and rendered again then, so that a wake reads one clock, not two.
    date_due: Moment,
}

impl Scratch {
    /// Fresh state for `svc`; `seed` seeds the generator.
    pub fn new(svc: &Service, seed: u64) -> Self {
        let date = DateLine::new(SystemTime::now());
        let (generation, content) = svc.content();
        Scratch {
            input: vec![0; INPUT_BUFFER].into_boxed_slice(),
            out: Vec::with_capacity(OUTPUT_BOUND),
            hot: Hot::new(&content.redirects, &date),
            count: content.count,
            max_response: content.max_response,
            content,
            generation,
            counters: svc.new_counters(),
            date,
            rng: fastrand::Rng::with_seed(seed),
            now: Moment::now(),
            draining: false,
            date_due: Moment::now(),
        }
    }

    /// Take the content a reload published, if one did since the last look (one atomic
    /// load per wake): requests read from now on get the new N and template (SPEC §8).
    #[inline]
    pub fn follow(&mut self, svc: &Service) {
        if svc.generation() != self.generation {
            (self.generation, self.content) = svc.content();
            (self.count, self.max_response) = (self.content.count, self.content.max_response);
            self.hot = Hot::new(&self.content.redirects, &self.date);
        }
    }

    /// Read the clock once for a batch of events; the wall clock too when a second has
    /// begun since it was last read.
    pub fn tick(&mut self) {
        self.now = Moment::now();
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
