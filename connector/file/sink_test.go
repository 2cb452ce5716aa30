package file

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir"
)

type point struct {
	Name string `json:"name"`
	X    int    `json:"x"`
}

func pointRow(p point, dst []string) []string { return append(dst, p.Name, strconv.Itoa(p.X)) }

func TestCSVWriter(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		in     []point
		want   string
	}{
		{"header", []string{"name", "x"}, []point{{"a", 1}, {"b", 2}}, "name,x\na,1\nb,2\n"},
		{"no header", nil, []point{{"a", 1}}, "a,1\n"},
		{"header only", []string{"name", "x"}, nil, "name,x\n"},
		{"quoting", nil, []point{{`a,b`, 1}, {`say "hi"`, 2}, {"two\nlines", 3}, {"", 4}}, "\"a,b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\n,4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := CSVWriter(&buf, tt.header, pointRow)
			if err := s.Write(tt.in); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("wrote %q, want %q", buf.String(), tt.want)
			}
			// encoding/csv reads back what was written.
			recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.header) > 0 {
				recs = recs[1:]
			}
			for i, r := range recs {
				if want := pointRow(tt.in[i], nil); !slices.Equal(r, want) {
					t.Errorf("record %d reads back as %q, want %q", i, r, want)
				}
			}
		})
	}
}

func TestJSONLinesWriter(t *testing.T) {
	var buf bytes.Buffer
	s := JSONLinesWriter[point](&buf)
	if err := s.Write([]point{{"a<b", 1}, {"c", 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "{\"name\":\"a<b\",\"x\":1}\n{\"name\":\"c\",\"x\":2}\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}

func TestSinkFlushesAtEpochEnd(t *testing.T) {
	var buf bytes.Buffer
	s := CSVWriter(&buf, []string{"name", "x"}, pointRow)
	if err := s.Write([]point{{"a", 1}}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q before the end of the epoch", buf.String())
	}
	if err := s.(weir.EpochSink).EndEpoch(1); err != nil {
		t.Fatal(err)
	}
	if want := "name,x\na,1\n"; buf.String() != want {
		t.Errorf("after EndEpoch: %q, want %q", buf.String(), want)
	}
}

func TestSinkConcurrentWrites(t *testing.T) {
	var buf bytes.Buffer
	s := CSVWriter(&buf, nil, pointRow)
	const writers, batches = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				batch := []point{{fmt.Sprint(w), b}, {fmt.Sprint(w), b}}
				if err := s.Write(batch); err != nil {
					t.Error(err)
				}
				if b%50 == 0 {
					if err := s.(weir.EpochSink).EndEpoch(uint64(b)); err != nil {
						t.Error(err)
					}
				}
			}
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != writers*batches*2 {
		t.Fatalf("wrote %d lines, want %d", len(lines), writers*batches*2)
	}
	// A batch is written whole.
	for i := 0; i < len(lines); i += 2 {
		if lines[i] != lines[i+1] {
			t.Fatalf("lines %d and %d of one batch are %q and %q", i, i+1, lines[i], lines[i+1])
		}
	}
}

func TestSinkWriteError(t *testing.T) {
	s := JSONLinesWriter[point](failWriter{})
	if err := s.Write([]point{{"a", 1}}); err != nil {
		t.Fatalf("buffered Write failed: %v", err)
	}
	err := s.Close()
	if err == nil || err.Error() != "file: disk full" {
		t.Fatalf("Close = %v, want file: disk full", err)
	}
	if err := s.Write([]point{{"a", 1}}); err == nil {
		t.Error("Write after a failed flush succeeded")
	}
}
