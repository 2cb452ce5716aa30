// Package pebblestate keeps a job's keyed state on disk, in a Pebble
// database (github.com/cockroachdb/pebble/v2) per operator instance, for
// state larger than memory:
//
//	job := weir.NewJob("big", pebblestate.Dir("/var/lib/weir/state"))
//
// Only programs that import this package link Pebble; the weir package
// keeps state in memory by default. The engine decides what is kept and
// how it is laid out (see weir.KeyedStateIn); this package stores bytes.
package pebblestate
