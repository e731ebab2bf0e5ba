//! The connections of one thread, indexed by mio token, and the two things kept about
//! them as a whole: their share of the open-connection count across threads (the cap,
//! SPEC §7.5) and the earliest deadline among them. Every connection enters and leaves
//! through here, so the count and the deadline are kept in this one place.

use crate::clock::Moment;
use crate::conn::{Conn, Next};
use crate::context::{Scratch, Service};
use std::sync::atomic::Ordering;

/// One thread's connections.
pub struct Conns<'s> {
    slots: Vec<Option<Conn>>,
    free: Vec<usize>,
    live: usize,
    /// The timeouts and the cap; the counts across threads this keeps: open connections,
    /// and those evicted and refused at the cap (SPEC §7.5, §8 metrics).
    svc: &'s Service,
    /// No connection's deadline is before this (None: no connection).
    earliest: Option<Moment>,
}

impl<'s> Conns<'s> {
    /// No connections yet; the count and the cap are the service's.
    pub fn new(svc: &'s Service) -> Self {
        Conns { slots: Vec::new(), free: Vec::new(), live: 0, svc, earliest: None }
    }

    /// Count a connection that has just arrived. At the cap, close the connection of this
    /// thread least likely to be a client, whose place the newcomer takes (SPEC §7.5);
    /// false when none may go (the caller closes the newcomer unread). A scan of this
    /// thread's connections: it runs only at the cap.
    pub fn make_room(&mut self) -> bool {
        let open = &self.svc.open;
        if open.fetch_add(1, Ordering::Relaxed) < self.svc.config.max_connections {
            return true;
        }
        open.fetch_sub(1, Ordering::Relaxed);
        let ranked = self.slots.iter().enumerate();
        let victim = ranked.filter_map(|(index, slot)| Some((slot.as_ref()?.eviction_rank()?, index))).min();
        match victim {
            Some((_, index)) => {
                open.fetch_add(1, Ordering::Relaxed); // the newcomer's; remove() returns the victim's
                self.remove(index);
                self.svc.evicted.fetch_add(1, Ordering::Relaxed);
                self.svc.note_cap();
                true
            }
            None => {
                self.svc.refused.fetch_add(1, Ordering::Relaxed);
                self.svc.note_cap();
                false
            }
        }
    }

    /// A newcomer counted by [`Conns::make_room`] was not kept after all.
    pub fn unmake_room(&mut self) {
        self.svc.open.fetch_sub(1, Ordering::Relaxed);
    }

    /// The token the next [`Conns::insert`] will use.
    pub fn next_index(&self) -> usize {
        self.free.last().copied().unwrap_or(self.slots.len())
    }

    /// Keep a newcomer counted by [`Conns::make_room`] at [`Conns::next_index`], or drop
    /// it, as `next` says.
    pub fn insert(&mut self, conn: Conn, next: Next) {
        if next == Next::Close {
            self.unmake_room();
            return;
        }
        self.note_deadline(conn.deadline(self.svc).0);
        self.live += 1;
        match self.free.pop() {
            Some(index) => self.slots[index] = Some(conn),
            None => self.slots.push(Some(conn)),
        }
    }

    /// Let `work` handle the connection at `index` (if it is open), then keep or close it.
    pub fn with(&mut self, index: usize, work: impl FnOnce(&mut Conn) -> Next) {
        let Some(Some(conn)) = self.slots.get_mut(index) else { return };
        match work(conn) {
            Next::Keep => {
                let at = conn.deadline(self.svc).0;
                self.note_deadline(at);
            }
            Next::Close => self.remove(index),
        }
    }

    /// Let `work` handle every connection, then keep or close each; the earliest
    /// deadline is recomputed from those kept.
    pub fn each(&mut self, mut work: impl FnMut(&mut Conn) -> Next) {
        self.earliest = None;
        for index in 0..self.slots.len() {
            self.with(index, &mut work);
        }
    }

    /// Apply every deadline that has passed, if one may have (SPEC §7.4, §7.5).
    pub fn expire(&mut self, s: &mut Scratch) {
        if self.earliest.is_some_and(|at| at <= s.now) {
            let (svc, now) = (self.svc, s.now);
            self.each(|conn| if conn.deadline(svc).0 <= now { conn.expire(svc, s) } else { Next::Keep });
        }
    }

    /// When the earliest deadline falls (None: no connection).
    pub fn earliest_deadline(&self) -> Option<Moment> {
        self.earliest
    }

    /// No connection is open.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    fn note_deadline(&mut self, at: Moment) {
        self.earliest = Some(self.earliest.map_or(at, |e| e.min(at)));
    }

    /// Drop the connection at `index` (closing its socket). When none is left, memory
    /// returns to its baseline.
    fn remove(&mut self, index: usize) {
        if self.slots[index].take().is_some() {
            self.svc.open.fetch_sub(1, Ordering::Relaxed);
            self.live -= 1;
            self.free.push(index);
            if self.live == 0 {
                self.slots = Vec::new();
                self.free = Vec::new();
                self.earliest = None;
            }
        }
    }
}

impl Drop for Conns<'_> {
    /// The thread's loop ends: its connections close and leave the count.
    fn drop(&mut self) {
        self.svc.open.fetch_sub(self.live, Ordering::Relaxed);
    }
}
