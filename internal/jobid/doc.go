// Package jobid describes what a job is, as far as its results go: an
// ordered list of named entries (its operators with their declarations
// and parameters, its key groups, each source's identity), compared
// entry by entry so that a mismatch can be named. A checkpoint directory
// records the identity of the job that writes there, and a job refuses to
// resume from checkpoints of another. It is pure: it encodes, decodes and
// compares, and touches no file.
package jobid
