package main

// Request heads (SPEC §2, §5, §6, §7.1): one entry point, parse, with three outcomes.
//
// The checks follow the flagship (servers/rust/src/request.rs) octet for octet, including
// when an answer is decided before the head is complete, so that both answer the same
// bytes for the same input: a size scan first (rule 2 bare CR, rule 3 and rule 6 limits),
// then a syntax pass over what has arrived (rules 3–5, stopping at the first bad octet),
// then, on a complete head, the meaning of its fields (rules 7–9).

// Limits of SPEC §5, in octets (rule 3, rule 6) and field lines (rule 6).
const (
	maxRequestLine  = 8192
	maxFieldSection = 16384
	maxFieldLines   = 100
	// The most of an oversized head that the syntax pass reads (rule 6 after rules 3–5).
	maxHeadChecked = maxRequestLine + 2 + maxFieldSection + 1
)

// reject is why a request is refused; every refusal closes the connection (SPEC §7.2).
type reject uint8

const (
	rejectNone reject = iota
	rejectBadRequest
	rejectTimeout // 408: decided by the connection, never by parse
	rejectURITooLong
	rejectFieldsTooLarge
	rejectNotImplemented
	rejectVersion
)

// route is what a well-formed request is answered with (SPEC §2).
type route uint8

const (
	routeRedirect route = iota
	routeHealth
	routeNotFound
	routeMethodNotAllowed
)

// request is a complete, valid request head.
type request struct {
	headLen        int    // octets of the head in the input, leading empty lines included
	route          route  // what to answer
	seeded         bool   // routeRedirect with a seed: seedHash is FNV-1a-64 of it
	seedHash       uint64 // see seeded
	headMethod     bool   // HEAD: no body in the answer
	http10         bool   // HTTP/1.0 (else HTTP/1.1)
	keepAlive      bool   // persistent by the request's own terms (SPEC §7.1)
	contentLength  uint64 // body octets to discard (SPEC §6)
	chunked        bool   // Transfer-Encoding: chunked: answer, then close
	expectContinue bool   // HTTP/1.1 Expect: 100-continue with a body: answer, then close
}

// outcome is the kind of a parse result.
type outcome uint8

const (
	complete outcome = iota
	needMore
	refused
)

// parsed is the result of parse: a request (complete), how many leading empty-line
// octets may be dropped (needMore), or the refusal (refused).
type parsed struct {
	outcome    outcome
	req        request
	emptyLines int
	reject     reject
}

// parse reads the request head at the start of input (SPEC §5). It does not allocate.
func parse(input []byte) parsed {
	start := leadingEmptyLines(input)
	buf := input[start:]
	shape, headEnd, r := scan(buf)
	if r != rejectNone {
		return parsed{outcome: refused, reject: r}
	}
	switch shape {
	case shapeIncomplete:
		// What has come may already break rules 3–5: refuse it now, not at the deadline.
		if r := checkSyntax(buf); r != rejectNone {
			return parsed{outcome: refused, reject: r}
		}
		return parsed{outcome: needMore, emptyLines: start}
	case shapeOversized:
		head := buf
		if len(head) > maxHeadChecked {
			head = head[:maxHeadChecked]
		}
		if r := checkSyntax(head); r != rejectNone {
			return parsed{outcome: refused, reject: r}
		}
		return parsed{outcome: refused, reject: rejectFieldsTooLarge}
	}
	head := buf[:headEnd]
	if r := checkSyntax(head); r != rejectNone {
		return parsed{outcome: refused, reject: r}
	}
	req, r := interpret(head)
	if r != rejectNone {
		return parsed{outcome: refused, reject: r}
	}
	req.headLen = start + headEnd
	return parsed{outcome: complete, req: req}
}

// leadingEmptyLines is the number of octets of CRLF or LF empty lines at the start of
// buf (rule 1). A lone trailing CR stays: it may be the start of a CRLF.
func leadingEmptyLines(buf []byte) int {
	i := 0
	for {
		switch {
		case i < len(buf) && buf[i] == '\n':
			i++
		case i+1 < len(buf) && buf[i] == '\r' && buf[i+1] == '\n':
			i += 2
		default:
			return i
		}
	}
}

// shape is where a head ends, found without parsing it.
type shape uint8

const (
	shapeIncomplete shape = iota // no empty line yet, every limit holds
	shapeOversized               // the field section passed its size or line limit
	shapeHead                    // the head ends at headEnd, its empty line included
)

// scan finds the end of the head in buf (no leading empty lines) while enforcing rule 2
// (a CR not followed by LF) and the limits of rules 3 and 6.
func scan(buf []byte) (s shape, headEnd int, r reject) {
	lineStart := 0
	fieldsStart := -1 // index after the request line's LF
	fieldLines := 0
	i := 0
bytes:
	for ; i < len(buf); i++ {
		switch buf[i] {
		case '\r':
			if i+1 == len(buf) {
				break bytes
			}
			if buf[i+1] != '\n' {
				return 0, 0, rejectBadRequest
			}
		case '\n':
			contentEnd := i
			if i > lineStart && buf[i-1] == '\r' {
				contentEnd = i - 1
			}
			if fieldsStart < 0 {
				if contentEnd > maxRequestLine {
					return 0, 0, rejectURITooLong
				}
				fieldsStart = i + 1
			} else {
				if i+1-fieldsStart > maxFieldSection {
					return shapeOversized, 0, rejectNone
				}
				if contentEnd == lineStart {
					return shapeHead, i + 1, rejectNone
				}
				fieldLines++
				if fieldLines > maxFieldLines {
					return shapeOversized, 0, rejectNone
				}
			}
			lineStart = i + 1
		}
	}
	// buf[:i] holds no complete head; the limits still apply to what has come.
	switch {
	case fieldsStart < 0 && i > maxRequestLine:
		return 0, 0, rejectURITooLong
	case fieldsStart >= 0 && i-fieldsStart > maxFieldSection:
		return shapeOversized, 0, rejectNone
	}
	return shapeIncomplete, 0, rejectNone
}
