//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuSeconds is the CPU time this process has used (user and system): on
// a shared machine, work per CPU second is what cores of its own would do.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
