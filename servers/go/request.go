package main

// Request heads (SPEC §2, §5, §6, §7.1): one entry point, parse, with three outcomes.
//
// The checks follow the flagship (servers/rust/src/request.rs) octet for octet, including
// when an answer is decided before the head is complete, so that both answer the same
// bytes for the same input: one pass over rules 1–6 where the first deciding octet wins
// (walk, syntax.go), then, on a complete head, the meaning of its fields (rules 7–9,
// interpret.go).

// Limits of SPEC §5, in octets (rule 3, rule 6) and field lines (rule 6).
const (
	maxRequestLine  = 8192
	maxFieldSection = 16384
	maxFieldLines   = 100
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

// parse reads the request head at the start of input (SPEC §5), resuming where p stands
// when an earlier read left the head incomplete; p is back to its zero value once the
// head is decided (complete or refused). It does not allocate.
func parse(input []byte, p *progress) parsed {
	// Rule 1: empty lines before the request line are dropped as they come (a head begun
	// starts at input[0]: they were dropped before it).
	at := 0
	for p.pos == 0 && at < len(input) && (input[at] == '\n' || input[at] == '\r') {
		if input[at] == '\r' {
			if at+1 == len(input) {
				break
			}
			if input[at+1] != '\n' {
				return parsed{outcome: refused, reject: rejectBadRequest}
			}
			at++
		}
		at++
	}
	if at == len(input) || input[at] == '\r' {
		return parsed{outcome: needMore, emptyLines: at}
	}
	head := input[at:]
	end, r := walk(head, p)
	if r == rejectNone && end == 0 {
		return parsed{outcome: needMore, emptyLines: at}
	}
	*p = progress{}
	if r != rejectNone {
		return parsed{outcome: refused, reject: r}
	}
	req, r := interpret(head[:end])
	if r != rejectNone {
		return parsed{outcome: refused, reject: r}
	}
	req.headLen = at + end
	return parsed{outcome: complete, req: req}
}
