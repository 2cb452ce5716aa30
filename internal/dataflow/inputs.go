package dataflow

import (
	"fmt"
	"reflect"
	"strings"
)

// Recoverable is an Input that keeps something of its own across runs of
// its job besides its readers' positions: the file sources' dead-letter
// files, say. Before any reader of the job opens, each process of the job
// calls Recover once on every Recoverable input of the job (whether or not
// the process runs one of its readers), with how the job starts:
// RecoverContext.Checkpoint is the checkpoint the job restored from, or 0
// when it starts from scratch (no checkpoints, or none complete yet).
//
// A restored job reads again the records after the checkpoint, so what
// the input kept of them is already there; a job started from scratch
// reads everything again, so what it kept is stale. Recover may be called
// again, with another context, before a later run of a new job over the
// same input.
type Recoverable interface {
	Recover(RecoverContext) error
}

// RecoverContext is how a job starts, as Recover sees it.
type RecoverContext struct {
	// Checkpoint is the checkpoint restored from; 0: the job starts from
	// scratch.
	Checkpoint uint64
	// Source is the name of the source in the job.
	Source string
	// Job is the job's name.
	Job string
	// Process is this process's index and Processes the number of the
	// job's processes (0 and 1 for a job in one process).
	Process, Processes int
}

// Counted is an Input that counts something the job's summary reports,
// such as the dead letters of a file source: Counters returns the counts
// so far by name. In a distributed job the counts are summed over the
// processes (Metrics.Counters).
type Counted interface {
	Counters() map[string]int64
}

// Identified is an Input that says what it reads, for the job's identity:
// a checkpoint records the identity of the job that took it, and a job
// refuses to resume from checkpoints of another, and the processes of a
// distributed job refuse peers that run another. Identity should name
// everything that decides the records the input produces (files in order
// with their sizes, a generator's parameters) and nothing that does not
// (a replay pace, a batch size). An Input that does not implement it is
// identified by its type alone.
type Identified interface {
	Identity() string
}

// Identify returns what names an input in the job's identity.
func Identify(in any) string {
	if id, ok := in.(Identified); ok {
		return id.Identity()
	}
	return fmt.Sprintf("%T", in)
}

// TypeList names types for an operator's identity.
func TypeList(ts ...reflect.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}
