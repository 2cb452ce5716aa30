package engine

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/routing"
)

// A checkpoint of a movable source holds, as instance blobs of operator
// "source:<name>", the position of each share's reader at index the
// share's (of the table in force at the checkpoint), and, saved by
// instance 0, "source:<name>#shares": the tables from that one on, so
// that a restart reads the shares as the checkpointed run did and carries
// out the moves it had scheduled. With the shares at their instances'
// indexes, a checkpoint of a source whose shares never moved is the one
// it always was.

// sharesSuffix names the blob of a source's share tables.
const sharesSuffix = "#shares"

// sourceOp names a source's positions in checkpoints.
func sourceOp(name string) string { return "source:" + name }

// sharesSnap saves the share tables in force after the marker being
// passed: those of the positions saved with it, and the later ones.
type sharesSnap struct{ x *shareTask }

func (s sharesSnap) SnapshotInstance() ([]byte, error) {
	return encodeTables(shareName(s.x.src.name), s.x.src.sched.Tables(s.x.report.from))
}

// RestoreInstance does nothing: the tables are read before the job is
// built (restoredShares).
func (sharesSnap) RestoreInstance([]byte) error { return nil }

// RestoreInstances does nothing either.
func (sharesSnap) RestoreInstances([][]byte) error { return nil }

// encodeTables records tables, each as the Reconfig of name.
func encodeTables(name string, ts []*partition.Table) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(len(ts)))
	for _, t := range ts {
		enc, err := migrate.Encode(migrate.Reconfig{Operator: name, Table: t})
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(len(enc)))
		b = append(b, enc...)
	}
	return b, nil
}

// restoredShares returns the share schedules the checkpoint the job
// resumes from recorded, by source name.
func (j *Job) restoredShares() (map[string]*routing.Schedule, error) {
	out := map[string]*routing.Schedule{}
	if j.boot != nil {
		// A process that joined starts from what its admitter sent.
		for name, ts := range j.boot.shares {
			s, err := routing.JoinShares(ts)
			if err != nil {
				return nil, fmt.Errorf("weir: joining the job: the shares of source %s: %w", name, err)
			}
			out[name] = s
		}
		return out, nil
	}
	if j.coord == nil || j.coord.restored == nil {
		return out, nil
	}
	for op, data := range j.coord.lowestInstances(sharesSuffix) {
		name, _ := strings.CutSuffix(op, sharesSuffix)
		if !strings.HasPrefix(name, "source:") {
			continue
		}
		ts, err := decodeTables(data)
		if err == nil {
			for _, t := range ts {
				if err = checkShares(t); err != nil {
					break
				}
			}
		}
		var s *routing.Schedule
		if err == nil {
			s, err = routing.RestoreShares(ts)
		}
		if err != nil {
			return nil, fmt.Errorf("weir: checkpoint %d: %s: %w", j.coord.from, op, err)
		}
		out[strings.TrimPrefix(name, "source:")] = s
	}
	return out, nil
}

// checkpointShares makes a movable source instance take part in
// checkpoints: it resumes at the position its share had (or, if the
// checkpoint had other shares, at what their readers left) and saves its
// share's position at each checkpoint, with the state of the operators
// fused into it and the share tables (every instance alike: any, process
// 0's included, may have left by then).
func (j *Job) checkpointShares(x *shareTask, inst, par int, snaps []dataflow.SnapEntry) error {
	op := sourceOp(x.src.name)
	snaps = append(snaps, dataflow.SnapEntry{Op: op + sharesSuffix, S: sharesSnap{x}})
	x.saves = true
	r := &reporter{c: j.coord, last: j.coord.lastReported(), inst: inst, snaps: snaps, source: &sourcePos{op: op, pos: x.reportPos, count: x.st.Count, acker: x.reportAcker}}
	if err := r.restore(par, j.Routing(par)); err != nil {
		return err
	}
	if x.share >= 0 {
		switch old := j.coord.instances[op]; {
		case old > 0 && old != x.cur.Groups():
			if err := x.st.SeekSplits(j.coord.allInstances(op)); err != nil {
				return fmt.Errorf("resuming at checkpoint %d, taken with %d shares: %w", j.coord.from, old, err)
			}
			// The instance reads other records than it did: its
			// EventTime resumes at the lowest watermark, as at another
			// parallelism.
			for _, w := range x.wms {
				if m, ok := w.w.(dataflow.InstanceMerger); ok {
					if err := m.RestoreInstances(j.coord.allInstances(w.op)); err != nil {
						return fmt.Errorf("%s: restoring checkpoint %d: %w", w.op, j.coord.from, err)
					}
				}
			}
		case old > 0:
			pos, _ := j.coord.restoredInstance(op, x.share)
			if err := x.st.Seek(pos); err != nil {
				return fmt.Errorf("resuming at checkpoint %d: %w", j.coord.from, err)
			}
		default:
			if _, err := x.st.Position(); err != nil {
				return err // not seekable: say so before the job runs
			}
		}
	}
	r.id = j.coord.join()
	x.st.SetAfter(r.after)
	return nil
}
