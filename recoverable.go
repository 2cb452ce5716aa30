package weir

import "fmt"

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
	// Process is this process's index and Processes the number of the
	// job's processes (0 and 1 for a job in one process).
	Process, Processes int
}

// recoverInputs calls Recover on the job's Recoverable inputs.
func (j *Job) recoverInputs(pl placement) error {
	var from uint64
	if j.coord != nil {
		from = j.coord.from
	}
	for _, n := range j.nodes {
		if n.recoverInput == nil {
			continue
		}
		rc := RecoverContext{Checkpoint: from, Source: n.name, Process: pl.self, Processes: pl.procs}
		if err := n.recoverInput(rc); err != nil {
			return fmt.Errorf("weir: %s: recovering at checkpoint %d: %w", n.name, from, err)
		}
	}
	return nil
}
