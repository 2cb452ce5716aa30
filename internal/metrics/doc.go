// Package metrics holds what a running job measures about itself: per
// operator instance counters that the instance's own goroutine updates
// with atomic adds (Instance), the process's registry of them with its
// peers, checkpoints and epoch latencies (Registry), and the plain values
// read from them (ProcessStats, and JobStats for every process of a job).
//
// Definitions (DS2): an instance's useful time is the time it spends
// processing, serializing and deserializing, and excludes the time it
// waits for input (Idle) and for output space (Backpressure: a full
// channel to a local receiver, or no credit from a remote one). Its true
// processing rate is records in per second of useful time, its true
// output rate records out per second of useful time; observed rates
// divide by wall time instead.
package metrics
