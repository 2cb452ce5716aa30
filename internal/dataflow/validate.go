package dataflow

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/weirstream/weir/internal/partition"
)

// Validate checks every option of a job that is about to run (or be
// explained) in procs processes, before anything starts, and fills in
// what depends on others (the default workers, the checkpoint to start
// from). It returns the first value that cannot work, naming the option.
func (c *JobConfig) Validate(procs int) error {
	if c.Active < 0 || (c.activeSet && c.Active == 0) {
		return fmt.Errorf("weir: ActiveInstances(%d): must be at least 1", c.Active)
	}
	if c.KeyGroups < 1 || c.KeyGroups > maxKeyGroups {
		return fmt.Errorf("weir: KeyGroups(%d): must be from 1 to %d", c.KeyGroups, maxKeyGroups)
	}
	if !c.workersSet && c.Workers == 0 {
		c.Workers = max(1, min(runtime.GOMAXPROCS(0), c.KeyGroups/procs))
	}
	if c.Workers < 1 {
		return fmt.Errorf("weir: Workers(%d): must be at least 1", c.Workers)
	}
	if c.Workers > c.KeyGroups || c.Workers*procs > c.KeyGroups {
		what := fmt.Sprintf("Workers(%d) exceeds", c.Workers)
		switch {
		case !c.workersSet:
			what = fmt.Sprintf("%d processes exceed", procs)
		case procs > 1:
			what = fmt.Sprintf("Workers(%d) x %d processes exceeds", c.Workers, procs)
		}
		return fmt.Errorf("weir: %s the %d key groups: a keyed operator can have at most one instance per key group; raise KeyGroups or lower Workers",
			what, c.KeyGroups)
	}
	if err := c.validateAutoscale(procs); err != nil {
		return err
	}
	if c.Interval <= 0 {
		return fmt.Errorf("weir: BatchInterval(%v): must be positive", c.Interval)
	}
	if err := c.validateElastic(procs); err != nil {
		return err
	}
	if c.EpochRecords < 0 {
		return fmt.Errorf("weir: EpochRecords(%d): must not be negative (0 cuts epochs by time)", c.EpochRecords)
	}
	if c.BatchSize < 1 {
		return fmt.Errorf("weir: BatchSize(%d): must be at least 1", c.BatchSize)
	}
	if c.QueueDepth < 1 {
		return fmt.Errorf("weir: QueueDepth(%d): must be at least 1", c.QueueDepth)
	}
	if n := c.Partitioning; n != "" && n != "auto" {
		if _, err := partition.ParseStrategy(n); err != nil {
			return fmt.Errorf("weir: Partitioning(%q): unknown; want auto, %s", n, strategyNames())
		}
	}
	if c.Backend != nil {
		if err := c.Backend.Validate(); err != nil {
			return fmt.Errorf("weir: %s: %w", c.Backend, err)
		}
	}
	if c.TraceSet && c.TraceFile == "" {
		return fmt.Errorf(`weir: TraceFile(""): the path is empty`)
	}
	return c.validateCheckpoints()
}

func (c *JobConfig) validateCheckpoints() error {
	if c.Ckpt == nil {
		if c.fromSet {
			return fmt.Errorf("weir: FromCheckpoint(%q) needs Checkpoints", c.fromCkpt)
		}
		return nil
	}
	if c.Ckpt.Dir == "" {
		return fmt.Errorf(`weir: Checkpoints("", %d, %d): the directory is empty`, c.ckptEvery, c.ckptKeep)
	}
	if c.ckptEvery < 1 {
		return fmt.Errorf("weir: Checkpoints(%q, %d, %d): every must be at least 1 epoch", c.Ckpt.Dir, c.ckptEvery, c.ckptKeep)
	}
	if c.ckptKeep < 1 {
		return fmt.Errorf("weir: Checkpoints(%q, %d, %d): keep must be at least 1 checkpoint", c.Ckpt.Dir, c.ckptEvery, c.ckptKeep)
	}
	if c.fromSet {
		if c.fromCkpt == "" {
			return fmt.Errorf(`weir: FromCheckpoint(""): the directory is empty`)
		}
		c.Ckpt.From = c.fromCkpt
	}
	return nil
}

// validateElastic checks ElasticCluster and JoinCluster, and makes the
// keyed operators and sources start on the members' instances.
func (c *JobConfig) validateElastic(procs int) error {
	cl := c.Cluster
	switch {
	case cl == nil || cl.Members == 0 && !cl.Joins:
		return nil
	case cl.Members < 0:
		return fmt.Errorf("weir: ElasticCluster(%d) (--members): must be at least 1 process", cl.Members)
	case cl.Members == 0:
		return errors.New("weir: JoinCluster is for an elastic job: give ElasticCluster too (--members)")
	case len(cl.Peers) == 0 && cl.Net == nil:
		return errors.New("weir: ElasticCluster needs the slots' addresses (Cluster, --peers)")
	case cl.Members > procs:
		return fmt.Errorf("weir: ElasticCluster(%d) (--members): more members than the job's %d slots", cl.Members, procs)
	case cl.Joins && cl.Net == nil && len(cl.Join) == 0:
		return errors.New("weir: JoinCluster needs the address of a process of the running job (--join ADDR)")
	case !cl.Joins && cl.Self >= cl.Members:
		return fmt.Errorf("weir: process %d is not among the %d that start the elastic job; join it (JoinCluster, --join ADDR)", cl.Self, cl.Members)
	case cl.Joins && cl.Self == 0:
		return errors.New("weir: process 0 starts the elastic job: it cannot join it")
	case c.Ordered:
		return errors.New("weir: an ordered job cannot be elastic: its exchanges restore the input order by instance")
	case c.EpochRecords > 0:
		return errors.New("weir: an elastic job needs time-based epochs: processes that join must find the epoch by the clock")
	}
	active := c.Workers * cl.Members
	if c.activeSet && c.Active > active {
		return fmt.Errorf("weir: ActiveInstances(%d): the %d processes that start the elastic job run %d instances", c.Active, cl.Members, active)
	}
	if !c.activeSet {
		c.Active = active
	}
	return nil
}
