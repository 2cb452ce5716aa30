package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/checkpoint"
)

// capture is a transport.Sender that keeps what is sent.
type capture struct{ msgs [][]byte }

func (c *capture) Buffer() []byte { return nil }
func (c *capture) Send(p []byte) error {
	c.msgs = append(c.msgs, append([]byte(nil), p...))
	return nil
}

// A parcel shipped in pieces to another process arrives whole, blob by
// blob, with whether each is a delta and on which checkpoint, and only
// once its end has arrived; a message cut short or out of order is an
// error, not a panic.
func TestShipReceive(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), maxPiece/10*2+7) // three pieces
	blobs := []parcelBlob{
		{StateBlob: checkpoint.StateBlob{Operator: "window", KeyGroup: 3, Data: []byte("small")}},
		{StateBlob: checkpoint.StateBlob{Operator: "window", KeyGroup: 9, Data: big}, Base: 1 << 40, BaseCRC: 0xdeadbeef},
		{StateBlob: checkpoint.StateBlob{Operator: "process", KeyGroup: 3, Data: nil}, Base: 12},
	}
	k := parcelKey{task: "window", par: 4, epoch: 17, from: 1, to: 3}
	var c capture
	sent, err := ship(&c, k, blobs)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len("small") + len(big)); sent != want {
		t.Errorf("sent %d bytes; want %d", sent, want)
	}
	if len(c.msgs) != 1+3+1+1 {
		t.Errorf("%d messages; want 6 (one piece, three pieces, one empty piece, the end)", len(c.msgs))
	}
	po := newPostOffice()
	for i, m := range c.msgs {
		if i == len(c.msgs)-1 {
			if p := po.parcels[k]; p == nil || p.complete {
				t.Fatal("the parcel is complete before its end arrived")
			}
		}
		if err := po.receive(1, m); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	got, ok := po.take(k, nil)
	if !ok {
		t.Fatal("take: not delivered")
	}
	norm := func(bs []parcelBlob) map[blobID]string {
		m := map[blobID]string{}
		for _, b := range bs {
			m[blobID{b.Operator, b.KeyGroup}] = fmt.Sprintf("%s base %d crc %x", b.Data, b.Base, b.BaseCRC)
		}
		return m
	}
	if !reflect.DeepEqual(norm(got), norm(blobs)) {
		t.Errorf("received blobs differ from those shipped")
	}
	// No cut of any message panics; a cut end message is refused, and
	// so is a parcel whose piece was cut (its blob never completes).
	for i, m := range c.msgs {
		for n := 0; n < len(m) && n < 200; n++ {
			po := newPostOffice()
			err := po.receive(0, m[:n])
			if i == len(c.msgs)-1 && err == nil {
				t.Errorf("the end message cut to %d bytes was accepted", n)
			}
		}
	}
	po = newPostOffice()
	if err := po.receive(1, c.msgs[0][:len(c.msgs[0])-1]); err != nil {
		t.Fatal(err) // a shorter piece: the blob is not complete
	}
	if err := po.receive(1, append([]byte(nil), c.msgs[len(c.msgs)-1]...)); err == nil {
		t.Error("a parcel whose piece was cut short ended")
	}
	// An end that counts more blobs than arrived is refused.
	po = newPostOffice()
	if err := po.receive(0, c.msgs[len(c.msgs)-1]); err == nil {
		t.Error("an end without its pieces was accepted")
	}
	// A piece out of order is refused, and so is one of another base.
	po = newPostOffice()
	if err := po.receive(0, c.msgs[2]); err == nil {
		t.Error("the second piece of a blob was accepted first")
	}
	var other capture
	blobs[1].Base++
	if _, err := ship(&other, k, blobs); err != nil {
		t.Fatal(err)
	}
	po = newPostOffice()
	if err := po.receive(0, c.msgs[1]); err != nil {
		t.Fatal(err)
	}
	if err := po.receive(0, other.msgs[2]); err == nil {
		t.Error("the second piece of a blob on another base was accepted")
	}
}

// A taker waiting for a parcel from an instance that ended with its input
// before the parcel's epoch gets an empty one at once; once that
// instance starts again, a taker waits for its parcel as for any.
func TestPostOfficeEnded(t *testing.T) {
	po := newPostOffice()
	done := make(chan struct{})
	po.ended(instKey{"w", 4, 1}, 10)
	if blobs, ok := po.take(parcelKey{task: "w", par: 4, epoch: 12, from: 1, to: 3}, done); !ok || blobs != nil {
		t.Fatalf("take after the end: %v, %v; want an empty parcel", blobs, ok)
	}
	po.started(instKey{"w", 4, 1})
	k := parcelKey{task: "w", par: 4, epoch: 14, from: 1, to: 3}
	got := make(chan int, 1)
	go func() {
		blobs, _ := po.take(k, done)
		got <- len(blobs)
	}()
	select {
	case n := <-got:
		t.Fatalf("take returned %d blobs before the parcel came", n)
	case <-time.After(50 * time.Millisecond):
	}
	po.deliver(k, []parcelBlob{{StateBlob: checkpoint.StateBlob{Operator: "w", KeyGroup: 5, Data: []byte("x")}}})
	if n := <-got; n != 1 {
		t.Errorf("took %d blobs; want 1", n)
	}
	close(done)
}

// A taker that waits for a parcel of an instance in a process that then
// closes its end of the mesh in order gets an empty one; parcels that
// came before the close are taken whole, and a new process in the slot
// owes its parcels again.
func TestPostOfficePeerClosed(t *testing.T) {
	po := newPostOffice()
	po.proc = placement{procs: 2}.proc // instances 0, 1 on process 0; 2, 3 on process 1
	done := make(chan struct{})
	defer close(done)
	came := parcelKey{task: "w", par: 4, epoch: 9, from: 2, to: 0}
	po.deliver(came, []parcelBlob{{StateBlob: checkpoint.StateBlob{Operator: "w", KeyGroup: 1, Data: []byte("x")}}})
	owed := parcelKey{task: "w", par: 4, epoch: 12, from: 3, to: 1}
	got := make(chan []parcelBlob, 1)
	go func() {
		blobs, _ := po.take(owed, done)
		got <- blobs
	}()
	select {
	case b := <-got:
		t.Fatalf("take returned %v before process 1 closed", b)
	case <-time.After(50 * time.Millisecond):
	}
	po.peerClosed(1)
	select {
	case b := <-got:
		if b != nil {
			t.Errorf("took %v from a process that closed; want an empty parcel", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the take still waits after process 1 closed")
	}
	if b, ok := po.take(came, done); !ok || len(b) != 1 {
		t.Errorf("the parcel that came before the close: %v, %v; want its blob", b, ok)
	}
	if b, ok := po.take(parcelKey{task: "w", par: 4, epoch: 12, from: 1, to: 2}, closedNow()); ok {
		t.Errorf("a parcel of process 0, which did not close: %v, %v; want none yet", b, ok)
	}
	po.peerBack(1)
	if _, ok := po.take(parcelKey{task: "w", par: 4, epoch: 14, from: 3, to: 1}, closedNow()); ok {
		t.Error("a parcel of the slot's new process was taken as empty")
	}
}

// closedNow is a closed channel: take returns at once if nothing is
// there.
func closedNow() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
