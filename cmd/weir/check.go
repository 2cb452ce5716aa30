package main

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// maxKeyGroups is weir.KeyGroups' upper bound.
const maxKeyGroups = 1 << 15

// check refuses job flags that cannot work, before the command does any
// work: each error reads "--flag VALUE: why". A --workers not given is
// lowered to what the key groups allow.
func (f *jobFlags) check() error {
	fs := f.fs
	procs := max(1, f.cluster.resolved.Processes())
	if f.keyGroups < 1 || f.keyGroups > maxKeyGroups {
		return fmt.Errorf("--key-groups %d: must be from 1 to %d", f.keyGroups, maxKeyGroups)
	}
	if !fs.Changed("workers") {
		f.workers = max(1, min(f.workers, f.keyGroups/procs))
	}
	if f.workers < 1 {
		return fmt.Errorf("--workers %d: must be at least 1", f.workers)
	}
	if f.elastic && procs < 2 {
		return errors.New("--elastic: the job runs in one process, which has no other to hand its key groups to; start it with weir launch -n N (N at least 2) or --peers")
	}
	if p := f.partitioning.name; (f.elastic || f.cluster.members > 0) && (p == "prompt" || p == "pkg") {
		return fmt.Errorf("--partitioning %s does not run in an elastic job (processes that join and leave): its rounds run in every process from the job's start to its end; use hash, roundrobin or auto", p)
	}
	if f.workers > f.keyGroups || f.workers*procs > f.keyGroups {
		what := fmt.Sprintf("--workers %d exceeds", f.workers)
		switch {
		case !fs.Changed("workers"):
			what = fmt.Sprintf("%d processes exceed", procs)
		case procs > 1:
			what = fmt.Sprintf("--workers %d x %d processes exceeds", f.workers, procs)
		}
		return fmt.Errorf("%s the %d key groups: a keyed operator can have at most one instance per key group; raise --key-groups or lower --workers", what, f.keyGroups)
	}
	if fs.Changed("active-instances") && (f.active < 1 || f.active > f.workers*procs) {
		of := fmt.Sprintf("--workers %d", f.workers)
		if procs > 1 {
			of = fmt.Sprintf("--workers %d x %d processes", f.workers, procs)
		}
		return fmt.Errorf("--active-instances %d: must be from 1 to the %d instances of %s", f.active, f.workers*procs, of)
	}
	if f.interval <= 0 {
		return fmt.Errorf("--interval %v: must be positive", f.interval)
	}
	if f.epochRecords < 0 {
		return fmt.Errorf("--epoch-records %d: must not be negative (0 cuts epochs every --interval)", f.epochRecords)
	}
	if f.state != "memory" && f.state != "pebble" {
		return fmt.Errorf("--state %s: want memory or pebble", f.state)
	}
	if f.state == "pebble" && f.stateDir == "" {
		return fmt.Errorf(`--state-dir "": --state pebble needs a directory`)
	}
	if err := f.observe.check(); err != nil {
		return err
	}
	if err := f.checkAutoscale(procs); err != nil {
		return err
	}
	return f.checkCheckpoints()
}

// checkAutoscale checks --autoscale and its flags.
func (f *jobFlags) checkAutoscale(procs int) error {
	fs := f.fs
	if !f.autoscale {
		for _, n := range []string{"max-workers", "target-utilization"} {
			if fs.Changed(n) {
				return fmt.Errorf("--%s %s: needs --autoscale", n, fs.Lookup(n).Value)
			}
		}
		return nil
	}
	if !fs.Changed("max-workers") {
		f.maxWorkers = f.workers
	}
	switch {
	case f.maxWorkers < f.workers || f.maxWorkers*procs > f.keyGroups:
		return fmt.Errorf("--max-workers %d: must be from --workers %d to the %d key groups (over %d processes)", f.maxWorkers, f.workers, f.keyGroups, procs)
	case !(f.targetUtil >= 0.2 && f.targetUtil <= 1):
		return fmt.Errorf("--target-utilization %v: want 0.2 to 1", f.targetUtil)
	case fs.Changed("active-instances") && f.active > f.maxWorkers*procs:
		return fmt.Errorf("--active-instances %d: more than --max-workers %d x %d processes", f.active, f.maxWorkers, procs)
	}
	return nil
}

func (f *jobFlags) checkCheckpoints() error {
	fs := f.fs
	if f.ckptDir == "" && f.fromCkpt == "" {
		for _, n := range []string{"checkpoint-every", "checkpoint-interval", "checkpoint-keep"} {
			if fs.Changed(n) {
				return fmt.Errorf("--%s %s: needs --checkpoint-dir", n, fs.Lookup(n).Value)
			}
		}
	}
	if f.ckptKeep < 1 {
		return fmt.Errorf("--checkpoint-keep %d: must be at least 1", f.ckptKeep)
	}
	if fs.Changed("checkpoint-every") && f.ckptEvery < 1 {
		return fmt.Errorf("--checkpoint-every %d: must be at least 1 epoch", f.ckptEvery)
	}
	if !fs.Changed("checkpoint-interval") {
		return nil
	}
	switch d := f.ckptInterval; {
	case fs.Changed("checkpoint-every"):
		return fmt.Errorf("--checkpoint-interval %v: give it or --checkpoint-every, not both", d)
	case f.epochRecords > 0:
		return fmt.Errorf("--checkpoint-interval %v: epochs are cut by --epoch-records, not by time; use --checkpoint-every", d)
	case d < f.interval:
		return fmt.Errorf("--checkpoint-interval %v: must be at least --interval (%v): checkpoints are taken at epoch ends", d, f.interval)
	}
	return nil
}

// checkRate refuses a rate that is negative or not finite.
func checkRate(cmd *cobra.Command, rate float64) error {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
		return fmt.Errorf("--rate %s: must be a finite number, at least 0", cmd.Flags().Lookup("rate").Value)
	}
	return nil
}

// checkDurations refuses negative durations among the named flags.
func checkDurations(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		v := cmd.Flags().Lookup(n).Value
		if d, err := time.ParseDuration(v.String()); err == nil && d < 0 {
			return fmt.Errorf("--%s %s: must not be negative", n, v)
		}
	}
	return nil
}

// parseCount reads s as a number when it is written as one, in any form
// Go reads a number in (1000000, 1e6, 1_000_000, 1.5e6, 0x10, -5): ok is
// false when s is not a number at all. A number must be a whole one, at
// least 0; what names its unit in errors.
func parseCount(flag, s, what string) (n int64, ok bool, err error) {
	negative := fmt.Errorf("--%s %s: a number of %s must not be negative", flag, s, what)
	tooMany := fmt.Errorf("--%s %s: too many %s", flag, s, what)
	notWhole := fmt.Errorf("--%s %s: not a whole number of %s", flag, s, what)
	i, ierr := strconv.ParseInt(s, 0, 64)
	switch {
	case ierr == nil && i < 0:
		return 0, true, negative
	case ierr == nil:
		return i, true, nil
	case isRange(ierr) && strings.HasPrefix(s, "-"):
		return 0, true, negative
	case isRange(ierr):
		return 0, true, tooMany
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil && !isRange(ferr) || !strings.ContainsAny(s, "0123456789") {
		return 0, false, nil // not a number: NaN, Inf and names
	}
	switch {
	case f < 0:
		return 0, true, negative
	case f > 1<<62:
		return 0, true, tooMany
	case f == 0:
		// Zero, or a fraction too small for a float64: whole only if
		// every digit before the exponent is 0.
		if strings.Trim(mantissa(s), "+-0._xX") != "" {
			return 0, true, notWhole
		}
		return 0, true, nil
	}
	r, rok := new(big.Rat).SetString(s)
	if !rok || !r.IsInt() {
		return 0, true, notWhole
	}
	return r.Num().Int64(), true, nil
}

// mantissa returns the digits of a number before its exponent.
func mantissa(s string) string {
	exp := "eE"
	if t := strings.TrimLeft(s, "+-"); strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		exp = "pP"
	}
	if k := strings.IndexAny(s, exp); k >= 0 {
		return s[:k]
	}
	return s
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
