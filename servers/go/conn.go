package main

// One connection (SPEC §6, §7): reading, answering every complete request of a read with
// one write, body discard, persistence, lingering close, deadlines, and the state the
// eviction at the cap reads (SPEC §7.5).

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Sizes, in octets.
const (
	readSize    = 4096      // a connection's read buffer; grows while a long head arrives
	maxHeadHeld = 32 * 1024 // above the longest head parse can leave undecided (~24.6 KiB)
	outputBound = 64 * 1024 // most response octets batched before a write (SPEC §7.5)
	lingerBytes = 64 * 1024 // lingering close: most octets discarded (SPEC §7.4)
)

// lingerTime is the longest lingering close (SPEC §7.4).
const lingerTime = 2 * time.Second

// Connection states, as the eviction sees them (SPEC §7.5).
const (
	stateIdle      int32 = iota // nothing received since the accept or the last response
	statePartial                // part of a request head received
	stateBusy                   // a request is being answered, or a response written
	stateLingering              // the closing response is sent (SPEC §7.4)
	stateClosed                 // evicted or done; set once
)

// phase is where the connection is after a batch.
type phase uint8

const (
	phaseOpen        phase = iota
	phaseCloseLinger       // a closing response is queued; the client may still send
	phaseCloseNow          // a closing response is queued; the client can send nothing more
)

// conn is one client connection; its fields other than state and since belong to its
// goroutine.
type conn struct {
	s        *server
	nc       *net.TCPConn
	raw      syscall.RawConn // for the eviction's look at the receive queue
	index    int             // place in server.conns (guarded by server.mu)
	state    atomic.Int32    // one of the state constants
	since    atomic.Int64    // when the state began (partial: when the head began), server nanos
	accepted time.Time

	buf          []byte    // read buffer; buf[:held] is a partial head
	held         int       // octets of a partial head at the start of buf
	progress     progress  // how far parse has checked the partial head in buf[:held]
	bodyLeft     uint64    // body octets still to discard (SPEC §6)
	headStarted  time.Time // start of the header deadline; zero when no head is in progress
	lastProgress time.Time // last octet received or taken by the socket
	phase        phase
}

// readBuffers holds the read buffers of closed connections for the next ones, so that
// a stream of new connections does not grow the heap between collections.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, readSize); return &b }}

// outBuffers holds output batches between uses, so that a batch costs no allocation.
var outBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// park publishes the state the connection waits in, for the eviction.
func (c *conn) park(state int32, since time.Time) {
	c.since.Store(c.s.nanos(since))
	c.state.Store(state)
}

// serve runs the connection until it closes.
func (c *conn) serve() {
	defer c.s.release(c)
	bufp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bufp)
	c.buf = *bufp
	c.headStarted, c.lastProgress = c.accepted, c.accepted
	for c.phase == phaseOpen {
		parked := c.state.Load()
		timeoutAnswers := c.waitDeadline()
		if c.held == len(c.buf) && len(c.buf) < maxHeadHeld {
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		}
		n, err := c.nc.Read(c.buf[c.held:])
		now := time.Now()
		if n == 0 {
			if isTimeout(err) && timeoutAnswers && !c.draining(now) {
				c.refuse(rejectTimeout, now) // SPEC §7.5: 408 with part of a head
			}
			return // the deadline passed, the peer closed (a partial head never ends), or an error
		}
		if !c.state.CompareAndSwap(parked, stateBusy) {
			return // evicted while waiting
		}
		c.lastProgress = now
		c.answer(c.held+n, now)
		if c.phase == phaseOpen {
			if c.held > 0 {
				c.park(statePartial, c.headStarted)
			} else {
				c.park(stateIdle, now)
				if len(c.buf) > readSize {
					c.buf = *bufp // a long head is over: give back its room
				}
			}
		}
	}
	if c.phase == phaseCloseLinger {
		c.linger()
	}
}

// waitDeadline sets when waiting for input ends (SPEC §7.5, §7.6) and returns whether
// a 408 is then due (a head is in progress and the header deadline is what passed).
func (c *conn) waitDeadline() bool {
	var deadline time.Time
	timeoutAnswers := false
	switch {
	case c.held > 0:
		deadline, timeoutAnswers = c.headStarted.Add(c.s.cfg.headerTimeout), true
	case !c.headStarted.IsZero():
		deadline = minTime(c.headStarted.Add(c.s.cfg.headerTimeout), c.lastProgress.Add(c.s.cfg.idleTimeout))
	default:
		deadline = c.lastProgress.Add(c.s.cfg.idleTimeout)
	}
	c.nc.SetReadDeadline(c.drainBound(deadline))
	// A drain that began after the check in drainBound has set its own deadline on this
	// socket before or after ours: look again so that ours cannot outlast the window.
	if c.s.draining.Load() {
		c.nc.SetReadDeadline(c.drainBound(deadline))
	}
	return timeoutAnswers
}

// drainBound is deadline, or the end of the drain window if that comes first.
func (c *conn) drainBound(deadline time.Time) time.Time {
	if !c.s.draining.Load() {
		return deadline
	}
	return minTime(deadline, c.s.epoch.Add(time.Duration(c.s.drainEnd.Load())))
}

// draining reports whether the drain window has ended at now (SPEC §7.6: then a
// connection with nothing or part of a head is closed without a response).
func (c *conn) draining(now time.Time) bool {
	return c.s.draining.Load() && c.s.nanos(now) >= c.s.drainEnd.Load()
}

// answer serves buf[:length]: every complete request is answered, in order, into one
// output batch written at once (SPEC §7.3); a partial head stays at the start of buf.
func (c *conn) answer(length int, now time.Time) {
	outp := outBuffers.Get().(*[]byte)
	out := (*outp)[:0]
	defer func() {
		if cap(out) <= outputBound+c.s.maxResponse {
			*outp = out[:0]
			outBuffers.Put(outp)
		}
	}()
	input := c.buf[:length]
	date := c.s.date.current(now)
	draining := c.s.draining.Load()
	at, answered := 0, false
	for c.phase == phaseOpen {
		if c.bodyLeft > 0 {
			skip := uint64(len(input) - at)
			if c.bodyLeft < skip {
				skip = c.bodyLeft
			}
			c.bodyLeft -= skip
			at += int(skip)
		}
		if at == len(input) || c.bodyLeft > 0 {
			break
		}
		if len(out)+c.s.maxResponse > outputBound {
			// The output bound: send what is batched before answering more.
			if !c.write(out) {
				c.phase = phaseCloseNow
				return
			}
			out = out[:0]
		}
		p := parse(input[at:], &c.progress)
		if p.outcome == needMore {
			at += p.emptyLines
			break
		}
		answered = true
		if p.outcome == refused {
			out = appendResponse(out, answer{reject: p.reject}, false, closeConn, c.s.redirects, date)
			c.phase = phaseCloseLinger
			break
		}
		req := p.req
		at += req.headLen
		closing := draining || !req.keepAlive || req.chunked || req.expectContinue
		persist := keepOpen
		switch {
		case closing:
			persist = closeConn
		case req.http10:
			persist = keepAlive
		}
		a := answer{route: req.route}
		if req.route == routeRedirect {
			a.seeded = req.seeded
			if req.seeded {
				a.k = kForHash(req.seedHash, c.s.cfg.count)
			} else {
				a.k = uint32(randomUint64()%uint64(c.s.cfg.count)) + 1
			}
		}
		out = appendResponse(out, a, req.headMethod, persist, c.s.redirects, date)
		if closing {
			// A request that asked to close, with no body to come and nothing after it,
			// leaves the client nothing to send (SPEC §7.4).
			done := !req.keepAlive && !req.chunked && req.contentLength == 0 && !draining && at == len(input)
			c.phase = phaseCloseLinger
			if done {
				c.phase = phaseCloseNow
			}
			break
		}
		c.bodyLeft = req.contentLength
	}
	c.held = 0
	if c.phase == phaseOpen && at < len(input) {
		c.held = copy(c.buf, input[at:])
	}
	if answered || c.headStarted.IsZero() {
		c.headStarted = time.Time{}
		if c.held > 0 {
			c.headStarted = now
		}
	}
	if len(out) > 0 && !c.write(out) {
		c.phase = phaseCloseNow
	}
}

// write sends out whole; false when the connection failed or the socket took nothing
// more for the idle timeout (SPEC §7.5: a client that does not read is disconnected).
// The socket takes a batch at once unless its send buffer is full, so the deadline
// runs, in effect, from the moment the client stopped reading.
func (c *conn) write(out []byte) bool {
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.idleTimeout))
	if _, err := c.nc.Write(out); err != nil {
		return false
	}
	c.lastProgress = time.Now()
	return true
}

// refuse answers a refusal decided outside a batch (408), then lingers.
func (c *conn) refuse(r reject, now time.Time) {
	c.state.Store(stateBusy)
	var out [128]byte
	resp := appendResponse(out[:0], answer{reject: r}, false, closeConn, c.s.redirects, c.s.date.current(now))
	if c.write(resp) {
		c.linger()
	}
}

// linger half-closes, then discards what the client still sends for at most lingerTime
// or lingerBytes, so that a reset does not destroy the response (SPEC §7.4).
func (c *conn) linger() {
	if c.nc.CloseWrite() != nil {
		return
	}
	now := time.Now()
	c.park(stateLingering, now)
	deadline := now.Add(lingerTime)
	if c.s.draining.Load() {
		// The process exits within the window plus 1 s (SPEC §7.6).
		deadline = minTime(deadline, c.s.epoch.Add(time.Duration(c.s.drainEnd.Load())+800*time.Millisecond))
	}
	c.nc.SetReadDeadline(deadline)
	for discarded := 0; discarded < lingerBytes; {
		n, err := c.nc.Read(c.buf[:cap(c.buf)])
		discarded += n
		if err != nil {
			return
		}
	}
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
