package progress

import "testing"

// A sender absent from the start holds nothing back; once it joins at
// epoch 5 the aligner waits for its marker that ends 5, and its watermark
// counts only from its first marker.
func TestAlignerAbsentSenderJoins(t *testing.T) {
	a := NewAligner(2)
	a.Absent(1)
	if out, ok := a.Mark(0, Marker{Epoch: 2, Watermark: 20}); !ok || out.Epoch != 2 || out.Watermark != 20 || out.Final {
		t.Fatalf("with sender 1 absent: %+v %v, want epoch 2 watermark 20", out, ok)
	}
	if !a.Join(1, 5) {
		t.Fatal("join at 5 refused at epoch 3")
	}
	if a.Join(1, 6) {
		t.Fatal("a second join of a sender taken back")
	}
	if out, ok := a.Mark(0, Marker{Epoch: 4, Watermark: 40}); !ok || out.Epoch != 4 || out.Watermark != 40 {
		t.Fatalf("before the join epoch: %+v %v, want epoch 4 watermark 40 (sender 1 idle)", out, ok)
	}
	if out, ok := a.Mark(0, Marker{Epoch: 5, Watermark: 50}); ok {
		t.Fatalf("epoch 5 aligned without the joined sender: %+v", out)
	}
	out, ok := a.Mark(1, Marker{Epoch: 5, Watermark: 45})
	if !ok || out.Epoch != 5 || out.Watermark != 45 {
		t.Fatalf("joined sender's first marker: %+v %v, want epoch 5 watermark 45", out, ok)
	}
	a.Mark(0, Marker{Epoch: 6, Final: true})
	if out, ok := a.Mark(1, Marker{Epoch: 6, Final: true}); !ok || !out.Final {
		t.Fatalf("both final: %+v %v", out, ok)
	}
}

// A join for an epoch the aligner has begun already is refused.
func TestAlignerLateJoin(t *testing.T) {
	a := NewAligner(2)
	a.Absent(1)
	a.Mark(0, Marker{Epoch: 7})
	if a.Join(1, 7) {
		t.Fatal("join at epoch 7 accepted after epoch 7 was aligned")
	}
	if !a.Join(1, 8) {
		t.Fatal("join at epoch 8, the current one, refused")
	}
}
