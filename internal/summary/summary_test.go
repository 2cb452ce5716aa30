package summary

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/transport"
)

func TestEncodeDecode(t *testing.T) {
	ms := []Message{
		{},
		{Process: 3, Seq: 9, Final: true, Stop: true, Stopped: true, Ending: true, StopAt: 50, PaceFrom: 120, PaceStride: 4, Complete: 42, Written: 45, Counts: Counts(map[string]int64{"records": 1 << 40, "late": -1, "dead_letters": 7}),
			Figures: []byte("WM\x01\x00figures"), Reconfigs: [][]byte{[]byte("WRRC\x01one"), []byte("two")}, Sizing: []byte("sizing")},
	}
	for _, m := range ms {
		got, err := Decode(Encode(nil, m))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Counts) == 0 {
			m.Counts = nil
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip: %+v, want %+v", got, m)
		}
	}
	good := Encode(nil, ms[1])
	for i := range good {
		if _, err := Decode(good[:i]); err == nil {
			t.Errorf("a message cut to %d bytes decoded", i)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, Message{Process: 1, Seq: 2, Counts: []Count{{"a", 1}, {"b", -2}}, Figures: []byte{1, 2, 3}, Reconfigs: [][]byte{{4, 5}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(Encode(nil, m))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, m)
		}
	})
}

func TestBoard(t *testing.T) {
	b := NewBoard(3)
	b.Post(Message{Process: 1, Seq: 2, Counts: []Count{{"records", 10}}})
	if b.Post(Message{Process: 1, Seq: 1, Counts: []Count{{"records", 5}}}) {
		t.Error("an older message replaced a newer one")
	}
	b.Post(Message{Process: 2, Seq: 1, Final: true, Complete: 4, Counts: []Count{{"records", 7}, {"late", 1}}})
	tot, missing := b.Totals(0, []Count{{"records", 100}})
	if tot["records"] != 117 || tot["late"] != 1 || !reflect.DeepEqual(missing, []int{1}) {
		t.Errorf("totals %v missing %v", tot, missing)
	}
	if b.Settled(0) {
		t.Error("settled without process 1's final message")
	}
	if got := b.Ended(0); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("Ended(0) = %v; want [2], the process whose final message came", got)
	}
	if got := b.Ended(2); got != nil {
		t.Errorf("Ended(2) = %v; want none but itself", got)
	}
	b.Gone(1)
	if !b.Settled(0) || b.Complete() != 4 || b.Stopping() {
		t.Error("board after process 1 went")
	}
	b.Taken(2)
	if got := b.Ended(0); got != nil {
		t.Errorf("Ended(0) = %v once slot 2 is taken again; want none", got)
	}
	b.Renew(2)
	b.Post(Message{Process: 2, Seq: 1, Final: true})
	if got := b.Ended(0); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("Ended(0) = %v once the new process of slot 2 ended; want [2]", got)
	}
}

// Three processes each count something; after Finish every one has the
// job's totals.
func TestExchangeTotals(t *testing.T) {
	nets := transport.NewLocal(3)
	var wg sync.WaitGroup
	xs := make([]*Exchange, 3)
	for i, nw := range nets {
		own := []Count{{"records", int64(100 * (i + 1))}}
		xs[i] = Start(nw, 7, 20*time.Millisecond, func() Message { return Message{Counts: own} }, nil)
	}
	for i := range xs {
		wg.Add(1)
		go func() { defer wg.Done(); xs[i].Finish(5 * time.Second) }()
	}
	wg.Wait()
	for i, x := range xs {
		tot, missing := x.Board().Totals(i, []Count{{"records", int64(100 * (i + 1))}})
		if tot["records"] != 600 || len(missing) > 0 {
			t.Errorf("process %d: totals %v, missing %v", i, tot, missing)
		}
	}
	for _, nw := range nets {
		nw.Close()
	}
}

// A decoded message's figures do not alias the bytes decoded, which the
// receiver hands back to the transport's pool.
func TestDecodeCopiesFigures(t *testing.T) {
	b := Encode(nil, Message{Process: 1, Seq: 1, Figures: []byte("figures"), Reconfigs: [][]byte{[]byte("reconfig")}})
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if string(m.Figures) != "figures" {
		t.Errorf("figures %q after the input was overwritten", m.Figures)
	}
	if len(m.Reconfigs) != 1 || string(m.Reconfigs[0]) != "reconfig" {
		t.Errorf("reconfigurations %q after the input was overwritten", m.Reconfigs)
	}
}

// The process of slot 1 sends its final message and leaves; a new one
// takes the slot again. Process 0 takes in its messages, numbered from 1
// again, and its totals count both processes of the slot.
func TestExchangeRejoin(t *testing.T) {
	slots := transport.NewLocalSlots(2)
	start := func(p int, n int64, absent []int) (*Exchange, transport.Elastic) {
		nw, err := slots.Join(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		own := []Count{{"records", n}}
		return StartAbsent(nw, 7, 10*time.Millisecond, absent, func() Message { return Message{Counts: own} }, nil), nw
	}
	x0, nw0 := start(0, 100, []int{1})
	defer nw0.Close()
	x0.Join(1)
	first, nw1 := start(1, 20, nil)
	first.Finish(50 * time.Millisecond) // sends its final message; process 0 sends none
	nw1.Close()
	for !x0.Board().Settled(0) {
		time.Sleep(time.Millisecond)
	}
	if tot, _ := x0.Board().Totals(0, nil); tot["records"] != 20 {
		t.Fatalf("before the rejoin: %v", tot)
	}
	ready := make(chan struct{})
	x0.Rejoin(1, ready)
	second, nw2 := start(1, 3, nil)
	defer nw2.Close()
	close(ready)
	second.Finish(50 * time.Millisecond)
	for !x0.Board().Settled(0) {
		time.Sleep(time.Millisecond)
	}
	tot, missing := x0.Board().Totals(0, []Count{{"records", 100}})
	if tot["records"] != 123 || len(missing) > 0 {
		t.Errorf("totals %v, missing %v; want 123 records (100, 20 of the first process of slot 1, 3 of the second)", tot, missing)
	}
	if tot, _ := second.Board().Totals(1, nil); tot["records"] != 100 {
		t.Errorf("the new process of slot 1 counts %v of process 0; want 100 records", tot)
	}
}
