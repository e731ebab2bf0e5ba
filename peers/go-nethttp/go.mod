module renard/peers/go-nethttp

go 1.22
