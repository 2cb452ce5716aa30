package main

import (
	"os"
	"runtime/debug"
)

// setMemoryLimit gives the runtime a soft memory limit when GOMEMLIMIT is
// not set: three quarters of the memory the process may use (the
// machine's, or its cgroup's limit if lower), and at most half of its
// address-space limit (ulimit -v, prlimit --as), which the runtime's
// reservations also count against. With defaultGOGC the heap may grow to
// five times what is live; a job whose state is large (checkpoints copy
// it, a rescale moves it) would otherwise reach the limits of the machine
// before it collects. Near the soft limit the collector runs more often
// instead.
func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	mem, cg, as := memoryLimits()
	if lim := softLimit(mem, cg, as); lim > 0 {
		debug.SetMemoryLimit(lim)
	}
}

// softLimit is the soft memory limit for physical memory mem, a cgroup
// limit cg and an address-space limit as, in bytes (0: unknown or none);
// 0 if none is known.
func softLimit(mem, cg, as uint64) int64 {
	avail := mem
	if cg > 0 && (avail == 0 || cg < avail) {
		avail = cg
	}
	lim := avail / 4 * 3
	if as > 0 && (lim == 0 || as/2 < lim) {
		lim = as / 2
	}
	return int64(min(lim, 1<<62))
}
