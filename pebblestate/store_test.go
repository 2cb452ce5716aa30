package pebblestate

import (
	"fmt"
	"log/slog"
	"testing"
)

// The byte store against a map: writes, deletes, gets and an ordered
// scan, and a store that starts empty when opened again.
func TestStoreAgainstMap(t *testing.T) {
	b := backend{dir: t.TempDir()}
	s, err := b.Open("op-0-process-0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	err = s.Write(func(set func(k, v []byte), del func(k []byte)) {
		for i := range 100 {
			k, v := fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", i*i)
			set([]byte(k), []byte(v))
			want[k] = v
		}
		del([]byte("k007"))
		delete(want, "k007")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete([]byte("k050")); err != nil {
		t.Fatal(err)
	}
	delete(want, "k050")
	for _, k := range []string{"k001", "k007", "k050", "k099", "nope"} {
		var got string
		ok, err := s.Get([]byte(k), func(v []byte) { got = string(v) })
		if err != nil || ok != (want[k] != "") || got != want[k] {
			t.Errorf("Get(%s) = %q, %v, %v; want %q", k, got, ok, err, want[k])
		}
	}
	// Rewrite: every entry in order; odd ones deleted, even ones doubled.
	var prev string
	n := 0
	if err := s.Rewrite(func(k, v []byte) ([]byte, bool, bool) {
		if string(k) <= prev || want[string(k)] != string(v) {
			t.Errorf("rewrite: %s=%s after %s", k, v, prev)
		}
		prev = string(k)
		n++
		return append(append([]byte(nil), v...), v...), k[3]%2 == 0, false
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Errorf("rewrite saw %d entries, want %d", n, len(want))
	}
	for k, v := range want {
		var got string
		ok, _ := s.Get([]byte(k), func(b []byte) { got = string(b) })
		if even := k[3]%2 == 0; ok != even || even && got != v+v {
			t.Errorf("after rewrite %s = %q, %v", k, got, ok)
		}
	}
	s.Close()
	s, err = b.Open("op-0-process-0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Rewrite(func(k, v []byte) ([]byte, bool, bool) {
		t.Errorf("reopened store holds %s", k)
		return nil, false, true
	}); err != nil {
		t.Fatal(err)
	}
	if err := (backend{}).Validate(); err == nil {
		t.Error("an empty directory validates")
	}
}
