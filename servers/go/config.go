package main

// Configuration (SPEC §1): flags, RENARD_* variables, defaults. A flag wins over its
// variable, a variable over the default; an empty variable is unset. Every error is one
// line naming the flag (or variable) and the reason; main prints it and exits 2.

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// config is a validated configuration.
type config struct {
	listen         netip.AddrPort
	count          uint32
	location       []byte
	threads        int
	headerTimeout  time.Duration
	idleTimeout    time.Duration
	maxConnections int
	drainTimeout   time.Duration // SPEC §7.6: the drain window is min(this, headerTimeout)
}

// command is what the command line asks for.
type command uint8

const (
	commandServe command = iota
	commandHelp
	commandVersion
)

const usage = `usage: renard [--flag VALUE | --flag=VALUE]...

Answers GET / with a 302 redirect to TEMPLATE with {n} replaced by k in 1..N
(uniform, or FNV-1a-64 of ?seed=S mod N + 1).

  --listen HOST:PORT       RENARD_LISTEN           default 127.0.0.1:8080 (IPv6: [ADDR]:PORT)
  --count N                RENARD_COUNT            default 21 (1 to 1000000)
  --location TEMPLATE      RENARD_LOCATION         default https://avatar.example.org/Renard-{n}.png
  --threads N              RENARD_THREADS          default: CPUs available (1 to 1024)
  --header-timeout S       RENARD_HEADER_TIMEOUT   default 10 (seconds, > 0, <= 86400)
  --idle-timeout S         RENARD_IDLE_TIMEOUT     default 60 (seconds, > 0, <= 86400)
  --max-connections N      RENARD_MAX_CONNECTIONS  default 10000 (1 to 1000000)
  --drain-timeout S        RENARD_DRAIN_TIMEOUT    default 1 (seconds, >= 0, <= 86400)
  --help                   print this text
  --version                print the version
`

// flags lists every flag with its variable, in the order of SPEC §1.
var flags = [...]struct{ flag, variable string }{
	{"--listen", "RENARD_LISTEN"},
	{"--count", "RENARD_COUNT"},
	{"--location", "RENARD_LOCATION"},
	{"--threads", "RENARD_THREADS"},
	{"--header-timeout", "RENARD_HEADER_TIMEOUT"},
	{"--idle-timeout", "RENARD_IDLE_TIMEOUT"},
	{"--max-connections", "RENARD_MAX_CONNECTIONS"},
	{"--drain-timeout", "RENARD_DRAIN_TIMEOUT"},
}

// parseConfig reads args (without the program name), the variables through getenv, and
// cpus (the default for --threads). The error is the whole line to print.
func parseConfig(args []string, getenv func(string) string, cpus int) (config, command, error) {
	var given [len(flags)]*string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "--help":
			return config{}, commandHelp, nil
		case "--version":
			return config{}, commandVersion, nil
		}
		if !strings.HasPrefix(arg, "--") {
			return config{}, 0, fmt.Errorf("renard: %s: unexpected argument (renard takes only flags; see --help)", quoted(arg))
		}
		name, value, inline := strings.Cut(arg, "=")
		slot := -1
		for s, f := range flags {
			if f.flag == name {
				slot = s
			}
		}
		if slot < 0 {
			return config{}, 0, fmt.Errorf("renard: %s: unknown flag (see --help)", escapeASCII(name))
		}
		if !inline {
			if i+1 == len(args) {
				return config{}, 0, fmt.Errorf("renard: %s: missing value", name)
			}
			i++
			value = args[i]
		}
		given[slot] = &value
	}
	var c config
	var err error
	source := func(slot int) (name, value string, ok bool) {
		if given[slot] != nil {
			return flags[slot].flag, *given[slot], true
		}
		value = getenv(flags[slot].variable)
		return flags[slot].variable, value, value != ""
	}
	read := func(slot int, parse func(string) error) {
		if name, value, ok := source(slot); ok && err == nil {
			if e := parse(value); e != nil {
				err = fmt.Errorf("renard: %s: %v (got %s)", name, e, quoted(value))
			}
		}
	}
	c.listen = netip.MustParseAddrPort("127.0.0.1:8080")
	c.count, c.location, c.threads = 21, []byte("https://avatar.example.org/Renard-{n}.png"), clamp(cpus, 1, 1024)
	c.headerTimeout, c.idleTimeout, c.maxConnections, c.drainTimeout = 10*time.Second, 60*time.Second, 10000, time.Second
	read(0, func(v string) (e error) { c.listen, e = parseListen(v); return })
	read(1, func(v string) error { n, e := parseInteger(v, 1000000); c.count = uint32(n); return e })
	read(2, func(v string) (e error) { c.location, e = parseLocation(v); return })
	read(3, func(v string) (e error) { c.threads, e = parseInteger(v, 1024); return })
	read(4, func(v string) (e error) { c.headerTimeout, e = parseSeconds(v, false); return })
	read(5, func(v string) (e error) { c.idleTimeout, e = parseSeconds(v, false); return })
	read(6, func(v string) (e error) { c.maxConnections, e = parseInteger(v, 1000000); return })
	read(7, func(v string) (e error) { c.drainTimeout, e = parseSeconds(v, true); return })
	return c, commandServe, err
}

// clamp is n within [lo, hi].
func clamp(n, lo, hi int) int {
	if n < lo {
		return lo
	}
	if n > hi {
		return hi
	}
	return n
}

// parseListen reads a numeric A.B.C.D:PORT or [IPv6]:PORT (no zone, no host name).
func parseListen(v string) (netip.AddrPort, error) {
	addr, err := netip.ParseAddrPort(v)
	if err != nil || addr.Addr().Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("must be a numeric A.B.C.D:PORT or [IPv6]:PORT with PORT 0-65535")
	}
	return addr, nil
}

// parseInteger reads decimal digits only, from 1 to most.
func parseInteger(v string, most int) (int, error) {
	n := 0
	ok := v != "" && len(v) <= 9
	for i := 0; ok && i < len(v); i++ {
		ok = isDigit(v[i])
		n = n*10 + int(v[i]-'0')
	}
	if !ok || n < 1 || n > most {
		return 0, fmt.Errorf("must be an integer from 1 to %d", most)
	}
	return n, nil
}

// parseSeconds reads DIGITS[.DIGITS] seconds, at most 86400; zero only when zeroAllowed.
// A positive value below a nanosecond counts as one nanosecond.
func parseSeconds(v string, zeroAllowed bool) (time.Duration, error) {
	reason := fmt.Errorf("must be a decimal number of seconds greater than 0 and at most 86400")
	if zeroAllowed {
		reason = fmt.Errorf("must be a decimal number of seconds from 0 to 86400")
	}
	whole, fraction, dotted := strings.Cut(v, ".")
	digits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !isDigit(s[i]) {
				return false
			}
		}
		return true
	}
	if whole == "" || len(whole) > 5 || !digits(whole) || !digits(fraction) || (dotted && fraction == "") {
		return 0, reason
	}
	var secs, nanos int64
	for i := 0; i < len(whole); i++ {
		secs = secs*10 + int64(whole[i]-'0')
	}
	for i := 0; i < 9; i++ {
		nanos *= 10
		if i < len(fraction) {
			nanos += int64(fraction[i] - '0')
		}
	}
	d := time.Duration(secs)*time.Second + time.Duration(nanos)
	exactlyZero := secs == 0 && strings.Trim(fraction, "0") == ""
	if d > 86400*time.Second || (exactlyZero && !zeroAllowed) {
		return 0, reason
	}
	if d == 0 && !exactlyZero {
		d = 1
	}
	return d, nil
}

// parseLocation reads the template: 1–2048 visible ASCII octets with {n} at least once.
func parseLocation(v string) ([]byte, error) {
	switch {
	case v == "" || len(v) > 2048:
		return nil, fmt.Errorf("must be 1 to 2048 octets long")
	case !visibleASCII([]byte(v)):
		return nil, fmt.Errorf("must be visible ASCII only (0x21-0x7E: no space, no control octets)")
	case !strings.Contains(v, "{n}"):
		return nil, fmt.Errorf("must contain {n}")
	}
	return []byte(v), nil
}

// quoted is s in double quotes with every octet outside printable ASCII escaped, so
// that an error stays on one line.
func quoted(s string) string { return `"` + escapeASCII(s) + `"` }

func escapeASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\\' || c == '\'' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}
