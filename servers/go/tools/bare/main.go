// Command bare is the Go entry's yardstick (servers/go/README.md): a bare net/http handler that only writes
// the 302, with none of the spec's limits. It is not an entry; tools/cpu.sh runs it
// beside renard-go to compare CPU per request.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	location := []string{"https://avatar.example.org/Renard-7.png"}
	noStore := []string{"no-store"}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Location"] = location
		h["Cache-Control"] = noStore
		w.WriteHeader(http.StatusFound)
	}))
}
