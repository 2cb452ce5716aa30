package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
)

// sharePlan is a move of one source's shares.
type sharePlan struct {
	src   *shareSource
	table *partition.Table
}

// planShares plans moving the shares of every movable source so that,
// from epoch from, the instances readers(name, par) read it, share i by
// the i-th (a nil or unchanged list leaves it as it is). A source whose
// readers cannot resume what others left is refused if strict, else
// kept as it is and named, with why, among the kept ones, as are the
// sources that cannot move at all. It returns the moves and their
// announcements; nothing is added yet.
func (j *Job) planShares(from uint64, readers func(name string, par int) []int, strict bool) ([]sharePlan, []string, [][]byte, error) {
	var plans []sharePlan
	var kept []string
	var announce [][]byte
	names := make([]string, 0, len(j.splits.sources))
	for name := range j.splits.sources {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		src := j.splits.sources[name]
		rs := readers(name, src.par)
		if rs == nil {
			continue
		}
		if !src.canMove() {
			why := "its readers cannot resume the records other readers left (they do not implement weir.Rescalable)"
			if strict {
				return nil, nil, nil, fmt.Errorf("weir: source %s cannot move its shares: %s", name, why)
			}
			kept = append(kept, name+": "+why)
			continue
		}
		for _, r := range rs {
			if r < 0 || r >= src.par {
				return nil, nil, nil, fmt.Errorf("weir: source %s: no instance %d (it has %d)", name, r, src.par)
			}
		}
		t, err := sharesTable(from, src.par, rs)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("weir: source %s: %w", name, err)
		}
		if t.Equal(src.sched.At(from - 1)) {
			continue
		}
		b, err := migrate.Encode(migrate.Reconfig{Operator: shareName(name), Table: t})
		if err != nil {
			return nil, nil, nil, err
		}
		plans = append(plans, sharePlan{src, t})
		announce = append(announce, b)
	}
	for name, why := range j.splits.kept {
		kept = append(kept, name+": "+why)
	}
	slices.Sort(kept)
	return plans, kept, announce, nil
}

// addShares puts planned moves in force.
func addShares(plans []sharePlan) error {
	for _, p := range plans {
		if err := p.src.sched.Add(p.table); err != nil {
			return fmt.Errorf("source %s: %w", p.src.name, err)
		}
	}
	return nil
}

// MoveSplits moves the shares of source name while the job runs: from
// the first epoch every process can hear of it in time (returned), the
// source's input is split into len(readers) shares, share i read by
// instance readers[i], which resume the records the instances reading
// until then had left; the other instances read nothing. It refuses a
// source that cannot move (its readers not weir.Rescalable, count-based
// epochs, an ordered job, instances missing on a process), an instance
// named twice or unknown, and a move while a reconfiguration is under
// way. The other processes hear of it through the summaries.
func (j *Job) MoveSplits(name string, readers []int) (uint64, error) {
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	rt, err := j.reconfigurable()
	if err != nil {
		return 0, err
	}
	if j.splits.sources[name] == nil {
		if why, ok := j.splits.kept[name]; ok {
			return 0, fmt.Errorf("weir: source %s cannot move its shares: %s", name, why)
		}
		return 0, fmt.Errorf("weir: no source %s", name)
	}
	if len(readers) == 0 {
		return 0, fmt.Errorf("weir: source %s: no instance to read it", name)
	}
	pick := func(n string, _ int) []int {
		if n == name {
			return readers
		}
		return nil
	}
	var announce [][]byte
	from, err := j.addInTime(rt, func(from uint64) ([]routing.Addition, error) {
		var plans []sharePlan
		var err error
		plans, _, announce, err = j.planShares(from, pick, true)
		return shareAdditions(plans), err
	})
	if err != nil {
		return 0, err
	}
	j.rescale.announced, j.rescale.last = announce, from
	j.kickSummaries()
	return from, nil
}

// applyShares puts in force the move of source name's shares a peer
// announced.
func (j *Job) applyShares(name string, t *partition.Table) error {
	src := j.splits.sources[name]
	switch {
	case src == nil:
		return fmt.Errorf("no source %s whose shares move", name)
	case !src.canMove():
		return fmt.Errorf("source %s: the readers of this process cannot resume the records other readers left", name)
	}
	if err := checkShares(t); err != nil {
		return fmt.Errorf("source %s: %w", name, err)
	}
	if j.beforeBoot(t) {
		return nil
	}
	err := src.sched.Add(t)
	if errors.Is(err, routing.ErrTooLate) {
		return fmt.Errorf("source %s: %w (the announcement came too late: a longer epoch interval or a quieter network gives it more time)", name, err)
	}
	return err
}
