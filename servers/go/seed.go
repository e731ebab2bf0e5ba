package main

// SPEC §3: the seed of a query and the k it picks.

// FNV-1a-64 parameters (SPEC §3).
const (
	fnvOffset uint64 = 0xcbf29ce484222325
	fnvPrime  uint64 = 0x100000001b3
)

// seedHash finds the seed in pathAndQuery (SPEC §3.1: the first parameter whose decoded
// name is exactly "seed") and returns FNV-1a-64 of its decoded value; ok is false when
// there is no such parameter (a random draw). It does not allocate.
func seedHash(pathAndQuery []byte) (hash uint64, ok bool) {
	q := indexByte(pathAndQuery, '?')
	if q < 0 {
		return 0, false
	}
	query := pathAndQuery[q+1:]
	for {
		param := query
		amp := indexByte(query, '&')
		if amp >= 0 {
			param, query = query[:amp], query[amp+1:]
		}
		name, value := param, param[len(param):]
		if eq := indexByte(param, '='); eq >= 0 {
			name, value = param[:eq], param[eq+1:]
		}
		if decodedEquals(name, "seed") {
			h := fnvOffset
			for rest := value; len(rest) > 0; {
				var b byte
				b, rest = decodeOctet(rest)
				h = (h ^ uint64(b)) * fnvPrime
			}
			return h, true
		}
		if amp < 0 {
			return 0, false
		}
	}
}

// kForHash is (hash mod n) + 1.
func kForHash(hash uint64, n uint32) uint32 {
	return uint32(hash%uint64(n)) + 1
}

// decodedEquals reports whether the form-urlencoded encoded decodes to exactly want.
func decodedEquals(encoded []byte, want string) bool {
	i := 0
	for len(encoded) > 0 {
		var b byte
		b, encoded = decodeOctet(encoded)
		if i == len(want) || want[i] != b {
			return false
		}
		i++
	}
	return i == len(want)
}

// decodeOctet decodes the first octet of a non-empty application/x-www-form-urlencoded
// s (SPEC §3.1): "+" is SP, "%" and two hex digits (either case) is that octet, any other
// "%" is itself. It returns the octet and the rest of s.
func decodeOctet(s []byte) (byte, []byte) {
	switch s[0] {
	case '+':
		return ' ', s[1:]
	case '%':
		if len(s) >= 3 {
			hi, okHi := unhex(s[1])
			lo, okLo := unhex(s[2])
			if okHi && okLo {
				return hi<<4 | lo, s[3:]
			}
		}
	}
	return s[0], s[1:]
}

func unhex(b byte) (byte, bool) {
	switch {
	case b >= '0' && b <= '9':
		return b - '0', true
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10, true
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}
