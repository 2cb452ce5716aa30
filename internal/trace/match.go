package trace

import (
	"cmp"
	"slices"
)

// Message is a message edge: the indices of its Send and Recv events.
type Message struct{ Send, Recv int }

// Match pairs each Send event of ev with the Recv event of equal
// (Channel, Seq); should several share one, the k-th send (by end) goes
// with the k-th receive (by start). A pair received before it was sent
// (clocks of two processes apart), or on the same worker before its send,
// is dropped and counted. Messages come in the order of their sends' ends.
func Match(ev []Event) (msgs []Message, dropped int) {
	type key struct{ ch, seq uint64 }
	type ends struct{ send, recv []int }
	byKey := map[key]*ends{}
	for i, e := range ev {
		if e.Kind != Send && e.Kind != Recv {
			continue
		}
		k := key{e.Channel, e.Seq}
		en := byKey[k]
		if en == nil {
			en = &ends{}
			byKey[k] = en
		}
		if e.Kind == Send {
			en.send = append(en.send, i)
		} else {
			en.recv = append(en.recv, i)
		}
	}
	for _, en := range byKey {
		if len(en.send) > 1 || len(en.recv) > 1 {
			slices.SortStableFunc(en.send, func(a, b int) int { return cmp.Compare(ev[a].End, ev[b].End) })
			slices.SortStableFunc(en.recv, func(a, b int) int { return cmp.Compare(ev[a].Start, ev[b].Start) })
		}
		for k := range min(len(en.send), len(en.recv)) {
			s, r := en.send[k], en.recv[k]
			if ev[r].Start < ev[s].End || ev[s].Worker == ev[r].Worker && r < s {
				dropped++
				continue
			}
			msgs = append(msgs, Message{s, r})
		}
	}
	slices.SortFunc(msgs, func(a, b Message) int {
		return cmp.Or(cmp.Compare(ev[a.Send].End, ev[b.Send].End), cmp.Compare(a.Send, b.Send))
	})
	return msgs, dropped
}
