package file

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCSV(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  string
	}{
		{line: "a", want: []string{"a"}},
		{line: "a,b,c", want: []string{"a", "b", "c"}},
		{line: ",a,,", want: []string{"", "a", "", ""}},
		{line: ` a , b `, want: []string{" a ", " b "}},
		{line: `"a,b",c`, want: []string{"a,b", "c"}},
		{line: `"",x`, want: []string{"", "x"}},
		{line: `x,""`, want: []string{"x", ""}},
		{line: `"say ""hi""",2`, want: []string{`say "hi"`, "2"}},
		{line: `""""`, want: []string{`"`}},
		{line: `"a",`, want: []string{"a", ""}},
		{line: `"a`, err: "field 1: quoted field has no closing quote"},
		{line: `x,"a""`, err: "field 2: quoted field has no closing quote"},
		{line: `"a"b,c`, err: `field 1: unexpected 'b' after the closing quote`},
		{line: `a"b`, err: "field 1: quote in an unquoted field"},
		{line: `a,b"`, err: "field 2: quote in an unquoted field"},
	}
	for _, tt := range tests {
		got, err := splitCSV(tt.line, nil)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("splitCSV(%q) = %q, %v; want error %q", tt.line, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitCSV(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestSplitCSVAllocs(t *testing.T) {
	line := `1700000000123,"quoted, with comma",plain,,"",` + strings.Repeat("x", 40)
	dst := make([]string, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = splitCSV(line, dst[:0]); err != nil || len(dst) != 6 {
			t.Fatalf("splitCSV = %q, %v", dst, err)
		}
	})
	if allocs != 0 {
		t.Errorf("splitCSV allocates %v times", allocs)
	}
}

func BenchmarkSplitCSV(b *testing.B) {
	line := "0000002a-1f0a-4c5e-9a57-0d6e3c1b2a90,0000002a-1f0a-4c5e-9a57-0d6e3c1b2a90,0000002a-1f0a-4c5e-9a57-0d6e3c1b2a90,banner,view,1700000000042,10.0.0.1"
	dst := make([]string, 0, 8)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		dst, _ = splitCSV(line, dst[:0])
	}
}
