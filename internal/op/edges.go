package op

import (
	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/prompt"
)

// The edges into operators, and with them the exchange each edge's
// senders use: forward, gather or rebalance for plain edges (ordered or
// not), key-group routing for keyed ones (raw records into a window or
// join, records as they are into a keyed record operator, in an ordered
// job with sequence numbers), and for a window's edge the strategy's:
// hash, pre-aggregation (roundrobin) or the micro-batch rounds.

// plainInput is an edge from s that needs no key: forward, gather or
// rebalance, decided by the plan.
func plainInput[T any](s Stream[T], batchSize int) dataflow.InputEdge {
	return dataflow.InputEdge{
		From: s.node, FromPort: s.port,
		Exchange: func(x dataflow.ExchangeCtx) any {
			if x.Ordered {
				return &guard[T]{name: x.Name, p: exchange.NewOrdSendEx[T](x, batchSize, s.timed)}
			}
			return &guard[T]{name: x.Name, p: exchange.NewSendEx[T](x.Outlets, batchSize, s.timed)}
		},
		Wire: func() (dataflow.Wire, error) { return exchange.NewBatchWire[T](batchSize, s.timed) },
	}
}

func keyedInput[K comparable, T any](k KeyedStream[K, T]) dataflow.InputEdge {
	j := k.s.job
	return dataflow.InputEdge{
		From: k.s.node, FromPort: k.s.port, Keyed: true,
		Exchange: func(x dataflow.ExchangeCtx) any {
			return &guard[T]{name: x.Name, p: exchange.NewKeyEx[K, T](k.key, x.Routing, x.Outlets, j.Cfg.BatchSize, x.Dist).Follow(x.Schedule)}
		},
		Wire: func() (dataflow.Wire, error) { return exchange.NewKeyedWire[K, T, struct{}](false) },
	}
}

// recordKeyedInput is the edge into a keyed record operator: records go,
// unchanged, to the owner of their key's group.
func recordKeyedInput[K comparable, T any](k KeyedStream[K, T]) dataflow.InputEdge {
	j := k.s.job
	return dataflow.InputEdge{
		From: k.s.node, FromPort: k.s.port, Keyed: true,
		Exchange: func(x dataflow.ExchangeCtx) any {
			if x.Ordered {
				return &guard[T]{name: x.Name, p: exchange.NewOrdKeyEx(k.key, x, j.Cfg.BatchSize, k.s.timed)}
			}
			return &guard[T]{name: x.Name, p: exchange.NewRouteEx(k.key, x.Routing, x.Outlets, j.Cfg.BatchSize, k.s.timed, x.Dist).Follow(x.Schedule)}
		},
		Wire: func() (dataflow.Wire, error) { return exchange.NewBatchWire[T](j.Cfg.BatchSize, k.s.timed) },
	}
}

// windowInput is the keyed edge into a window operator, by partitioning
// strategy.
func windowInput[K comparable, T, A, R any](ws WindowedStream[K, T], agg Aggregator[T, A, R], strat partition.Strategy,
	st *exchange.EdgeStats, micro *prompt.MicroShared[K, T, A]) dataflow.InputEdge {
	j, key := ws.k.s.job, ws.k.key
	in := keyedInput(ws.k)
	in.Wire = func() (dataflow.Wire, error) {
		// The micro-batch rounds post partials between processes with
		// this wire's codecs (prompt.roundNet).
		micro := strat == partition.PKG || strat == partition.Prompt
		return exchange.NewKeyedWire[K, T, A](strat == partition.RoundRobin || micro)
	}
	in.Exchange = func(x dataflow.ExchangeCtx) any {
		var p dataflow.Pusher[T]
		switch strat {
		case partition.Hash:
			p = exchange.NewKeyEx[K, T](key, x.Routing, x.Outlets, j.Cfg.BatchSize, x.Dist).WithStats(st, x.Sender, x.Senders).Follow(x.Schedule)
		case partition.RoundRobin:
			c := exchange.NewCombineEx[K, T, A](key, x.Routing, x.Outlets, j.Cfg.BatchSize, ws.spec, agg.Init, agg.Add, x.Dist)
			c.Raw.WithStats(st, x.Sender, x.Senders).Follow(x.Schedule)
			c.Adapt = st.Auto
			if x.From > 0 {
				// Restored: the combiner does not know the watermark the
				// window has; its first epoch goes raw, so that the window
				// decides what is late.
				c.Off = 1
			}
			p = c
		default:
			p = prompt.NewMicroEx(micro, x, j)
		}
		return &guard[T]{name: x.Name, p: p}
	}
	return in
}
