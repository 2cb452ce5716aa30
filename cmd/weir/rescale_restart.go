package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/jobs/nexmark"
)

// migration is what a strategy reports of the one rescale it carried
// out: when it was asked for, when the first epoch completed once it was
// over (the end of the migration phase), and the bytes of state it moved.
type migration struct {
	requested, done time.Time
	// bytesMoved is the state moved; bytesWhole what it would have taken
	// without checkpoint reuse (for restart, the same).
	bytesMoved, bytesWhole int64
	// downtime is how long no job was running (0 for a live strategy).
	downtime time.Duration
	// checkpoint is the checkpoint the move went through (0: none).
	checkpoint uint64
	// steps is the live migration's steps (0 for restart).
	steps int
}

// strategy runs a whole rescale benchmark under one way of rescaling: it
// starts the job with r.from instances, asks for the move to r.to at
// r.at after r.clock's start, runs to the end of the input and returns
// the query's checksum over the whole run (process 0's) with what it
// measured of the move. Its jobs are built by r.build, which wires the
// source to the run's schedule and the epochs to r.log; a strategy whose
// move leaves no epoch showing some latency (a restart's downtime) adds
// it with r.log.addDuring.
type strategy func(ctx context.Context, r *rescaleRun) (nexmark.Checksum, migration, error)

// strategies are the ways of rescaling weir bench rescale measures.
var strategies = map[string]strategy{
	"restart":     restartStrategy,
	"all-at-once": liveStrategy(weir.AllAtOnce),
	"fluid":       liveStrategy(weir.Fluid),
	"batched":     liveStrategy(weir.Batched),
}

// restartStrategy stops the job cleanly at a checkpoint (Job.Stop's
// path: the next checkpoint completes, then every process stops) and
// starts it again from that checkpoint with the new instance count: what
// Flink does. The bytes moved are the checkpoint's, all of which the new
// job reads back.
func restartStrategy(ctx context.Context, r *rescaleRun) (nexmark.Checksum, migration, error) {
	var m migration
	stop := make(chan struct{})
	old, err := r.build(r.from, nil, weir.StopOn(stop))
	if err != nil {
		return nexmark.Checksum{}, m, err
	}
	timer := time.AfterFunc(time.Until(r.clock.start.Add(r.at)), func() {
		m.requested = time.Now()
		close(stop)
	})
	err = old.run(ctx)
	gap := time.Now()
	if !timer.Stop() {
		<-stop // the timer fired: wait for it to have set the time
	}
	switch {
	case err == nil:
		return nexmark.Checksum{}, m, fmt.Errorf("bench rescale: the job ended before the rescale at %v; raise --duration or lower --at", r.at)
	case !errors.Is(err, weir.ErrStopped):
		return nexmark.Checksum{}, m, err
	}
	m.checkpoint = old.jobs[0].Metrics().StoppedAt
	chk := filepath.Join(r.ckptDir, fmt.Sprintf("chk-%012d", m.checkpoint))
	if m.bytesMoved, err = dirBytes(chk); err != nil {
		return nexmark.Checksum{}, m, err
	}
	m.bytesWhole = m.bytesMoved
	r.log.next()
	next, err := r.build(r.to, []weir.JobOption{weir.FromCheckpoint(chk)})
	if err != nil {
		return nexmark.Checksum{}, m, err
	}
	if err := next.run(ctx); err != nil {
		return nexmark.Checksum{}, m, err
	}
	first, ok := r.log.firstOf(1)
	if !ok {
		return nexmark.Checksum{}, m, fmt.Errorf("bench rescale: the restarted job completed no epoch")
	}
	m.done, m.downtime = first, first.Sub(gap)
	// The input due once the old job stopped reading waited for the new
	// one: its results came with the new job's first epoch at the
	// earliest, m.downtime later, which no epoch's latency (from its cut
	// at the source) shows.
	r.log.addDuring(m.downtime)
	return next.sum, m, nil
}

// dirBytes is the total size of the files under dir that a restore
// reads: the parts' indexes (*.idx), which serve reads of single key
// groups, are left out.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(d.Name(), ".idx") {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}
