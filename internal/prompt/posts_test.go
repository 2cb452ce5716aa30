package prompt

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/exchange"
)

// A post's partials are cut into messages of at most maxPost bytes, which
// decode to the same partials in order.
func TestPostsHalveLargeMessages(t *testing.T) {
	w, err := exchange.NewKeyedWire[string, string, int64](true)
	if err != nil {
		t.Fatal(err)
	}
	var recs []exchange.Partial[string, int64]
	for i := range postBatch {
		recs = append(recs, exchange.Partial[string, int64]{H: uint64(i), K: strings.Repeat("k", 4096) + string(rune('a'+i%26)), Acc: int64(i)})
	}
	msgs, err := encodeHalving(w, recs, func(r []exchange.Partial[string, int64]) any { return &exchange.Pbatch[string, int64]{Recs: r} }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 {
		t.Fatalf("%d messages for %d partials of 4 KiB keys; want them cut", len(msgs), len(recs))
	}
	i := 0
	for _, m := range msgs {
		if len(m) > maxPost {
			t.Errorf("a message of %d bytes; want at most %d", len(m), maxPost)
		}
		b, err := w.Decode(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.(*exchange.Pbatch[string, int64]).Recs {
			if p != recs[i] {
				t.Fatalf("partial %d decoded as %v", i, p.H)
			}
			i++
		}
	}
	if i != len(recs) {
		t.Errorf("%d partials decoded; want %d", i, len(recs))
	}
}
