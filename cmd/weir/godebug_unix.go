//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
)

// freePagesLazily restarts the process, once, with madvdontneed=0 added to
// GODEBUG, unless GODEBUG already says how to release memory.
//
// File input allocates a fresh 1 MiB buffer per chunk (records in flight
// may point into the old one, so it is never rewritten). The runtime keeps
// freeing and reusing that memory; by default it hands freed pages back
// with MADV_DONTNEED, and every reuse then faults them in again, which
// costs file jobs about a tenth of their throughput with two workers.
// With MADV_FREE the kernel takes the pages back only when it needs them.
// The setting can only be given through the environment at start-up, hence
// the re-exec. Setting GODEBUG=madvdontneed=1 keeps Go's default.
func freePagesLazily() {
	const marker = "WEIR_GODEBUG_SET"
	godebug := os.Getenv("GODEBUG")
	if os.Getenv(marker) != "" || strings.Contains(godebug, "madvdontneed") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := append(os.Environ(), "GODEBUG="+godebug+"madvdontneed=0", marker+"=1")
	syscall.Exec(exe, os.Args, env) // returns only if it failed; then run as we are
}
