package jobid

import (
	"reflect"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	a := Identity{{"job", "wc"}, {"source in", "a.txt (3 bytes), b.txt (4 bytes)"}, {"key-groups", "128"}}
	cases := []struct {
		name  string
		there Identity
		want  Diff
		diff  bool
	}{
		{"same", Identity{{"job", "wc"}, {"source in", "a.txt (3 bytes), b.txt (4 bytes)"}, {"key-groups", "128"}}, Diff{}, false},
		{"order of entries does not matter", Identity{{"key-groups", "128"}, {"job", "wc"}, {"source in", "a.txt (3 bytes), b.txt (4 bytes)"}}, Diff{}, false},
		{"value", Identity{{"job", "wc"}, {"source in", "b.txt (4 bytes), a.txt (3 bytes)"}, {"key-groups", "128"}},
			Diff{Name: "source in", Here: "a.txt (3 bytes), b.txt (4 bytes)", There: "b.txt (4 bytes), a.txt (3 bytes)"}, true},
		{"first in here's order", Identity{{"job", "ysb"}, {"source in", "x"}, {"key-groups", "128"}},
			Diff{Name: "job", Here: "wc", There: "ysb"}, true},
		{"missing there", Identity{{"job", "wc"}, {"source in", "a.txt (3 bytes), b.txt (4 bytes)"}},
			Diff{Name: "key-groups", Here: "128", Missing: "there"}, true},
		{"missing here", append(append(Identity{}, a...), Entry{"source more", "c"}),
			Diff{Name: "source more", There: "c", Missing: "here"}, true},
	}
	for _, c := range cases {
		d, diff := Compare(a, c.there)
		if diff != c.diff || d != c.want {
			t.Errorf("%s: Compare = %+v, %v; want %+v, %v", c.name, d, diff, c.want, c.diff)
		}
	}
}

func TestDiffString(t *testing.T) {
	d := Diff{Name: "source in", Here: "a", There: "b"}
	if got, want := d.String(), `source in is "a" here, "b" there`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	long := strings.Repeat("x", 1000)
	if s := Short(long); len(s) > 200 || !strings.Contains(s, "bytes") {
		t.Errorf("Short of 1000 bytes = %q", s)
	}
}

func TestEncodeDecode(t *testing.T) {
	ids := []Identity{
		nil,
		{{"job", "wc"}},
		{{"a \"quoted\" name", "line\nbreaks\tand \x00 bytes \xff"}, {"", ""}, {"ünï", "códe"}},
	}
	for _, id := range ids {
		got, err := Decode(Encode(id))
		if err != nil {
			t.Fatalf("Decode(Encode(%q)): %v", id, err)
		}
		if len(id) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, id) {
			t.Errorf("round trip: got %q, want %q", got, id)
		}
	}
	for _, bad := range []string{"", "nonsense\n", header + "\nname \"v\"\n", header + "\n\"n\"\"v\"\n", header + "\n\"n\" \"v\" x\n"} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(Identity{{"job", "wc"}, {"source in", "a.txt (3 bytes)"}}))
	f.Add([]byte(header + "\n\"a\" \"b\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(Encode(id))
		if err != nil || len(again) != len(id) {
			t.Fatalf("re-decode: %v, %d entries, want %d", err, len(again), len(id))
		}
		for i := range id {
			if again[i] != id[i] {
				t.Fatalf("entry %d: %q, want %q", i, again[i], id[i])
			}
		}
	})
}
