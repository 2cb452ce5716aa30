package state

import (
	"strings"
	"testing"
	"unsafe"
)

// A long table stores a copy of a string key, not the substring of the
// buffer it came in; other key types are stored as they are.
func TestLongTableClonesStrings(t *testing.T) {
	buf := strings.Repeat("x", 1<<20) + "key"
	k := buf[1<<20:]
	tab := NewLongTable[string, int]()
	*tab.Upsert(7, k) = 1
	tab.Range(func(_ uint64, stored string, _ *int) bool {
		if stored != k {
			t.Errorf("stored %q; want %q", stored, k)
		}
		if unsafe.StringData(stored) == unsafe.StringData(k) {
			t.Error("the stored key shares the input buffer's bytes")
		}
		return true
	})
	if tab.Get(7, "key") == nil {
		t.Error("the key is not found by its content")
	}
	if NewLongTable[int, int]().clone != nil {
		t.Error("an int-keyed table clones its keys")
	}
}
