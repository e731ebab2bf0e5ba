// Package main is renard as a Go user writes it: net/http's ServeMux with one pattern for
// the root, http.Redirect with 302 Found, ?seed= through the URL's Query.
// Usage: renard-nethttp HOST:PORT COUNT LOCATION   (LOCATION contains {n})
package main

import (
	"hash/fnv"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: renard-nethttp HOST:PORT COUNT LOCATION")
	}
	count, err := strconv.Atoi(os.Args[2])
	if err != nil || count < 1 {
		log.Fatalf("COUNT: %q is not a whole number of images, at least 1", os.Args[2])
	}
	location := os.Args[3]

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		query := r.URL.Query()
		k := rand.IntN(count) + 1 // uniform in 1..count
		if query.Has("seed") {
			h := fnv.New64a()
			h.Write([]byte(query.Get("seed")))
			k = int(h.Sum64()%uint64(count)) + 1
		}
		http.Redirect(w, r, strings.ReplaceAll(location, "{n}", strconv.Itoa(k)), http.StatusFound)
	})
	log.Fatal(http.ListenAndServe(os.Args[1], mux))
}
