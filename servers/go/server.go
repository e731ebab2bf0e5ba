package main

// The listener, the set of open connections, eviction at the cap (SPEC §7.5, §7.5.1) and
// the drain on shutdown (SPEC §7.6). One goroutine accepts; each connection has its own.

import (
	"errors"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// server is what every connection shares.
type server struct {
	cfg         config
	redirects   *redirects
	maxResponse int // longest response, in octets
	date        dateLine
	epoch       time.Time // monotonic origin of conn.since

	listener net.Listener
	draining atomic.Bool  // SIGTERM or SIGINT seen (SPEC §7.6)
	drainEnd atomic.Int64 // end of the drain window, nanoseconds after epoch

	trimPending atomic.Bool // a scheduleTrim timer is pending

	mu    sync.Mutex
	conns []*conn // open connections, each at its own index
	wg    sync.WaitGroup
}

func newServer(cfg config, listener net.Listener) *server {
	r := newRedirects(cfg.location, cfg.count)
	return &server{cfg: cfg, redirects: r, maxResponse: r.maxResponse(), epoch: time.Now(), listener: listener}
}

// nanos is t as nanoseconds after the server's epoch (monotonic).
func (s *server) nanos(t time.Time) int64 { return int64(t.Sub(s.epoch)) }

// serve accepts connections until the listener is closed.
func (s *server) serve() {
	backoff := time.Millisecond
	for {
		nc, err := s.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, or a connection reset before it was accepted: wait a
			// little (at most 100 ms) rather than spin.
			time.Sleep(backoff)
			if backoff *= 2; backoff > 100*time.Millisecond {
				backoff = 100 * time.Millisecond
			}
			continue
		}
		backoff = time.Millisecond
		s.admit(nc.(*net.TCPConn))
	}
}

// admit registers a new connection, evicting one when the cap is reached (SPEC §7.5),
// or closes it at once when no connection can be evicted.
func (s *server) admit(nc *net.TCPConn) {
	now := time.Now()
	raw, err := nc.SyscallConn()
	if err != nil {
		nc.Close()
		return
	}
	c := &conn{s: s, nc: nc, raw: raw, accepted: now}
	c.park(stateIdle, now)
	s.mu.Lock()
	var victim *conn
	if len(s.conns) >= s.cfg.maxConnections {
		if victim = s.evictLocked(); victim == nil {
			s.mu.Unlock()
			nc.Close()
			return
		}
	}
	c.index = len(s.conns)
	s.conns = append(s.conns, c)
	s.wg.Add(1)
	s.mu.Unlock()
	if victim != nil {
		victim.nc.Close()
	}
	go c.serve()
}

// Eviction classes, most evictable first (SPEC §7.5 list).
var evictionRank = [...]int{stateLingering: 0, statePartial: 1, stateIdle: 2}

// Most candidates evictLocked looks at before giving up on one arrival.
const evictionTries = 8

// shortestHead is the length of the shortest complete request head,
// "G / HTTP/1.0\n\n": fewer octets cannot be a request to answer.
const shortestHead = 14

// evictLocked picks the connection least likely to be a real client (SPEC §7.5.1),
// marks it closed and removes it; nil when every connection is busy. s.mu is held.
//
// An idle candidate whose socket holds at least shortestHead octets its goroutine has
// not read yet (a request that arrived an instant ago, the goroutine not yet scheduled)
// is passed over: those octets may be a complete request, which is never evicted.
func (s *server) evictLocked() *conn {
	var passed [evictionTries]*conn
	for try := 0; try < evictionTries; try++ {
		var best *conn
		var bestState int32
		var bestSince int64
	scan:
		for _, c := range s.conns {
			state, since := c.state.Load(), c.since.Load()
			if state == stateBusy || state == stateClosed {
				continue
			}
			for _, p := range passed[:try] {
				if p == c {
					continue scan
				}
			}
			if best == nil || evictionRank[state] < evictionRank[bestState] ||
				(state == bestState && since < bestSince) {
				best, bestState, bestSince = c, state, since
			}
		}
		if best == nil {
			return nil
		}
		passed[try] = best
		if bestState == stateIdle && unreadOctets(best.raw) >= shortestHead {
			continue
		}
		if best.state.CompareAndSwap(bestState, stateClosed) {
			s.removeLocked(best)
			return best
		}
	}
	return nil
}

// removeLocked takes c out of the set (swap with the last). s.mu is held.
func (s *server) removeLocked(c *conn) {
	last := len(s.conns) - 1
	s.conns[c.index] = s.conns[last]
	s.conns[c.index].index = c.index
	s.conns[last] = nil
	s.conns = s.conns[:last]
	if last == 0 {
		s.conns = nil
		s.scheduleTrim()
	}
	s.wg.Done()
}

// trimDelay is how long the server must stay without connections before the memory of
// the last load is handed back to the operating system.
const trimDelay = time.Second

// scheduleTrim returns memory to its baseline once the load has ended (SPEC §7.5): one
// second after the last connection closed, if none is open then, two collections
// hand the free heap back (at most one pending at a time, so at most one per second).
func (s *server) scheduleTrim() {
	if !s.trimPending.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(trimDelay, func() {
		s.trimPending.Store(false)
		s.mu.Lock()
		idle := len(s.conns) == 0
		s.mu.Unlock()
		if idle {
			runtime.GC()         // the pools' buffers move to their victim caches,
			debug.FreeOSMemory() // then are freed, and the free heap is returned
		}
	})
}

// release is called by a connection's goroutine when it is done: it closes the socket
// unless an eviction already did.
func (s *server) release(c *conn) {
	for {
		state := c.state.Load()
		if state == stateClosed {
			return // evicted: removed and closed by evictLocked's caller
		}
		if c.state.CompareAndSwap(state, stateClosed) {
			break
		}
	}
	s.mu.Lock()
	s.removeLocked(c)
	s.mu.Unlock()
	c.nc.Close()
}

// drain starts the shutdown of SPEC §7.6: the listener closes at once; every open
// connection may still be answered (with Connection: close) until the window ends.
// It returns the end of the window.
func (s *server) drain() time.Time {
	window := s.cfg.drainTimeout
	if s.cfg.headerTimeout < window {
		window = s.cfg.headerTimeout
	}
	end := time.Now().Add(window)
	s.drainEnd.Store(s.nanos(end))
	// The listener closes before any answer says close (SPEC §7.6): a client that
	// reconnects on being told must be refused, not accepted from the queue. The
	// queued connections are taken first and served once draining is set, so each
	// is answered with Connection: close.
	queued := s.takeQueued()
	s.listener.Close()
	s.draining.Store(true)
	for _, nc := range queued {
		s.admit(nc)
	}
	s.mu.Lock()
	for _, c := range s.conns {
		// Wakes a connection waiting for input at the window's end at the latest; a
		// connection between reads sees draining itself (conn.waitDeadline).
		c.nc.SetReadDeadline(end)
	}
	s.mu.Unlock()
	return end
}

// wait returns when every connection is closed or at deadline, whichever is first.
func (s *server) wait(deadline time.Time) {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
	}
}
