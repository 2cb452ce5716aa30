package wordcount

import (
	"reflect"
	"strings"
	"testing"
)

func TestAppendFieldsMatchesStringsFields(t *testing.T) {
	cases := []string{"", " ", "a", " a b  c ", "\tx\ny\r\nz", "héllo wörld", "a\u00a0b", "a\u2003b\u3000c", "\xffbad utf8\xfe x", "\u0085a\u0085"}
	for _, c := range cases {
		got := AppendFields(c, nil)
		want := strings.Fields(c)
		if len(got) == 0 && len(want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("AppendFields(%q) = %q; want %q", c, got, want)
		}
	}
}

func FuzzAppendFields(f *testing.F) {
	f.Add("a b c")
	f.Add("\u00a0x\ty")
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendFields(s, nil)
		want := strings.Fields(s)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("AppendFields(%q) = %q; want %q", s, got, want)
		}
	})
}
