package op

import (
	"fmt"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// Sink sends the stream to sink. By default the sink runs as one instance;
// see Output's documentation for Parallelism.
func Sink[T any](s Stream[T], sink dataflow.Output[T], opts ...dataflow.Option) {
	j := s.job
	c := dataflow.OpOptions(opts)
	n := j.Add(&dataflow.Node{Name: c.Name, Op: "sink", Kind: plan.Sink, Par: c.Parallelism, ParSet: c.ParSet})
	refuseOptions(j, n.Name, c, 0)
	n.Inputs = []dataflow.InputEdge{plainInput(s, j.Cfg.BatchSize)}
	save := func(tc dataflow.TaskCtx) error {
		if !tc.Checkpoints {
			return nil
		}
		_, cp := sink.(dataflow.Checkpointed)
		_, tp := sink.(dataflow.TwoPhase)
		if (cp || tp) && tc.Par > 1 {
			// Instances share the output, and each passes a checkpoint at
			// its own moment: no one of them can save it.
			return fmt.Errorf("weir: %s: an exactly-once output runs as one instance in a job with checkpoints, not %d", n.Name, tc.Par)
		}
		if tc.Inst != 0 {
			return nil
		}
		if tp, ok := sink.(dataflow.TwoPhase); ok {
			cm, err := tc.Commits(tp, n.Name, tc.Inst)
			if err != nil {
				return err
			}
			tc.Saves(n.Name, cm)
		} else if c, ok := sink.(dataflow.Checkpointed); ok {
			tc.Saves(n.Name, sinkState{c})
		}
		return nil
	}
	n.NewOp = func(tc dataflow.TaskCtx, outs []any) (any, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		return &guard[T]{name: n.Name, p: &sinkOp[T]{sink: sink}}, nil
	}
	n.NewTask = func(tc dataflow.TaskCtx, outs []any) (runtime.InputTask, error) {
		if err := save(tc); err != nil {
			return nil, err
		}
		p := &guard[T]{name: n.Name, p: &sinkOp[T]{sink: sink}}
		if tc.Recv != nil {
			return exchange.NewOrdTask[T](*tc.Recv, tc.Units, p), nil
		}
		return &passTask[T]{out: p}, nil
	}
}

type sinkOp[T any] struct {
	sink dataflow.Output[T]
	d    dataflow.Batch[T]
}

func (o *sinkOp[T]) Push(b *dataflow.Batch[T]) error {
	v, _ := b.Dense(&o.d)
	err := o.sink.Write(v)
	if b.Sel != nil {
		clear(o.d.V)
	}
	return err
}

func (o *sinkOp[T]) Mark(m progress.Marker) error {
	if es, ok := o.sink.(dataflow.EpochSink); ok {
		if err := es.EndEpoch(uint64(m.Epoch)); err != nil {
			return err
		}
	}
	if m.Final {
		return o.sink.Close()
	}
	return nil
}
