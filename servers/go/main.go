// Command renard answers GET / with a 302 to a random avatar (spec/SPEC.md), in Go with
// the standard library only.
//
// main reads as the story: configuration, the listener, the first line on stderr, serving
// until SIGTERM or SIGINT, the drain, exit 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// version is printed by --version.
const version = "0.1.0"

func main() {
	cfg, cmd, err := parseConfig(os.Args[1:], os.Getenv, runtime.NumCPU())
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case cmd == commandHelp:
		fmt.Print(usage)
		return
	case cmd == commandVersion:
		fmt.Println("renard " + version)
		return
	}
	runtime.GOMAXPROCS(cfg.threads)

	// KeepAlive -1: no TCP keep-alive probes on accepted connections (Go's default turns them on,
	// four setsockopt calls per connection); the spec's idle timeout (§7.3) ends idle ones.
	lc := net.ListenConfig{KeepAlive: -1}
	listener, err := lc.Listen(context.Background(), "tcp", cfg.listen.String())
	if err != nil {
		var sys *os.SyscallError
		if errors.As(err, &sys) {
			err = sys.Err
		}
		fmt.Fprintf(os.Stderr, "renard: --listen: cannot bind %s: %v\n", cfg.listen, err)
		os.Exit(1)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	// SIGHUP reloads the flagship (SPEC §8, optional, not implemented here): ignored
	// rather than Go's default, which would end the process without a drain.
	signal.Ignore(syscall.SIGHUP)

	s := newServer(cfg, listener)
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", listener.Addr())
	go s.serve()

	<-signals
	end := s.drain()
	// SPEC §7.6: exit within the window plus 1 s, whatever is still open.
	s.wait(end.Add(900 * time.Millisecond))
	os.Exit(0)
}
