package engine

import (
	"reflect"
	"testing"
	"time"
)

// A note survives the splits channel's encoding, and every truncation of
// it, or a byte too many, is refused without a panic.
func TestNoteEncoding(t *testing.T) {
	k := noteKey{source: "src", from: 1 << 40, share: 2}
	n := shareNote{shares: 3, pos: []byte{1, 2, 3}, wms: []opWatermark{{"time", -5}, {"t2", 1 << 50}}, ended: true}
	b := appendNote(nil, k, n)
	gk, gn, err := decodeNote(b)
	if err != nil || gk != k || !reflect.DeepEqual(gn, n) {
		t.Fatalf("decoded %v %+v %v; want %v %+v", gk, gn, err, k, n)
	}
	for i := range b {
		if _, _, err := decodeNote(b[:i]); err == nil {
			t.Errorf("a note cut to %d of %d bytes was taken", i, len(b))
		}
	}
	if _, _, err := decodeNote(append(b, 0)); err == nil {
		t.Error("a note with a byte too many was taken")
	}
	bad := appendNote(nil, noteKey{source: "src", share: 3}, shareNote{shares: 3})
	if _, _, err := decodeNote(bad); err == nil {
		t.Error("a note of share 3 of 3 was taken")
	}
}

// The mailbox hands the notes of a table's shares over once all have
// come, in share order; once every share of one table has ended, the
// source is done and a wait for another table's notes returns none; a
// wait ends with an error when the job stops.
func TestShareBox(t *testing.T) {
	b := newShareBox()
	got := make(chan []shareNote, 1)
	stop := make(chan struct{})
	go func() {
		ns, err := b.take("s", 5, 2, stop)
		if err != nil {
			t.Error(err)
		}
		got <- ns
	}()
	b.put(noteKey{"s", 5, 1}, shareNote{shares: 2, pos: []byte("one")})
	select {
	case ns := <-got:
		t.Fatalf("took %v with one note of two", ns)
	case <-time.After(10 * time.Millisecond):
	}
	b.put(noteKey{"s", 5, 0}, shareNote{shares: 2, pos: []byte("zero")})
	b.put(noteKey{"s", 5, 0}, shareNote{shares: 2, pos: []byte("again")}) // a repeat counts for nothing
	if ns := <-got; len(ns) != 2 || string(ns[0].pos) != "zero" || string(ns[1].pos) != "one" {
		t.Fatalf("took %+v; want zero then one", ns)
	}
	if b.isDone("s") {
		t.Fatal("done without an ended share")
	}
	b.put(noteKey{"s", 9, 0}, shareNote{shares: 1, ended: true})
	if !b.isDone("s") {
		t.Fatal("not done once the one share of a table ended")
	}
	if ns, err := b.take("s", 12, 3, stop); ns != nil || err != nil {
		t.Fatalf("a wait on a done source took %v, %v; want nothing", ns, err)
	}
	close(stop)
	if _, err := b.take("other", 1, 1, stop); err == nil {
		t.Fatal("a wait went on after the job stopped")
	}
}
