package transport

import (
	"reflect"
	"strings"
	"testing"
)

func TestSettingsRoundTrip(t *testing.T) {
	long := strings.Repeat("v", MaxSettingsSize-2-4-1)
	for _, s := range [][]Setting{
		{},
		{{"--workers", "2"}},
		{{"binary", "ab12"}, {"empty", ""}, {"ünï", "\x00\xff"}},
		{{"x", long}},
	} {
		body := settingsBody(s)
		if len(body) != settingsSize(s) {
			t.Errorf("settingsBody(%.40v) is %d bytes; settingsSize says %d", s, len(body), settingsSize(s))
		}
		got, err := decodeSettings(body)
		if err != nil || !reflect.DeepEqual(got, s) {
			t.Errorf("decodeSettings(settingsBody(%.40v)) = %.40v, %v", s, got, err)
		}
	}
}

func TestDecodeSettingsErrors(t *testing.T) {
	good := settingsBody([]Setting{{"a", "1"}, {"bb", "22"}})
	tests := []struct {
		in   []byte
		want string
	}{
		{nil, "settings of 0 bytes are too short"},
		{[]byte{0}, "settings of 1 bytes are too short"},
		{[]byte{0, 1}, "settings end within setting 0 of 1"},
		{[]byte{0, 1, 0, 1, 'a', 0}, "settings end within setting 0 of 1"},
		{good[:len(good)-1], "settings end within setting 1 of 2"},
		{append(good, 0), "1 bytes after the 2 settings"},
		{[]byte{0xff, 0xff}, "settings end within setting 0 of 65535"},
	}
	for _, tt := range tests {
		if _, err := decodeSettings(tt.in); err == nil || err.Error() != tt.want {
			t.Errorf("decodeSettings(%q) = %v; want %v", tt.in, err, tt.want)
		}
	}
}

func TestCheckSettings(t *testing.T) {
	tests := []struct {
		s    []Setting
		want string
	}{
		{nil, ""},
		{[]Setting{{"a", "1"}, {"b", "1"}}, ""},
		{[]Setting{{"x", strings.Repeat("v", MaxSettingsSize-2-4-1)}}, ""},
		{[]Setting{{"x", strings.Repeat("v", MaxSettingsSize-2-4)}}, "settings of 65536 bytes encoded exceed 65535"},
		{[]Setting{{"a", "1"}, {"", "1"}}, "setting 1 has no name"},
		{[]Setting{{"a", "1"}, {"a", "2"}}, `setting "a" given twice`},
	}
	for _, tt := range tests {
		err := checkSettings(tt.s)
		if got := fmtErr(err); got != tt.want {
			t.Errorf("checkSettings(%.40v) = %q; want %q", tt.s, got, tt.want)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Differences are worded from either side; long values are cut around
// where they differ, plain values shown as they are and others quoted.
func TestDifferenceSides(t *testing.T) {
	files := func(order ...string) string {
		var b strings.Builder
		for _, f := range order {
			b.WriteString("/data/input/" + f + ".jsonl:1048576,")
		}
		return b.String()
	}
	a, b := files("a", "b", "c", "d", "e"), files("a", "b", "d", "c", "e")
	tests := []struct {
		d           difference
		here, there string
	}{
		{difference{Name: "--workers", A: "2", B: "3", InA: true, InB: true}, "2", "3"},
		{difference{Name: "x", A: "", B: "a b", InA: true, InB: true}, `""`, "a b"},
		{difference{Name: "x", A: "tab\there", B: `q"`, InA: true, InB: true}, `"tab\there"`, `"q\""`},
		{difference{Name: "x", B: "10", InB: true}, "not set", "10"},
		{difference{Name: "x", A: "10", InA: true}, "10", "not set"},
		// Entries of 28 bytes: the lists share 2 entries and the 12
		// bytes of the directory, and are shown from 16 bytes before
		// they differ, for 64 bytes.
		{difference{Name: "--input", A: a, B: b, InA: true, InB: true},
			"…576,/data/input/c.jsonl:1048576,/data/input/d.jsonl:1048576,/dat… (140 bytes)",
			"…576,/data/input/d.jsonl:1048576,/data/input/c.jsonl:1048576,/dat… (140 bytes)"},
		// Cut at 64 bytes, 32 two-byte runes.
		{difference{Name: "x", A: strings.Repeat("é", 40), B: "short", InA: true, InB: true},
			strings.Repeat("é", 32) + "… (80 bytes)", "short"},
		// A hex SHA-256 is shown whole.
		{difference{Name: "binary", A: strings.Repeat("ab", 32), B: strings.Repeat("cd", 32), InA: true, InB: true},
			strings.Repeat("ab", 32), strings.Repeat("cd", 32)},
	}
	for _, tt := range tests {
		here, there := tt.d.sides(true)
		if here != tt.here || there != tt.there {
			t.Errorf("sides(%+.60v) = %q, %q; want %q, %q", tt.d, here, there, tt.here, tt.there)
		}
		there, here = tt.d.sides(false)
		if here != tt.here || there != tt.there {
			t.Errorf("sides(%+.60v) from the other side = %q, %q; want %q, %q", tt.d, there, here, tt.there, tt.here)
		}
	}
}
