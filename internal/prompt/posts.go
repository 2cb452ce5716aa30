package prompt

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/exchange"
)

// In a job of several processes, each process runs the rounds over the
// deposits of its own senders, with map tasks and reducers on its own
// receivers: a hot key's records are folded where they arrived, split
// over the process's receivers as the plan says. Cold keys' records go
// raw to their owners, in any process, as under hash.
//
// What a process's reducers merged for key groups another process owns
// (and the records found late for them) is posted to that process once
// the reducers are done, and each process takes every other's post of
// the same round before its receivers take what they own: the receivers
// of every process then merge an epoch's partials before they apply the
// epoch's watermark or save their state at its marker, as in one process.
//
// It cannot deadlock: a process's round of epoch e needs only its own
// senders' deposits and every sender's marker of e, and senders send
// their markers without waiting for a round (they wait only for the
// round of e-2, maxPending). So every process reaches its round of e by
// itself, posts, and then waits for the others' posts.

// roundNet is a process's side of the rounds' posts.
type roundNet[K comparable, T, A any] struct {
	x      *MicroShared[K, T, A]
	posts  dataflow.RoundPosts
	op     string
	self   int
	peers  []int // the other processes, ascending
	procOf func(int) int
	wire   dataflow.Wire
	epoch  uint64 // of the round being run
	err    error  // of the round's exchange, returned by every receiver
	// What the other processes posted for each receiver of this process
	// (by receiver), taken by it in own.
	parts [][]exchange.Partial[K, A]
	late  [][]dataflow.Krec[K, T]
}

// postBatch bounds the partials or records of one message, and maxPost
// its bytes (a message over it is halved, down to one partial or record;
// the transport takes up to 64 MiB).
const (
	postBatch = 4096
	maxPost   = 8 << 20
)

// encodeHalving appends to msgs the encoding of recs, as the batch mk
// makes, halving it while a message would exceed maxPost bytes.
func encodeHalving[R any](w dataflow.Wire, recs []R, mk func([]R) any, msgs [][]byte) ([][]byte, error) {
	m, err := w.Encode(nil, mk(recs))
	if err != nil {
		return msgs, err
	}
	if len(m) > maxPost && len(recs) > 1 {
		h := len(recs) / 2
		if msgs, err = encodeHalving(w, recs[:h], mk, msgs); err != nil {
			return msgs, err
		}
		return encodeHalving(w, recs[h:], mk, msgs)
	}
	return append(msgs, m), nil
}

func newRoundNet[K comparable, T, A any](x *MicroShared[K, T, A], ctx Placement) (*roundNet[K, T, A], error) {
	w, err := exchange.NewKeyedWire[K, T, A](true)
	if err != nil {
		return nil, err
	}
	n := &roundNet[K, T, A]{x: x, posts: ctx.Posts, op: ctx.Name, self: ctx.Self, procOf: ctx.ProcOf, wire: w,
		parts: make([][]exchange.Partial[K, A], x.receivers), late: make([][]dataflow.Krec[K, T], x.receivers)}
	for r := range x.receivers {
		if p := ctx.ProcOf(r); p != ctx.Self && !slices.Contains(n.peers, p) {
			n.peers = append(n.peers, p)
		}
	}
	slices.Sort(n.peers)
	if len(x.local) == 0 {
		return nil, fmt.Errorf("weir: %s: process %d runs none of its instances, and the micro-batch rounds need one in every process", ctx.Name, ctx.Self)
	}
	return n, nil
}

// exchange posts to every other process what this process's reducers
// merged for it and takes what the others posted; it runs on the last
// receiver to finish its reducer, while the others wait.
func (n *roundNet[K, T, A]) exchange() {
	n.err = nil
	for _, p := range n.peers {
		msgs, err := n.encodeFor(p)
		if err == nil {
			err = n.posts.Post(p, n.op, n.epoch, msgs)
		}
		if err != nil {
			n.err = err
			return
		}
	}
	for _, p := range n.peers {
		msgs, err := n.posts.Take(p, n.op, n.epoch)
		if err == nil {
			err = n.decode(p, msgs)
		}
		if err != nil {
			n.err = err
			return
		}
	}
}

// encodeFor takes out of the reducers' output what process p owns and
// encodes it, in messages of at most postBatch partials or records.
func (n *roundNet[K, T, A]) encodeFor(p int) ([][]byte, error) {
	var msgs [][]byte
	pb := &exchange.Pbatch[K, A]{}
	kb := &dataflow.Kbatch[K, T]{}
	flush := func(force bool) error {
		if len(pb.Recs) >= postBatch || force && len(pb.Recs) > 0 {
			var err error
			msgs, err = encodeHalving(n.wire, pb.Recs, func(r []exchange.Partial[K, A]) any { return &exchange.Pbatch[K, A]{Recs: r} }, msgs)
			if err != nil {
				return err
			}
			clear(pb.Recs)
			pb.Recs = pb.Recs[:0]
		}
		if len(kb.Recs) >= postBatch || force && len(kb.Recs) > 0 {
			var err error
			msgs, err = encodeHalving(n.wire, kb.Recs, func(r []dataflow.Krec[K, T]) any { return &dataflow.Kbatch[K, T]{Recs: r} }, msgs)
			if err != nil {
				return err
			}
			clear(kb.Recs)
			kb.Recs = kb.Recs[:0]
		}
		return nil
	}
	for _, t := range n.x.tasksOut {
		if t == nil {
			continue
		}
		for o := range t.owned {
			if n.procOf(o) != p {
				continue
			}
			for i := range t.owned[o] {
				pb.Recs = append(pb.Recs, t.owned[o][i])
				if err := flush(false); err != nil {
					return nil, err
				}
			}
			clear(t.owned[o])
			t.owned[o] = t.owned[o][:0]
		}
		for o := range t.late {
			if n.procOf(o) != p {
				continue
			}
			for i := range t.late[o] {
				kb.Recs = append(kb.Recs, t.late[o][i])
				if err := flush(false); err != nil {
					return nil, err
				}
			}
			clear(t.late[o])
			t.late[o] = t.late[o][:0]
		}
	}
	if err := flush(true); err != nil {
		return nil, err
	}
	return msgs, nil
}

// decode files process p's post under the receivers that own its keys.
func (n *roundNet[K, T, A]) decode(p int, msgs [][]byte) error {
	owner := func(h uint64) (int, error) {
		o := n.x.rt.Route(h)
		if n.x.pos[o] < 0 {
			return 0, fmt.Errorf("weir: %s: process %d posted a key of instance %d, which runs in process %d", n.op, p, o, n.procOf(o))
		}
		return o, nil
	}
	for _, m := range msgs {
		b, err := n.wire.Decode(m)
		if err != nil {
			return fmt.Errorf("weir: %s: the round of epoch %d from process %d: %w", n.op, n.epoch, p, err)
		}
		switch b := b.(type) {
		case *exchange.Pbatch[K, A]:
			for _, r := range b.Recs {
				o, err := owner(r.H)
				if err != nil {
					return err
				}
				n.parts[o] = append(n.parts[o], r)
			}
			b.Release()
		case *dataflow.Kbatch[K, T]:
			for _, r := range b.Recs {
				o, err := owner(r.H)
				if err != nil {
					return err
				}
				n.late[o] = append(n.late[o], r)
			}
			b.Release()
		default:
			return fmt.Errorf("weir: %s: the round of epoch %d from process %d holds a %T", n.op, n.epoch, p, b)
		}
	}
	return nil
}

// own takes what the other processes posted for receiver t.i into its
// window state, then forgets it (keys may point into decoded buffers).
func (n *roundNet[K, T, A]) own(t *MicroTask[K, T, A]) {
	for i := range n.parts[t.i] {
		t.sink.MergeOne(&n.parts[t.i][i])
	}
	clear(n.parts[t.i])
	n.parts[t.i] = n.parts[t.i][:0]
	for i := range n.late[t.i] {
		t.sink.Add(&n.late[t.i][i])
	}
	clear(n.late[t.i])
	n.late[t.i] = n.late[t.i][:0]
}
