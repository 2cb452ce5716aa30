package engine

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/jobid"
)

// claimDir makes the checkpoint directory this job's, before anything is
// restored from it: it takes the process's lock of the directory (held
// until the job ends, released by the system if the process dies), refuses
// a directory whose job ran to its end, and records the job's identity or
// refuses a directory written by another job. A deliberate start from a
// chosen checkpoint (FromCheckpoint) may take over the directory of a
// finished or another job: it says so in the log and records its own
// identity.
func (j *Job) claimDir(store *checkpoint.Store, self, procs int, log *slog.Logger) error {
	cfg := j.Cfg.Ckpt
	if cfg.Fs == nil {
		host, _ := os.Hostname()
		holder := fmt.Sprintf("job %q (process %d of %d, pid %d on %s, since %s)",
			j.Name, self, procs, os.Getpid(), host, time.Now().Format(time.RFC3339))
		lock, err := checkpoint.Lock(cfg.Dir, self, holder)
		if err != nil {
			return fmt.Errorf("weir: checkpoint directory %s is in use: %w; wait for that job to end, or use another --checkpoint-dir", cfg.Dir, err)
		}
		j.CloseAtEnd(closerFunc(lock.Release))
	}
	deliberate := cfg.From != ""
	if fin, ok, err := store.ReadMeta(checkpoint.FinishedFile); err != nil {
		return err
	} else if ok {
		if !deliberate {
			return fmt.Errorf("weir: checkpoint directory %s holds a job that ran to its end (%s); it is not resumed: remove it or use a new --checkpoint-dir to run again, or --from-checkpoint %s to start from one of its checkpoints",
				cfg.Dir, trimNL(fin), filepath.Join(cfg.Dir, "chk-N"))
		}
		log.Warn("weir: starting from a chosen checkpoint in the directory of a finished job", "dir", cfg.Dir, "from", cfg.From)
		if self == 0 {
			if err := store.RemoveMeta(checkpoint.FinishedFile); err != nil {
				return err
			}
		}
	}
	id := j.identity()
	if cfg.From != "" {
		if err := j.compareFrom(id, filepath.Dir(cfg.From), store, log); err != nil {
			return err
		}
	}
	rec, ok, err := store.ReadMeta(checkpoint.JobFile)
	if err != nil {
		return err
	}
	if ok {
		theirs, err := jobid.Decode(rec)
		if err != nil {
			return fmt.Errorf("weir: %s: %w", filepath.Join(cfg.Dir, checkpoint.JobFile), err)
		}
		d, differ := jobid.Compare(id, theirs)
		if !differ {
			return nil
		}
		if !deliberate {
			return fmt.Errorf("weir: checkpoint directory %s belongs to another job: %s (this job, then the one that wrote %s); use a new --checkpoint-dir, or --from-checkpoint %s to start from one of its checkpoints deliberately",
				cfg.Dir, d, checkpoint.JobFile, filepath.Join(cfg.Dir, "chk-N"))
		}
		log.Warn("weir: the checkpoint directory was written by another job; this job takes it over", "dir", cfg.Dir, "differs", d.String())
	} else if n, err := store.Count(); err != nil {
		return err
	} else if n > 0 {
		log.Warn("weir: the checkpoint directory records no job; taking it over", "dir", cfg.Dir, "checkpoints", n)
	}
	if self != 0 {
		return nil
	}
	return store.WriteMeta(checkpoint.JobFile, jobid.Encode(id))
}

// compareFrom warns about what differs between this job and the one that
// took the checkpoints in dir, which the job starts from deliberately.
func (j *Job) compareFrom(id jobid.Identity, dir string, own *checkpoint.Store, log *slog.Logger) error {
	if filepath.Clean(dir) == own.Dir() {
		return nil // compared with the directory's record next
	}
	fs := j.Cfg.Ckpt.Fs
	if fs == nil {
		fs = checkpoint.OSFS()
	}
	from, err := checkpoint.Open(fs, dir, log)
	if err != nil {
		return err
	}
	rec, ok, err := from.ReadMeta(checkpoint.JobFile)
	if err != nil || !ok {
		return err
	}
	theirs, err := jobid.Decode(rec)
	if err != nil {
		return fmt.Errorf("weir: %s: %w", filepath.Join(dir, checkpoint.JobFile), err)
	}
	if d, differ := jobid.Compare(id, theirs); differ {
		log.Warn("weir: starting from a checkpoint of another job", "from", j.Cfg.Ckpt.From, "differs", d.String())
	}
	return nil
}

// markFinished records that the job ran to its end, so that its directory
// is not resumed: on the lowest process that did not leave, once every
// peer has said its part ran to its end too (one that stopped, or whose
// final summary did not come, may have work to resume).
func (j *Job) markFinished() error {
	if j.coord == nil || j.leaving() || j.coord.leader(notYet-1) != j.Process() {
		return nil
	}
	if !j.endedEverywhere() {
		j.Logger().Warn("weir: not every process ran to its end; the checkpoint directory is not marked finished", "dir", j.Cfg.Ckpt.Dir)
		return nil
	}
	return j.coord.store.WriteMeta(checkpoint.FinishedFile, []byte(fmt.Sprintf("job %q finished at %s\n", j.Name, time.Now().Format(time.RFC3339))))
}

// endedEverywhere says that this process, which did not leave, and every
// peer ran the job to its end: a job with checkpoints that will not be
// resumed.
func (j *Job) endedEverywhere() bool {
	if j.coord == nil || j.leaving() {
		return false
	}
	x := j.summaries
	return x == nil || x.Board().AllEnded(j.Process())
}

func trimNL(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// closerFunc is a function that closes something.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// recoverInputs calls Recover on the job's Recoverable inputs.
func (j *Job) recoverInputs(pl placement) error {
	var from uint64
	if j.coord != nil {
		from = j.coord.from
	}
	for _, n := range j.Nodes {
		if n.RecoverInput == nil {
			continue
		}
		rc := dataflow.RecoverContext{Checkpoint: from, Source: n.Name, Job: j.Name, Process: pl.self, Processes: pl.procs}
		if err := n.RecoverInput(rc); err != nil {
			return fmt.Errorf("weir: %s: recovering at checkpoint %d: %w", n.Name, from, err)
		}
	}
	return nil
}
