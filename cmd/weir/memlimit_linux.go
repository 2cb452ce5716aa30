package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// memoryLimits returns the machine's memory, the cgroup's memory limit
// and the address-space limit, in bytes (0: unknown or none).
func memoryLimits() (mem, cg, as uint64) {
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				mem = kb << 10
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < 1<<60 {
				cg = v
			}
			break
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur != ^uint64(0) {
		as = rl.Cur
	}
	return mem, cg, as
}
