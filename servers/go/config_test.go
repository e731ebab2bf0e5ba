package main

import (
	"strings"
	"testing"
	"time"
)

func run(args []string, vars map[string]string) (config, command, error) {
	return parseConfig(args, func(name string) string { return vars[name] }, 2)
}

// TestDefaultsApplyWithoutFlags checks every default of SPEC §1.
func TestDefaultsApplyWithoutFlags(t *testing.T) {
	c, cmd, err := run(nil, nil)
	if err != nil || cmd != commandServe || c.listen.String() != "127.0.0.1:8080" || c.count != 21 ||
		string(c.location) != "https://avatar.example.org/Renard-{n}.png" || c.threads != 2 ||
		c.headerTimeout != 10*time.Second || c.idleTimeout != time.Minute || c.maxConnections != 10000 ||
		c.drainTimeout != time.Second {
		t.Fatalf("%+v %v %v", c, cmd, err)
	}
}

// TestValuesAreRead covers flag forms, variables and their precedence.
func TestValuesAreRead(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		vars  map[string]string
		check func(config) bool
	}{
		{"equals form", []string{"--count=5"}, nil, func(c config) bool { return c.count == 5 }},
		{"flag over variable", []string{"--count", "5"}, map[string]string{"RENARD_COUNT": "7"}, func(c config) bool { return c.count == 5 }},
		{"variable over default", nil, map[string]string{"RENARD_COUNT": "7"}, func(c config) bool { return c.count == 7 }},
		{"empty variable is unset", nil, map[string]string{"RENARD_COUNT": ""}, func(c config) bool { return c.count == 21 }},
		{"IPv6 listen", []string{"--listen", "[::1]:0"}, nil, func(c config) bool { return c.listen.String() == "[::1]:0" }},
		{"million", []string{"--count", "1000000"}, nil, func(c config) bool { return c.count == 1000000 }},
		{"decimal timeout", []string{"--header-timeout", "0.25"}, nil, func(c config) bool { return c.headerTimeout == 250*time.Millisecond }},
		{"tiny timeout is one nanosecond", []string{"--idle-timeout", "0.0000000001"}, nil, func(c config) bool { return c.idleTimeout == 1 }},
		{"a day", []string{"--idle-timeout", "86400"}, nil, func(c config) bool { return c.idleTimeout == 24*time.Hour }},
		{"zero drain", []string{"--drain-timeout", "0"}, nil, func(c config) bool { return c.drainTimeout == 0 }},
		{"drain variable", nil, map[string]string{"RENARD_DRAIN_TIMEOUT": "2.5"}, func(c config) bool { return c.drainTimeout == 2500*time.Millisecond }},
		{"location of 2048", []string{"--location", "{n}" + strings.Repeat("a", 2045)}, nil, func(c config) bool { return len(c.location) == 2048 }},
		{"threads", []string{"--threads", "1024"}, nil, func(c config) bool { return c.threads == 1024 }},
	}
	for _, tc := range cases {
		c, _, err := run(tc.args, tc.vars)
		if err != nil || !tc.check(c) {
			t.Errorf("%s: %+v %v", tc.name, c, err)
		}
	}
}

// TestBadValuesGiveOneLineNamingTheFlag covers the SPEC §1 error form.
func TestBadValuesGiveOneLineNamingTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		vars map[string]string
		want string // the whole line, or its start when it ends with "…"
	}{
		{[]string{"--count", "0"}, nil, `renard: --count: must be an integer from 1 to 1000000 (got "0")`},
		{[]string{"--count", "+5"}, nil, "renard: --count: …"},
		{[]string{"--count", "1000001"}, nil, "renard: --count: …"},
		{nil, map[string]string{"RENARD_THREADS": "x"}, "renard: RENARD_THREADS: …"},
		{[]string{"--threads", "1025"}, nil, "renard: --threads: …"},
		{[]string{"--max-connections", "0"}, nil, "renard: --max-connections: …"},
		{[]string{"--listen", "localhost:80"}, nil, "renard: --listen: …"},
		{[]string{"--listen", "127.0.0.1:65536"}, nil, "renard: --listen: …"},
		{[]string{"--listen", "[fe80::1%lo]:80"}, nil, "renard: --listen: …"},
		{[]string{"--location", "https://a/x.png"}, nil, `renard: --location: must contain {n} (got "https://a/x.png")`},
		{[]string{"--location", "https://a/ {n}"}, nil, "renard: --location: …"},
		{[]string{"--location", "{n}" + strings.Repeat("a", 2046)}, nil, "renard: --location: …"},
		{[]string{"--idle-timeout", "0"}, nil, "renard: --idle-timeout: …"},
		{[]string{"--idle-timeout", "86400.5"}, nil, "renard: --idle-timeout: …"},
		{[]string{"--header-timeout", "1e3"}, nil, "renard: --header-timeout: …"},
		{[]string{"--header-timeout", "1."}, nil, "renard: --header-timeout: …"},
		{[]string{"--drain-timeout", "-1"}, nil, `renard: --drain-timeout: must be a decimal number of seconds from 0 to 86400 (got "-1")`},
		{nil, map[string]string{"RENARD_DRAIN_TIMEOUT": "86401"}, "renard: RENARD_DRAIN_TIMEOUT: …"},
		{[]string{"--bogus"}, nil, "renard: --bogus: unknown flag (see --help)"},
		{[]string{"--count"}, nil, "renard: --count: missing value"},
		{[]string{"serve"}, nil, `renard: "serve": unexpected argument (renard takes only flags; see --help)`},
		{[]string{"--location", "a\nb"}, nil, `renard: --location: must be visible ASCII only (0x21-0x7E: no space, no control octets) (got "a\nb")`},
	}
	for _, tc := range cases {
		_, _, err := run(tc.args, tc.vars)
		if err == nil {
			t.Errorf("%q %v: no error", tc.args, tc.vars)
			continue
		}
		line := err.Error()
		prefix := strings.TrimSuffix(tc.want, "…")
		partial := prefix != tc.want
		if strings.Contains(line, "\n") || (partial && !strings.HasPrefix(line, prefix)) || (!partial && line != tc.want) {
			t.Errorf("%q %v: got %q, want %q", tc.args, tc.vars, line, tc.want)
		}
	}
}

// TestHelpAndVersionAreRecognised: they win over anything after them.
func TestHelpAndVersionAreRecognised(t *testing.T) {
	if _, cmd, err := run([]string{"--help", "--bogus"}, nil); cmd != commandHelp || err != nil {
		t.Fatal("--help")
	}
	if _, cmd, err := run([]string{"--version"}, nil); cmd != commandVersion || err != nil {
		t.Fatal("--version")
	}
}
