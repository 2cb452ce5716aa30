package transport

import (
	"errors"
	"io"
	"testing"
)

// RecvFirst returns the payload of whichever process sends first, and
// who sent it; once every sender has closed without one, the error.
func TestRecvFirst(t *testing.T) {
	nets := NewLocal(3)
	s := nets[1].Sender(9, 2)
	if err := s.Send(append(s.Buffer(), "from one"...)); err != nil {
		t.Fatal(err)
	}
	b, from, err := RecvFirst(nets[2], 9, []int{0, 1})
	if err != nil || from != 1 || string(b) != "from one" {
		t.Fatalf("RecvFirst = %q, %d, %v; want process 1's payload", b, from, err)
	}

	nets = NewLocal(3)
	for _, nw := range nets[:2] {
		if err := nw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := RecvFirst(nets[2], 9, []int{0, 1}); !errors.Is(err, io.EOF) {
		t.Errorf("RecvFirst from processes that closed = %v; want io.EOF", err)
	}
	if _, _, err := RecvFirst(nets[2], 9, nil); err == nil {
		t.Error("RecvFirst from no process did not fail")
	}
}
