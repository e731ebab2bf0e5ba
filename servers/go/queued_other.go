//go:build !linux

package main

import "net"

// takeQueued takes nothing here: the connections queued on the listener when it closes
// are reset (SPEC §7.6 asks for them to be served; done on Linux, queued_linux.go).
func (s *server) takeQueued() []*net.TCPConn { return nil }
