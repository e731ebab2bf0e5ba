package main

import (
	"net"
	"os"
	"syscall"
)

// maxQueued bounds takeQueued: the longest listen queue Linux allows (net.core.somaxconn
// is at most 65535), so the loop ends even if clients keep arriving.
const maxQueued = 65536

// takeQueued accepts every connection the kernel has queued on the listener (handshake
// done, not yet accepted), for drain to serve once the listener is closed: closing a
// listener resets those (SPEC §7.6). The listener's descriptor is non-blocking, so
// accept4 returns EAGAIN once the queue is empty; Control runs on the descriptor
// without waiting for readiness.
func (s *server) takeQueued() (queued []*net.TCPConn) {
	raw, err := s.listener.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	raw.Control(func(fd uintptr) {
		for i := 0; i < maxQueued; i++ {
			nfd, _, err := syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
			if err == syscall.EINTR || err == syscall.ECONNABORTED {
				continue
			}
			if err != nil {
				return // EAGAIN: the queue is empty; or out of descriptors
			}
			if nc := fileConn(nfd); nc != nil {
				queued = append(queued, nc)
			}
		}
	})
	return queued
}

// fileConn turns an accepted descriptor into a *net.TCPConn (net.FileConn dups it, so
// the original is closed), or closes it and returns nil.
func fileConn(fd int) *net.TCPConn {
	f := os.NewFile(uintptr(fd), "")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil
	}
	return nc.(*net.TCPConn)
}
