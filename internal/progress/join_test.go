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

// A live sender told to take part again from epoch 6 after its final
// marker (its process leaves, and a new one takes the slot again before
// the receiver took that marker): its final marker ends epoch 2 without
// ending the aligner, epochs 3 to 5 align without it, and 6 waits for it.
func TestAlignerJoinAfterFinal(t *testing.T) {
	a := NewAligner(2)
	if !a.JoinAfter(1, 6) {
		t.Fatal("JoinAfter(1, 6) refused at epoch 0")
	}
	if a.JoinAfter(0, 0) {
		t.Fatal("JoinAfter for the current epoch taken")
	}
	a.Mark(0, Marker{Epoch: 2, Watermark: 20})
	out, ok := a.Mark(1, Marker{Epoch: 2, Watermark: 15, Final: true})
	if !ok || out.Epoch != 2 || out.Final || out.Watermark != 20 {
		t.Fatalf("the final marker of the sender that comes back: %+v %v, want epoch 2, not final, watermark 20 (its own counts no more, as a final one's)", out, ok)
	}
	if out, ok := a.Mark(0, Marker{Epoch: 5, Watermark: 50}); !ok || out.Epoch != 5 || out.Watermark != 50 {
		t.Fatalf("before its new join epoch: %+v %v, want epoch 5 watermark 50 (sender 1 idle)", out, ok)
	}
	if out, ok := a.Mark(0, Marker{Epoch: 6, Watermark: 60}); ok {
		t.Fatalf("epoch 6 aligned without the sender that came back: %+v", out)
	}
	if out, ok := a.Mark(1, Marker{Epoch: 6, Watermark: 55}); !ok || out.Epoch != 6 || out.Watermark != 55 {
		t.Fatalf("its first marker after it came back: %+v %v, want epoch 6 watermark 55", out, ok)
	}
}
