package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
	"github.com/weirstream/weir/internal/transport"
)

// joinChannel carries the admitting process's answer to a process that
// joins: its
// bootstrap, or why it cannot join (the summaries use 0xFFFFFFFF, the
// handovers 0xFFFFFFFE, the source notes 0xFFFFFFFD).
const joinChannel = 0xFFFFFFFC

// The first byte of the answer.
const (
	bootOK      = 0
	bootRefused = 1
)

// maxBoot bounds the Reconfigs of a bootstrap.
const maxBoot = 1 << 20

// boot is what a joining process starts from: the epoch it takes part
// from, and the routing and share schedules, joins and leaves in force.
type boot struct {
	at     uint64
	keyed  map[int][]*partition.Table
	shares map[string][]*partition.Table
	joins  map[int]uint64
	leaves map[int]uint64
}

// bootstrap encodes, for process p joining at epoch at, the schedules in
// force at and after it and which processes take part from when. It
// holds j.rescale.mu.
func (j *Job) bootstrap(p int, at uint64) ([]byte, error) {
	var recs []migrate.Reconfig
	pars := make([]int, 0, len(j.rescale.pars))
	for par := range j.rescale.pars {
		pars = append(pars, par)
	}
	sort.Ints(pars)
	for _, par := range pars {
		for _, t := range j.Schedule(par).Tables(at) {
			recs = append(recs, migrate.Reconfig{Operator: routingName(par), Table: t})
		}
	}
	names := make([]string, 0, len(j.splits.sources))
	for name := range j.splits.sources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, t := range j.splits.sources[name].sched.Tables(at) {
			recs = append(recs, migrate.Reconfig{Operator: shareName(name), Table: t})
		}
	}
	mark := func(prefix string, q int, e uint64) error {
		t, err := partition.NewTable(e, 1, []int{0})
		if err == nil {
			recs = append(recs, migrate.Reconfig{Operator: prefix + strconv.Itoa(q), Table: t})
		}
		return err
	}
	for q := range j.Processes() {
		if e := j.slots.from(q); e != notYet {
			if err := mark(joinPrefix, q, e); err != nil {
				return nil, err
			}
		}
		if e := j.rescale.leave.from[q]; e > 0 {
			if err := mark(leavePrefix, q, e); err != nil {
				return nil, err
			}
		}
	}
	b := append([]byte{bootOK}, binary.AppendUvarint(nil, at)...)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for _, r := range recs {
		enc, err := migrate.Encode(r)
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(enc)))
		b = append(b, enc...)
	}
	if len(b) > maxBoot {
		return nil, fmt.Errorf("weir: join: the schedules take %d bytes, more than %d", len(b), maxBoot)
	}
	return b, nil
}

// decodeBoot reads a bootstrap; a refusal comes back as its reason.
func decodeBoot(b []byte) (*boot, error) {
	if len(b) > 0 && b[0] == bootRefused {
		return nil, fmt.Errorf("refused: %s", b[1:])
	}
	bad := errors.New("corrupt")
	if len(b) == 0 || b[0] != bootOK {
		return nil, bad
	}
	b = b[1:]
	at, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, bad
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxBoot {
		return nil, bad
	}
	b = b[k:]
	bt := &boot{at: at, keyed: map[int][]*partition.Table{}, shares: map[string][]*partition.Table{},
		joins: map[int]uint64{}, leaves: map[int]uint64{}}
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, bad
		}
		r, err := migrate.Decode(b[k : k+int(l)])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", bad, err)
		}
		b = b[k+int(l):]
		if err := bt.add(r); err != nil {
			return nil, fmt.Errorf("%w: %w", bad, err)
		}
	}
	if len(b) != 0 {
		return nil, bad
	}
	return bt, nil
}

// add files one Reconfig of a bootstrap.
func (bt *boot) add(r migrate.Reconfig) error {
	op := r.Operator
	if name, ok := strings.CutPrefix(op, "source/"); ok {
		bt.shares[name] = append(bt.shares[name], r.Table)
		return nil
	}
	for prefix, m := range map[string]map[int]uint64{joinPrefix: bt.joins, leavePrefix: bt.leaves, "keyed/": nil} {
		s, ok := strings.CutPrefix(op, prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("an unknown entry %q", op)
		}
		if m == nil {
			bt.keyed[n] = append(bt.keyed[n], r.Table)
		} else {
			m[n] = r.Table.From
		}
		return nil
	}
	return fmt.Errorf("an unknown entry %q", op)
}

// sendBootstrap sends process p its bootstrap; an error means the
// network failed or p left, which the network reports.
func sendBootstrap(nw transport.Network, p int, b []byte) {
	s := nw.Sender(joinChannel, p)
	_ = s.Send(append(s.Buffer(), b...))
}

// sendRefusal tells process p why it cannot join.
func sendRefusal(nw transport.Network, p int, why error) {
	sendBootstrap(nw, p, append([]byte{bootRefused}, why.Error()...))
}

// awaitBootstrap, on a process that joins, waits for the answer of the
// process that admits joins (join.go's admitter; process 0 until it
// leaves) and takes in the schedules it gives: the keyed routing and, for
// newSplits, the shares.
func (j *Job) awaitBootstrap(ctx context.Context, nw transport.Network) error {
	wait := max(j.Cfg.MeshTimeout, time.Minute)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		nw.Abort(fmt.Errorf("weir: process %d had no answer to its join from the job's processes within %v", nw.Self(), wait))
	})
	defer stop()
	var peers []int
	if el, ok := nw.(transport.Elastic); ok {
		for _, q := range el.Members() {
			if q != nw.Self() {
				peers = append(peers, q)
			}
		}
	}
	msg, admitter, err := transport.RecvFirst(nw, joinChannel, peers)
	if err != nil {
		return fmt.Errorf("weir: joining the job: %w", err)
	}
	bt, err := decodeBoot(msg)
	if err != nil {
		return fmt.Errorf("weir: joining the job: process %d's answer: %w", admitter, err)
	}
	if bt.joins[nw.Self()] != bt.at {
		return fmt.Errorf("weir: joining the job: process %d let in another process (slot %d) at epoch %d", admitter, nw.Self(), bt.at)
	}
	for par, ts := range bt.keyed {
		s, err := routing.Restore(ts)
		if err != nil || ts[0].Groups() != j.Cfg.KeyGroups || ts[0].Instances() != par {
			return fmt.Errorf("weir: joining the job: the routing of the keyed operators of %d instances does not fit this job (%v)", par, err)
		}
		j.SetSchedule(par, s)
	}
	j.boot = bt
	j.slots = newPresence(nw.Processes(), func(q int) uint64 {
		if e, ok := bt.joins[q]; ok && (bt.leaves[q] == 0 || bt.leaves[q] > bt.at) {
			return e
		}
		return notYet
	})
	return nil
}

// bootLeaves puts in force, on a process that joined, the leaves its
// bootstrap named: those still to come as announced, those before its
// first epoch as slots that will not come back. It holds nothing.
func (j *Job) bootLeaves() {
	if j.boot == nil {
		return
	}
	j.rescale.mu.Lock()
	defer j.rescale.mu.Unlock()
	for q, e := range j.boot.leaves {
		if e > j.boot.at {
			j.retire(q, e)
			continue
		}
		if j.rescale.leave.from == nil {
			j.rescale.leave.from = map[int]uint64{}
		}
		j.rescale.leave.from[q] = e
	}
}
