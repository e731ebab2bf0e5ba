package main

import (
	"syscall"
	"unsafe"
)

// unreadOctets is how many octets wait in the socket's receive queue, not yet read by
// the connection's goroutine (ioctl FIONREAD); 0 when it cannot be told.
func unreadOctets(raw syscall.RawConn) int {
	var n int32
	raw.Control(func(fd uintptr) {
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		if errno != 0 {
			n = 0
		}
	})
	return int(n)
}
