package exchange

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/partition"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// keysTask records which keys reach one receiving instance.
type keysTask struct {
	mu   *sync.Mutex
	inst int
	got  map[string]int
}

func (k keysTask) Batch(port int, b any) error {
	kb := b.(*dataflow.Kbatch[string, string])
	k.mu.Lock()
	for _, r := range kb.Recs {
		k.got[r.K] = k.inst
	}
	k.mu.Unlock()
	kb.Release()
	return nil
}

func (keysTask) Mark(progress.Marker) error { return nil }

// A keyed exchange sends every record to the instance its routing table
// names for the record's key group, whatever the assignment: ownership
// is the table's data, not a formula at the exchange.
func TestKeyExRoutesByTable(t *testing.T) {
	const groups, receivers = 16, 3
	owner := make([]int, groups)
	for kg := range owner {
		owner[kg] = (kg * 7 / 3) % receivers // neither contiguous nor round-robin
	}
	tab, err := partition.NewTable(0, receivers, owner)
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(runtime.Config{})
	var mu sync.Mutex
	got := map[string]int{}
	var outlets []runtime.Outlet
	for i := range receivers {
		in := rt.NewInbox("window", i, 16)
		outlets = append(outlets, in.Sender(0))
		rt.AddTask("window", i, in, keysTask{&mu, i, got}, true)
	}
	ex := NewKeyEx[string, string](func(s string) string { return s }, tab, outlets, 8, false)
	done := make(chan error, 1)
	go func() { done <- rt.Run(context.Background()) }()
	var b dataflow.Batch[string]
	for i := range 500 {
		b.V = append(b.V, fmt.Sprintf("key-%d", i))
	}
	if err := ex.Push(&b); err != nil {
		t.Fatal(err)
	}
	if err := ex.Mark(progress.Marker{Watermark: progress.MaxWatermark, Final: true}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hash, _ := partition.Hasher[string]()
	if len(got) != len(b.V) {
		t.Fatalf("%d keys arrived; want %d", len(got), len(b.V))
	}
	for k, inst := range got {
		if want := owner[partition.KeyGroupOf(hash(k), groups)]; inst != want {
			t.Fatalf("key %q reached instance %d; the table gives it to %d", k, inst, want)
		}
	}
}
