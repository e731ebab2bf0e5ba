package main

// Uniform draws for unseeded redirects (SPEC §3): SplitMix64 over a counter that starts
// from the kernel's entropy. Every goroutine draws from the one counter (an atomic add,
// no lock); SplitMix64's output function is a bijection of the counter, so each 64-bit
// value is equally likely, and a 64-bit draw reduced mod N has a bias below N/2^64 <
// 10^-9. Two processes start from different counters.

import (
	"crypto/rand"
	"encoding/binary"
	"sync/atomic"
)

// draws is the SplitMix64 state, advanced by the golden gamma at every draw.
var draws atomic.Uint64

func init() {
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		panic("renard: no entropy from the operating system: " + err.Error())
	}
	draws.Store(binary.LittleEndian.Uint64(seed[:]))
}

// randomUint64 returns the next uniform 64-bit value.
func randomUint64() uint64 {
	z := draws.Add(0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
