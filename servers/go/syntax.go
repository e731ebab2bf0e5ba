package main

// Rules 2–6 of SPEC §5 in one pass, left to right: every check is made at the octet that
// decides it, so the first deciding octet wins whatever the reads' boundaries (a bad
// octet before the 8 193rd of the request line is 400, after it 414; a field section
// that passes 16 384 octets is 431 before a bad octet that comes later). The same
// order as the flagship's pass (servers/rust/src/request.rs).

import "strings"

// Octet classes: RFC 9110 tchar; visible ASCII (request-target, rule 3); field-value
// octets (HTAB, SP, visible ASCII, obs-text; rule 5).
var (
	isTchar      = octets(func(b int) bool { return b < 0x80 && strings.IndexByte(tchars, byte(b)) >= 0 })
	isVisible    = octets(func(b int) bool { return b >= 0x21 && b <= 0x7e })
	isFieldValue = octets(func(b int) bool { return b == '\t' || (b >= 0x20 && b != 0x7f) })
)

const tchars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// octets is the table of the octets for which member is true.
func octets(member func(b int) bool) (set [256]bool) {
	for b := 0; b < 256; b++ {
		set[b] = member(b)
	}
	return set
}

// progress is how far walk has checked a head that is not complete yet, so that the next
// read resumes there rather than checking the head again from its start (a head dripped
// one octet per read costs linear time, not quadratic). Positions count from the head's
// first octet. The zero value is a head not begun.
type progress struct {
	step       step
	pos        int // octets of the head checked
	methodEnd  int // the SP after the method
	version    int // the version's first octet
	sectionEnd int // the last octet the field section may reach
	lines      int // complete field lines
}

// step is the part of the head walk checks at progress.pos.
type step uint8

const (
	inMethod    step = iota
	inTarget         // after the SP that ends the method
	inVersion        // after the SP that ends the target
	atLineStart      // a field line's first octet, or the empty line
	inName           // a field name, its first octet checked
	inValue          // after a field line's colon
)

// walk checks rules 2–6 on head (the request line onwards), from where p stands. It
// returns the length of the complete head (its empty line included), or 0 when more
// octets are needed (p then holds where to resume), or the refusal.
func walk(h []byte, p *progress) (int, reject) {
	n, pos := len(h), p.pos
	for {
		switch p.step {
		case inMethod: // one or more tchar, then SP
			for pos < n && isTchar[h[pos]] {
				pos++
			}
			if pos > maxRequestLine || pos == n {
				return p.stop(pos, maxRequestLine, rejectURITooLong)
			}
			if h[pos] != ' ' || pos == 0 {
				return 0, rejectBadRequest
			}
			p.methodEnd = pos
			pos++
			p.step = inTarget
		case inTarget: // one or more visible ASCII octets, then SP
			for pos < n && isVisible[h[pos]] {
				pos++
			}
			if pos > maxRequestLine || pos == n {
				return p.stop(pos, maxRequestLine, rejectURITooLong)
			}
			if h[pos] != ' ' || pos == p.methodEnd+1 {
				return 0, rejectBadRequest
			}
			pos++
			p.version = pos
			p.step = inVersion
		case inVersion: // HTTP/DIGIT.DIGIT octet by octet, then the line end (rule 2 before rule 4)
			start := p.version
			for pos < n && versionOctet(h[pos], pos-start) {
				pos++
			}
			if pos > maxRequestLine || pos == n {
				return p.stop(pos, maxRequestLine, rejectURITooLong)
			}
			if pos-start != 8 || (h[pos] != '\r' && h[pos] != '\n') {
				return 0, rejectBadRequest
			}
			end, r := lineEnd(h, pos)
			if end == 0 {
				return p.halt(pos, r)
			}
			if h[start+5] != '1' || (h[start+7] != '0' && h[start+7] != '1') {
				return 0, rejectVersion
			}
			pos += end
			p.sectionEnd = pos + maxFieldSection
			p.step = atLineStart
		case atLineStart: // the empty line ends the head; else a name's first octet (rules 5, 6)
			if pos == n {
				return p.halt(pos, rejectNone)
			}
			if h[pos] == '\r' || h[pos] == '\n' {
				end, r := lineEnd(h, pos)
				if end == 0 {
					return p.halt(pos, r)
				}
				if pos += end; pos > p.sectionEnd {
					return 0, rejectFieldsTooLarge
				}
				return pos, rejectNone
			}
			if !isTchar[h[pos]] {
				return 0, rejectBadRequest // obs-fold, or an octet that cannot start a name
			}
			p.step = inName
		case inName: // name ":"
			for pos < n && isTchar[h[pos]] {
				pos++
			}
			if pos > p.sectionEnd || pos == n {
				return p.stop(pos, p.sectionEnd, rejectFieldsTooLarge)
			}
			if h[pos] != ':' {
				return 0, rejectBadRequest // whitespace before the colon, among others
			}
			pos++
			p.step = inValue
		case inValue: // OWS and the value, then the line end
			for pos < n && isFieldValue[h[pos]] {
				pos++
			}
			if pos > p.sectionEnd || pos == n {
				return p.stop(pos, p.sectionEnd, rejectFieldsTooLarge)
			}
			if h[pos] != '\r' && h[pos] != '\n' {
				return 0, rejectBadRequest // a control octet or DEL in the value
			}
			end, r := lineEnd(h, pos)
			if end == 0 {
				return p.halt(pos, r)
			}
			if p.lines++; p.lines > maxFieldLines {
				return 0, rejectFieldsTooLarge
			}
			if pos += end; pos > p.sectionEnd {
				return 0, rejectFieldsTooLarge
			}
			p.step = atLineStart
		}
	}
}

// halt ends walk at pos: refused as r, or, when r is rejectNone, with the head not
// complete yet and p holding pos for the next read to resume from.
func (p *progress) halt(pos int, r reject) (int, reject) {
	if r == rejectNone {
		p.pos = pos
	}
	return 0, r
}

// stop ends walk at pos, where a scan stopped past limit (refused as over: the first
// deciding octet wins) or at the end of the octets read (more are needed).
func (p *progress) stop(pos, limit int, over reject) (int, reject) {
	if pos > limit {
		return 0, over
	}
	return p.halt(pos, rejectNone)
}

// versionOctet reports whether b fits at offset i of HTTP/DIGIT.DIGIT.
func versionOctet(b byte, i int) bool {
	switch {
	case i < 5:
		return b == "HTTP/"[i]
	case i == 5 || i == 7:
		return isDigit(b)
	case i == 6:
		return b == '.'
	}
	return false
}

// lineEnd reads the line end (LF or CR LF) at h[pos]: its length, 0 when a CR ends the
// input (its LF may follow), or 400 for a CR followed by anything else (rule 2).
func lineEnd(h []byte, pos int) (int, reject) {
	switch {
	case h[pos] == '\n':
		return 1, rejectNone
	case pos+1 == len(h):
		return 0, rejectNone
	case h[pos+1] == '\n':
		return 2, rejectNone
	}
	return 0, rejectBadRequest
}

// visibleASCII reports whether every octet of s is in 0x21–0x7E.
func visibleASCII(s []byte) bool {
	for _, b := range s {
		if !isVisible[b] {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func indexByte(s []byte, c byte) int {
	for i, b := range s {
		if b == c {
			return i
		}
	}
	return -1
}
