package runtime

import (
	"testing"

	"github.com/weirstream/weir/internal/progress"
)

// The watermark an epoch is reported with leaves idle terminals out, as
// receivers leave idle senders out, and is the highest of the idle ones
// when all are idle; it never goes back.
func TestTrackerIdle(t *testing.T) {
	var got []EpochStats
	tr := &tracker{onEpoch: func(s EpochStats) { got = append(got, s) }}
	a, b := tr.add(), tr.add()
	tr.complete(a, progress.Marker{Epoch: 0, Watermark: 50})
	tr.complete(b, progress.Marker{Epoch: 0, Watermark: 10, Idle: true})
	tr.complete(a, progress.Marker{Epoch: 1, Watermark: 60, Idle: true})
	tr.complete(b, progress.Marker{Epoch: 1, Watermark: 20, Idle: true})
	tr.complete(a, progress.Marker{Epoch: 2, Watermark: 70})
	tr.complete(b, progress.Marker{Epoch: 2, Watermark: 30})
	tr.complete(a, progress.Marker{Epoch: 3, Watermark: 80})
	tr.complete(b, progress.Marker{Epoch: 3, Watermark: 65})
	want := []progress.Watermark{50, 60, 60, 65}
	if len(got) != len(want) {
		t.Fatalf("%d epochs reported; want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Watermark != w {
			t.Errorf("epoch %d reported with watermark %d; want %d", i, got[i].Watermark, w)
		}
	}
}

// A terminal that leaves (it waits to take part again) holds back no
// epoch; one that joins again at an epoch the others have passed catches
// up without any epoch being reported twice or out of order.
func TestTrackerLeaveJoin(t *testing.T) {
	var got []progress.Epoch
	tr := &tracker{onEpoch: func(s EpochStats) { got = append(got, s.Epoch) }}
	a, b := tr.add(), tr.add()
	tr.leave(b)
	for e := range progress.Epoch(4) {
		tr.complete(a, progress.Marker{Epoch: e})
	}
	tr.join(b, 2) // late: epochs 2 and 3 were reported without it
	tr.complete(b, progress.Marker{Epoch: 2})
	tr.complete(b, progress.Marker{Epoch: 3})
	tr.complete(a, progress.Marker{Epoch: 4})
	tr.complete(b, progress.Marker{Epoch: 4})
	want := []progress.Epoch{0, 1, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("reported epochs %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reported epochs %v; want %v", got, want)
		}
	}
}
