package kafka

import (
	"reflect"
	"strings"
	"testing"
)

// Positions and notes read back what was written, and refuse every
// truncation of it.
func TestPositionAndNoteRoundTrip(t *testing.T) {
	p := position{topic: "ad-events", inst: 1, par: 3, parts: []partPos{{1, 10, 0}, {4, 700, 900}}}
	b := p.encode()
	got, err := decodePosition(b)
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("decoded %+v, %v; want %+v", got, err, p)
	}
	for k := range len(b) {
		if _, err := decodePosition(b[:k]); err == nil {
			t.Errorf("%d of %d bytes decoded", k, len(b))
		}
	}
	if _, err := decodePosition(append(b, 0)); err == nil || !strings.Contains(err.Error(), "too many") {
		t.Errorf("a byte too many: %v", err)
	}
	txns := []sealedTxn{{n: 3, id: "weir-out-0", pid: 77, epoch: 5}, {n: 4, id: "weir-out-1", pid: 1 << 40, epoch: -1}}
	nb := appendNote(nil, txns)
	back, err := readNote(nb)
	if err != nil || !reflect.DeepEqual(back, txns) {
		t.Errorf("note read %+v, %v; want %+v", back, err, txns)
	}
	for k := range len(nb) {
		if _, err := readNote(nb[:k]); err == nil {
			t.Errorf("%d of %d note bytes read", k, len(nb))
		}
	}
	// Partitions move to their new owners; one listed twice is refused.
	a := position{topic: "t", inst: 0, par: 2, parts: []partPos{{0, 5, 0}, {2, 6, 0}}}.encode()
	c := position{topic: "t", inst: 1, par: 2, parts: []partPos{{1, 7, 0}, {3, 8, 0}}}.encode()
	parts, err := mergeSplits("t", [][]byte{a, c}, 1, 3)
	if err != nil || !reflect.DeepEqual(parts, []partPos{{1, 7, 0}}) {
		t.Errorf("instance 1 of 3 takes %+v, %v; want partition 1 at 7", parts, err)
	}
	if _, err := mergeSplits("t", [][]byte{a, a}, 0, 1); err == nil {
		t.Errorf("a position given twice was taken")
	}
}
