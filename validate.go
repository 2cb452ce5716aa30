package weir

import (
	"fmt"
	"runtime"

	"github.com/weirstream/weir/internal/partition"
)

// validate checks every option of a job that is about to run (or be
// explained) in procs processes, before anything starts, and fills in
// what depends on others (the default workers, the checkpoint to start
// from). It returns the first value that cannot work, naming the option.
func (c *jobConfig) validate(procs int) error {
	if c.keyGroups < 1 || c.keyGroups > maxKeyGroups {
		return fmt.Errorf("weir: KeyGroups(%d): must be from 1 to %d", c.keyGroups, maxKeyGroups)
	}
	if !c.workersSet && c.workers == 0 {
		c.workers = max(1, min(runtime.GOMAXPROCS(0), c.keyGroups/procs))
	}
	if c.workers < 1 {
		return fmt.Errorf("weir: Workers(%d): must be at least 1", c.workers)
	}
	if c.workers > c.keyGroups || c.workers*procs > c.keyGroups {
		what := fmt.Sprintf("Workers(%d) exceeds", c.workers)
		switch {
		case !c.workersSet:
			what = fmt.Sprintf("%d processes exceed", procs)
		case procs > 1:
			what = fmt.Sprintf("Workers(%d) x %d processes exceeds", c.workers, procs)
		}
		return fmt.Errorf("weir: %s the %d key groups: a keyed operator can have at most one instance per key group; raise KeyGroups or lower Workers",
			what, c.keyGroups)
	}
	if c.interval <= 0 {
		return fmt.Errorf("weir: BatchInterval(%v): must be positive", c.interval)
	}
	if c.epochRecords < 0 {
		return fmt.Errorf("weir: EpochRecords(%d): must not be negative (0 cuts epochs by time)", c.epochRecords)
	}
	if c.batchSize < 1 {
		return fmt.Errorf("weir: BatchSize(%d): must be at least 1", c.batchSize)
	}
	if c.queueDepth < 1 {
		return fmt.Errorf("weir: QueueDepth(%d): must be at least 1", c.queueDepth)
	}
	if n := c.partitioning; n != "" && n != "auto" {
		if _, err := partition.ParseStrategy(n); err != nil {
			return fmt.Errorf("weir: Partitioning(%q): unknown; want auto, %s", n, strategyNames())
		}
	}
	if c.backend != nil {
		if err := c.backend.Validate(); err != nil {
			return fmt.Errorf("weir: %s: %w", c.backend, err)
		}
	}
	return c.validateCheckpoints()
}

func (c *jobConfig) validateCheckpoints() error {
	if c.ckpt == nil {
		if c.fromSet {
			return fmt.Errorf("weir: FromCheckpoint(%q) needs Checkpoints", c.fromCkpt)
		}
		return nil
	}
	if c.ckpt.dir == "" {
		return fmt.Errorf(`weir: Checkpoints("", %d, %d): the directory is empty`, c.ckptEvery, c.ckptKeep)
	}
	if c.ckptEvery < 1 {
		return fmt.Errorf("weir: Checkpoints(%q, %d, %d): every must be at least 1 epoch", c.ckpt.dir, c.ckptEvery, c.ckptKeep)
	}
	if c.ckptKeep < 1 {
		return fmt.Errorf("weir: Checkpoints(%q, %d, %d): keep must be at least 1 checkpoint", c.ckpt.dir, c.ckptEvery, c.ckptKeep)
	}
	if c.fromSet {
		if c.fromCkpt == "" {
			return fmt.Errorf(`weir: FromCheckpoint(""): the directory is empty`)
		}
		c.ckpt.from = c.fromCkpt
	}
	return nil
}
