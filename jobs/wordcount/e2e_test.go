package wordcount_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/jobs/wordcount"
)

// vocabulary returns n words: plain ASCII, non-ASCII letters, punctuation,
// characters that look like spaces but are not (U+200B, U+FEFF), and a
// word with invalid UTF-8.
func vocabulary(n int, r *rand.Rand) []string {
	special := []string{
		"the", "a", "of", "café", "naïve", "日本語", "Ωmega", "🙂", "a,b", `say"hi"`, "it's", "x=1",
		"zero\u200bwidth", "\ufeffbom", "bad\xffutf8", "-", "--", "ß", "İstanbul", "UPPER", "upper",
	}
	const letters = "abcdefghijklmnopqrstuvwxyzäöüéè"
	runes := []rune(letters)
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for _, w := range special {
		seen[w] = true
		out = append(out, w)
	}
	for len(out) < n {
		var b strings.Builder
		for range 1 + r.IntN(9) {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Separators between words: ASCII and Unicode white space, alone and in
// runs.
var separators = []string{
	" ", " ", " ", " ", "  ", "\t", " \t ", "\v", "\f", "\r",
	"\u00a0", "\u0085", "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u3000", " \u3000\t",
}

type textGen struct {
	r     *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newTextGen(seed uint64, words int) *textGen {
	r := rand.New(rand.NewPCG(seed, 77))
	v := vocabulary(words, r)
	return &textGen{r: r, vocab: v, zipf: rand.NewZipf(r, 1.15, 2, uint64(len(v)-1))}
}

func (g *textGen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *textGen) sep() string { return separators[g.r.IntN(len(separators))] }

// line returns a line of about n words, sometimes with white space at its
// ends.
func (g *textGen) line(b *strings.Builder, n int) {
	if g.r.IntN(5) == 0 {
		b.WriteString(g.sep())
	}
	for i := range n {
		if i > 0 {
			b.WriteString(g.sep())
		}
		b.WriteString(g.word())
	}
	if g.r.IntN(5) == 0 {
		b.WriteString(g.sep())
	}
}

// text returns lines of text ending in eol: mostly short lines, with empty
// lines, lines of white space only, and now and then a long line.
func (g *textGen) text(lines int, eol string, long int, finalEOL bool) string {
	var b strings.Builder
	for i := range lines {
		switch k := g.r.IntN(100); {
		case k < 6:
			// empty line
		case k < 9:
			b.WriteString(g.sep() + g.sep())
		case i%2000 == 1999 && long > 0:
			g.line(&b, long)
		default:
			g.line(&b, 1+g.r.IntN(14))
		}
		if i < lines-1 || finalEOL {
			b.WriteString(eol)
		}
	}
	return b.String()
}

// readLines reads the lines of files as plain lines, without "\n" and one
// "\r" before it.
func readLines(t *testing.T, paths []string) []string {
	t.Helper()
	var lines []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(f)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				l = strings.TrimSuffix(l, "\n")
				lines = append(lines, strings.TrimSuffix(l, "\r"))
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	return lines
}

// kv is a result without its window bounds.
type kv struct {
	word  string
	count int64
}

func pairs(rs []wordcount.Result) []kv {
	out := make([]kv, len(rs))
	for i, r := range rs {
		out[i] = kv{r.Key, r.Value}
	}
	return out
}

func runWordcount(t *testing.T, paths []string, opts ...weir.JobOption) ([]wordcount.Result, weir.Metrics) {
	t.Helper()
	job := weir.NewJob("wordcount", opts...)
	var mu sync.Mutex
	var got []wordcount.Result
	sink := weir.SinkFunc[wordcount.Result](func(b []wordcount.Result) error {
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
		return nil
	})
	weir.Sink(wordcount.Query(weir.Source(job, "lines", file.Lines(paths, file.Options{}))), sink, weir.Name("collect"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := job.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	wordcount.Sort(got)
	return got, job.Metrics()
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWordcountMatchesReference(t *testing.T) {
	lines, long := 40_000, 120_000
	if testing.Short() {
		lines, long = 12_000, 90_000
	}
	dir := t.TempDir()
	g := newTextGen(1, 5_000)
	files := []struct {
		name, text string
	}{
		{"lf.txt", g.text(lines, "\n", 0, true)},
		{"crlf.txt", g.text(lines/2, "\r\n", 0, false)},
		{"empty.txt", ""},
		{"blank.txt", "\n\r\n\n  \t\n"},
		// Lines longer than half the read buffer (1 MiB).
		{"long.txt", g.text(4_001, "\n", long, false)},
		{"mixed.txt", g.text(lines/4, "\n", 0, true) + g.text(lines/4, "\r\n", 0, true)},
		{"one-word.txt", "lonely"},
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		writeFile(t, p, f.text)
		paths = append(paths, p)
	}
	all := readLines(t, paths)
	want := wordcount.Reference(all)
	nonEmpty := 0
	longest := 0
	for _, l := range all {
		if l != "" {
			nonEmpty++
		}
		longest = max(longest, len(l))
	}
	if longest < 600_000 {
		t.Fatalf("longest line has %d bytes; want more than half a MiB", longest)
	}
	if len(want) < 1_000 {
		t.Fatalf("only %d distinct words", len(want))
	}

	for _, w := range []int{1, 2, 4, 8} {
		for _, epochs := range []struct {
			name string
			opts []weir.JobOption
		}{
			{"default", nil},
			{"records", []weir.JobOption{weir.EpochRecords(300), weir.BatchSize(64)}},
			{"interval", []weir.JobOption{weir.BatchInterval(2 * time.Millisecond), weir.KeyGroups(11)}},
		} {
			t.Run(fmt.Sprintf("workers=%d/epochs=%s", w, epochs.name), func(t *testing.T) {
				got, m := runWordcount(t, paths, append([]weir.JobOption{weir.Workers(w)}, epochs.opts...)...)
				gp, wp := pairs(got), pairs(want)
				if len(gp) != len(wp) {
					t.Errorf("%d distinct words, want %d", len(gp), len(wp))
				}
				for i := range min(len(gp), len(wp)) {
					if gp[i] != wp[i] {
						t.Fatalf("first difference at %d: got %q:%d, want %q:%d", i, gp[i].word, gp[i].count, wp[i].word, wp[i].count)
					}
				}
				for _, r := range got {
					if r.Start != math.MinInt64 || r.End != math.MaxInt64 {
						t.Fatalf("result %+v does not have the bounds of the global window", r)
					}
				}
				if m.Records != int64(nonEmpty) {
					t.Errorf("Metrics.Records = %d, want %d non-empty lines", m.Records, nonEmpty)
				}
			})
		}
	}
}

// TestWordcountNoInput runs the job over empty files only.
func TestWordcountNoInput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	writeFile(t, a, "")
	writeFile(t, b, "\n \n\t\r\n")
	for _, w := range []int{1, 4} {
		got, _ := runWordcount(t, []string{a, b}, weir.Workers(w))
		if len(got) != 0 {
			t.Errorf("workers %d: %d results over no words: %+v", w, len(got), got)
		}
	}
}

// TestReferenceCounts checks the reference itself on a small input.
func TestReferenceCounts(t *testing.T) {
	got := pairs(wordcount.Reference([]string{"b a\tb", "", "  ", "c\u00a0a b", "a"}))
	want := []kv{{"a", 3}, {"b", 3}, {"c", 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Reference = %v, want %v", got, want)
	}
}
