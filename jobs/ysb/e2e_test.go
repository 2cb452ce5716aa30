package ysb_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/file"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/jobs/ysb"
)

// windowBase is the event time of the first generated event: not on a
// window boundary, so that the first and last windows are partial.
const windowBase = gen.YSBEventsStart + 3_217

var workerCounts = []int{1, 2, 4, 8}

// spreadEvents generates n events of seed whose event times rise evenly
// from windowBase over span milliseconds, so that they fill several 10 s
// windows. It returns the events with the campaign map.
func spreadEvents(n int, seed uint64, span int64) ([]gen.YSBEvent, ysb.Campaigns) {
	evs, ads := gen.YSBEvents(n, seed)
	for i := range evs {
		evs[i].EventTime = windowBase + int64(i)*span/int64(n)
	}
	return evs, ysb.FromAds(ads)
}

func eventCount(t *testing.T) int {
	if testing.Short() {
		return 60_000
	}
	return 250_000
}

// writeEvents writes events as JSON lines.
func writeEvents(t *testing.T, path string, evs []gen.YSBEvent) {
	t.Helper()
	writeEventsEOL(t, path, evs, "\n")
}

// writeEventsEOL writes events as JSON lines ending in eol.
func writeEventsEOL(t *testing.T, path string, evs []gen.YSBEvent, eol string) {
	t.Helper()
	var buf []byte
	for i := range evs {
		buf = evs[i].AppendJSON(buf)
		buf = append(buf, eol...)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCampaigns writes the campaign map as an "ad_id,campaign_id" CSV and
// returns its path.
func writeCampaigns(t *testing.T, dir string, c ysb.Campaigns) string {
	t.Helper()
	ads := make([]string, 0, len(c))
	for ad := range c {
		ads = append(ads, ad)
	}
	sort.Strings(ads)
	var b strings.Builder
	b.WriteString("ad_id,campaign_id\n")
	for _, ad := range ads {
		fmt.Fprintf(&b, "%s,%s\n", ad, c[ad])
	}
	path := filepath.Join(dir, "campaigns.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadCampaigns writes c to a CSV file and reads it back, checking that
// the round trip keeps it.
func loadCampaigns(t *testing.T, dir string, c ysb.Campaigns) ysb.Campaigns {
	t.Helper()
	got, err := ysb.LoadCampaigns(writeCampaigns(t, dir, c))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(c) {
		t.Fatalf("LoadCampaigns: %d ads, want %d", len(got), len(c))
	}
	for ad, camp := range c {
		if got[ad] != camp {
			t.Fatalf("LoadCampaigns: ad %s -> %q, want %q", ad, got[ad], camp)
		}
	}
	return got
}

// disorder returns the events in order of arrival, where each event
// arrives a random delay of at most maxDelay ms after its event time.
func disorder(evs []gen.YSBEvent, maxDelay int64, seed uint64) []gen.YSBEvent {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	type arrival struct {
		at int64
		i  int
	}
	arr := make([]arrival, len(evs))
	for i := range evs {
		arr[i] = arrival{evs[i].EventTime + r.Int64N(maxDelay+1), i}
	}
	slices.SortStableFunc(arr, func(a, b arrival) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	out := make([]gen.YSBEvent, len(evs))
	for k, a := range arr {
		out[k] = evs[a.i]
	}
	return out
}

func checkResults(t *testing.T, what string, got, want []ysb.Result) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%s: %d results, want %d", what, len(got), len(want))
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w ysb.Result
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: first difference at %d: got %+v, want %+v", what, i, g, w)
			return
		}
	}
}

func baselineResults(c ysb.Campaigns, evs []gen.YSBEvent) []ysb.Result {
	b := ysb.NewBaseline(c)
	b.Run(evs)
	return b.Results()
}

func windowsOf(rs []ysb.Result) int {
	starts := map[int64]bool{}
	for _, r := range rs {
		starts[r.Start] = true
	}
	return len(starts)
}

func runFile(t *testing.T, cfg ysb.FileConfig) ysb.FileRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := ysb.RunFile(ctx, cfg)
	if err != nil {
		t.Fatalf("RunFile (workers %d): %v", cfg.Workers, err)
	}
	return run
}

func TestRunFileMatchesReference(t *testing.T) {
	n := eventCount(t)
	dir := t.TempDir()
	evs, c := spreadEvents(n, 7, 47_000)
	camp := loadCampaigns(t, dir, c)
	want := ysb.Reference(evs, camp)
	if w := windowsOf(want); w < 5 {
		t.Fatalf("the events fill %d windows; want several", w)
	}
	var total int64
	for _, r := range want {
		total += r.Value
	}
	if total < int64(n)/4 {
		t.Fatalf("reference counts %d views of %d events", total, n)
	}
	if got := baselineResults(camp, evs); !slices.Equal(got, want) {
		t.Fatal("baseline loop disagrees with the reference")
	}

	sortedPath := filepath.Join(dir, "sorted.jsonl")
	writeEvents(t, sortedPath, evs)
	shuffled := disorder(evs, 4_000, 11)
	if slices.Equal(shuffled, evs) {
		t.Fatal("disorder did not reorder the events")
	}
	shuffledPath := filepath.Join(dir, "shuffled.jsonl")
	writeEvents(t, shuffledPath, shuffled)
	if got := ysb.Reference(shuffled, camp); !slices.Equal(got, want) {
		t.Fatal("reference depends on the order of the events")
	}
	if got := baselineResults(camp, shuffled); !slices.Equal(got, want) {
		t.Fatal("baseline loop over disordered events disagrees with the reference")
	}

	for _, w := range workerCounts {
		t.Run(fmt.Sprintf("sorted/workers=%d", w), func(t *testing.T) {
			run := runFile(t, ysb.FileConfig{Events: []string{sortedPath}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second})
			checkResults(t, "sorted input", run.Results, want)
			if run.Metrics.Records != int64(n) {
				t.Errorf("Metrics.Records = %d, want %d", run.Metrics.Records, n)
			}
			if run.Metrics.Late != 0 {
				t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
			}
			if run.DeadLetters != 0 {
				t.Errorf("DeadLetters = %d without a dead-letter output", run.DeadLetters)
			}
		})
		t.Run(fmt.Sprintf("shuffled/workers=%d", w), func(t *testing.T) {
			run := runFile(t, ysb.FileConfig{Events: []string{shuffledPath}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second})
			checkResults(t, "input with bounded disorder", run.Results, want)
			if run.Metrics.Late != 0 {
				t.Errorf("Metrics.Late = %d, want 0 (disorder ≤ 4 s, MaxDelay 5 s)", run.Metrics.Late)
			}
		})
		t.Run(fmt.Sprintf("shuffled/interval=1ms/workers=%d", w), func(t *testing.T) {
			run := runFile(t, ysb.FileConfig{
				Events: []string{shuffledPath}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second,
				Options: []weir.JobOption{weir.BatchInterval(time.Millisecond), weir.BatchSize(97)},
			})
			checkResults(t, "time-based epochs of 1ms", run.Results, want)
			t.Logf("%d epochs", run.Metrics.Epochs)
			if run.Metrics.Epochs < 2 {
				t.Errorf("Metrics.Epochs = %d; want several", run.Metrics.Epochs)
			}
			if run.Metrics.Late != 0 {
				t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
			}
		})
		for _, strategy := range []string{"hash", "pkg", "prompt"} {
			t.Run(fmt.Sprintf("shuffled/%s/interval=2ms/workers=%d", strategy, w), func(t *testing.T) {
				run := runFile(t, ysb.FileConfig{
					Events: []string{shuffledPath}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second,
					Options: []weir.JobOption{weir.BatchInterval(2 * time.Millisecond), weir.Partitioning(strategy)},
				})
				checkResults(t, strategy+" partitioning", run.Results, want)
				if run.Metrics.Late != 0 {
					t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
				}
			})
		}
		t.Run(fmt.Sprintf("shuffled/epoch-records/workers=%d", w), func(t *testing.T) {
			per := 1_009
			run := runFile(t, ysb.FileConfig{
				Events: []string{shuffledPath}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second,
				Options: []weir.JobOption{weir.EpochRecords(per), weir.KeyGroups(11)},
			})
			checkResults(t, "record-based epochs", run.Results, want)
			t.Logf("%d epochs", run.Metrics.Epochs)
			// Sources cut epochs between the batches they read, so an
			// epoch may hold a batch more than per records.
			if min := int64(n / (2 * per * w)); run.Metrics.Epochs < min {
				t.Errorf("Metrics.Epochs = %d; want at least %d", run.Metrics.Epochs, min)
			}
			if run.Metrics.Late != 0 {
				t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
			}
		})
	}
}

// TestRunFileSeveralFiles splits the events over files of different sizes,
// one of them empty and one with CRLF line endings, which the readers share
// by bytes.
func TestRunFileSeveralFiles(t *testing.T) {
	n := eventCount(t) / 3
	dir := t.TempDir()
	evs, camp := spreadEvents(n, 3, 31_000)
	evs = disorder(evs, 4_000, 5)
	want := ysb.Reference(evs, camp)
	cuts := []int{0, n / 10, n / 10, n / 2, n}
	var paths []string
	for i := 0; i+1 < len(cuts); i++ {
		p := filepath.Join(dir, fmt.Sprintf("part%d.jsonl", i))
		eol := "\n"
		if i == 2 {
			eol = "\r\n"
		}
		writeEventsEOL(t, p, evs[cuts[i]:cuts[i+1]], eol)
		paths = append(paths, p)
	}
	for _, w := range workerCounts {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			run := runFile(t, ysb.FileConfig{Events: paths, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second, Interval: 2 * time.Millisecond})
			checkResults(t, "several files", run.Results, want)
			if run.Metrics.Records != int64(n) {
				t.Errorf("Metrics.Records = %d, want %d", run.Metrics.Records, n)
			}
		})
	}
}

// TestRunFileTooMuchDisorder checks that events later than MaxDelay are
// counted as late, not silently mixed in: with disorder of up to 4 s and
// MaxDelay 0, some windows lose events.
func TestRunFileTooMuchDisorder(t *testing.T) {
	n := 20_000
	dir := t.TempDir()
	evs, camp := spreadEvents(n, 9, 40_000)
	shuffled := disorder(evs, 4_000, 2)
	path := filepath.Join(dir, "late.jsonl")
	writeEvents(t, path, shuffled)
	run := runFile(t, ysb.FileConfig{Events: []string{path}, Campaigns: camp, Workers: 1, MaxDelay: 0, Options: []weir.JobOption{weir.EpochRecords(100)}})
	var got, want int64
	for _, r := range run.Results {
		got += r.Value
	}
	for _, r := range ysb.Reference(evs, camp) {
		want += r.Value
	}
	if run.Metrics.Late == 0 || got+run.Metrics.Late != want {
		t.Errorf("counted %d views and %d late; want some late and %d in all", got, run.Metrics.Late, want)
	}
}

const unknownAdID = "00000000-0000-4000-8000-000000000000"

// badLine is a line the file job must reject.
type badLine struct {
	name  string
	line  string
	cause string // a part of the error message
}

func badLines(good gen.YSBEvent) []badLine {
	js := string(good.AppendJSON(nil))
	noAdType := strings.Replace(js, `"ad_type":"`+good.AdType+`",`, "", 1)
	badTime := strings.Replace(js, fmt.Sprintf(`"event_time":"%d"`, good.EventTime), `"event_time":"17000x0000000"`, 1)
	// Only a view's ad must have a campaign.
	view := good
	view.EventType = "view"
	unknownAd := strings.Replace(string(view.AppendJSON(nil)), good.AdID, unknownAdID, 1)
	if noAdType == js || badTime == js || unknownAd == js {
		panic("badLines: replacement failed")
	}
	// Views of a known ad at times no one means, which once pushed the
	// watermark to the top of int64 and made every later view late.
	far, past := view, view
	far.EventTime, past.EventTime = math.MaxInt64-3, -ysb.MaxEventTime-1
	return []badLine{
		{"malformed", js[:len(js)/2], "malformed JSON"},
		{"missing-field", noAdType, `missing field "ad_type"`},
		{"bad-event-time", badTime, "event_time"},
		{"unknown-ad", unknownAd, "no campaign"},
		{"far-event-time", string(far.AppendJSON(nil)), "event_time 9223372036854775804 is outside ±2^53 ms"},
		{"past-event-time", string(past.AppendJSON(nil)), "event_time -9007199254740993 is outside ±2^53 ms"},
	}
}

// fileWithBadLines writes good events as JSON lines with the bad lines at
// the given positions (0-based indexes into the output lines), with a few
// empty lines in between. It returns the 1-based line numbers of the bad
// lines and the good events in the file.
func fileWithBadLines(t *testing.T, path string, evs []gen.YSBEvent, bad []string, at []int, finalNewline bool) ([]int, []gen.YSBEvent) {
	t.Helper()
	var buf []byte
	lineNo := 0
	var good []gen.YSBEvent
	lines := make([]int, len(bad))
	next := 0
	k := 0
	emit := func(s []byte) {
		buf = append(buf, s...)
		buf = append(buf, '\n')
		lineNo++
	}
	for next < len(evs) || k < len(bad) {
		if k < len(bad) && at[k] == lineNo {
			emit([]byte(bad[k]))
			lines[k] = lineNo // 1-based, after emit
			k++
			continue
		}
		if next >= len(evs) {
			// Bad lines past the good ones go at the end.
			at[k] = lineNo
			continue
		}
		if lineNo%997 == 500 {
			emit(nil) // an empty line, which counts for line numbers
			continue
		}
		emit(evs[next].AppendJSON(nil))
		good = append(good, evs[next])
		next++
	}
	if !finalNewline {
		buf = buf[:len(buf)-1]
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return lines, good
}

func TestRunFileBadInputFails(t *testing.T) {
	dir := t.TempDir()
	evs, camp := spreadEvents(20_000, 21, 30_000)
	bads := badLines(evs[0])
	positions := []struct {
		name  string
		at    int
		final bool
	}{
		{"first", 0, true},
		{"middle", 6_000, true},
		{"late", 17_123, true},
		{"last", 30_000, true},
		{"last-no-newline", 30_000, false},
	}
	for _, b := range bads {
		for _, pos := range positions {
			path := filepath.Join(dir, b.name+"-"+pos.name+".jsonl")
			lines, _ := fileWithBadLines(t, path, evs, []string{b.line}, []int{pos.at}, pos.final)
			for _, w := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/%s/workers=%d", b.name, pos.name, w), func(t *testing.T) {
					_, err := ysb.RunFile(context.Background(), ysb.FileConfig{Events: []string{path}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second})
					if err == nil {
						t.Fatal("RunFile succeeded on bad input without a dead-letter output")
					}
					loc := fmt.Sprintf("%s:%d:", path, lines[0])
					if !strings.Contains(err.Error(), loc) {
						t.Errorf("error %q does not name %s", err, loc)
					}
					if !strings.Contains(err.Error(), b.cause) {
						t.Errorf("error %q does not say %q", err, b.cause)
					}
					if strings.Contains(err.Error(), "\n") {
						t.Errorf("error %q spans lines", err)
					}
				})
			}
		}
	}
}

func TestRunFileDeadLetter(t *testing.T) {
	dir := t.TempDir()
	n := eventCount(t) / 4
	evs, camp := spreadEvents(n, 33, 42_000)
	evs = disorder(evs, 4_000, 8)
	var bad []badLine
	var at []int
	for i, b := range badLines(evs[1]) {
		// Each kind twice: early and late in the file.
		bad = append(bad, b)
		at = append(at, 10+i*n/13)
	}
	for i, b := range badLines(evs[2]) {
		bad = append(bad, b)
		at = append(at, n/2+i*n/13)
	}
	// Sorted positions, as fileWithBadLines expects.
	idx := make([]int, len(at))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return at[idx[a]] < at[idx[b]] })
	var sBad []badLine
	var sLines []string
	var sAt []int
	for _, i := range idx {
		sBad, sLines, sAt = append(sBad, bad[i]), append(sLines, bad[i].line), append(sAt, at[i])
	}
	path := filepath.Join(dir, "mixed.jsonl")
	lineNos, good := fileWithBadLines(t, path, evs, sLines, sAt, false)
	want := ysb.Reference(good, camp)
	// The offset of each line, from the file itself.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offsets := []int64{0}
	for i, c := range data {
		if c == '\n' {
			offsets = append(offsets, int64(i+1))
		}
	}

	for _, w := range workerCounts {
		t.Run(fmt.Sprintf("workers=%d", w), func(t *testing.T) {
			deadPath := filepath.Join(t.TempDir(), "dead.jsonl")
			dead, err := file.OpenDeadLetter(deadPath)
			if err != nil {
				t.Fatal(err)
			}
			run := runFile(t, ysb.FileConfig{
				Events: []string{path}, Campaigns: camp, Workers: w, MaxDelay: 5 * time.Second,
				DeadLetter: dead, Options: []weir.JobOption{weir.BatchInterval(5 * time.Millisecond)},
			})
			if err := dead.Close(); err != nil {
				t.Fatal(err)
			}
			checkResults(t, "good lines", run.Results, want)
			if run.DeadLetters != int64(len(sBad)) {
				t.Errorf("DeadLetters = %d, want %d", run.DeadLetters, len(sBad))
			}
			letters, err := file.ReadDeadLetters(deadPath)
			if err != nil {
				t.Fatal(err)
			}
			sort.Slice(letters, func(a, b int) bool { return letters[a].Line < letters[b].Line })
			if len(letters) != len(sBad) {
				t.Fatalf("%d dead letters, want %d: %+v", len(letters), len(sBad), letters)
			}
			for k, l := range letters {
				b, line := sBad[k], int64(lineNos[k])
				if l.Source != "events" || l.File != path || l.Line != line || l.Offset != offsets[line-1] || l.Record != b.line || !strings.Contains(l.Reason, b.cause) {
					t.Errorf("dead letter %+v; want source events, %s:%d at offset %d, a reason with %q, the record %q", l, path, line, offsets[line-1], b.cause, b.line)
				}
			}
			if run.Metrics.Late != 0 {
				t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
			}
		})
	}
}

// TestRunFileUnknownAdOfNonView checks that clicks and purchases of ads
// without a campaign are bad input too: the two input files disagree. They
// stop the job, or go to the dead-letter output, counted, while the views
// are counted as the reference counts them.
func TestRunFileUnknownAdOfNonView(t *testing.T) {
	dir := t.TempDir()
	evs, camp := spreadEvents(5_000, 4, 25_000)
	var withUnknown []gen.YSBEvent
	bad := 0
	for i, e := range evs {
		withUnknown = append(withUnknown, e)
		if i%50 == 0 && e.EventType != "view" {
			e.AdID = unknownAdID
			withUnknown = append(withUnknown, e)
			bad++
		}
	}
	if bad == 0 {
		t.Fatal("no event with an unknown ad")
	}
	path := filepath.Join(dir, "nonview.jsonl")
	writeEvents(t, path, withUnknown)
	want := ysb.Reference(evs, camp)
	for _, w := range []int{1, 3} {
		_, err := ysb.RunFile(context.Background(), ysb.FileConfig{Events: []string{path}, Campaigns: camp, Workers: w, MaxDelay: time.Second})
		if err == nil || !strings.Contains(err.Error(), "has no campaign") || !strings.Contains(err.Error(), "nonview.jsonl:") {
			t.Errorf("workers=%d: RunFile = %v; want an unknown-ad error naming the file and line", w, err)
		}
		var dead bytes.Buffer
		run := runFile(t, ysb.FileConfig{Events: []string{path}, Campaigns: camp, Workers: w, MaxDelay: time.Second, DeadLetter: file.NewDeadLetter(&dead)})
		checkResults(t, "non-views of unknown ads, with a dead-letter output", run.Results, want)
		if run.DeadLetters != int64(bad) || strings.Count(dead.String(), "\n") != bad {
			t.Errorf("workers=%d: %d dead letters (%d lines); want %d", w, run.DeadLetters, strings.Count(dead.String(), "\n"), bad)
		}
	}
}

func TestRunFileNoCampaigns(t *testing.T) {
	_, err := ysb.RunFile(context.Background(), ysb.FileConfig{Events: []string{"x"}})
	if err == nil {
		t.Fatal("RunFile without a campaign map succeeded")
	}
}

func TestRunFileMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.jsonl")
	_, err := ysb.RunFile(context.Background(), ysb.FileConfig{Events: []string{path}, Campaigns: ysb.Campaigns{"a": "c"}, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("RunFile on a missing file: error %v; want one naming %s", err, path)
	}
}

func TestReadCampaigns(t *testing.T) {
	ok := []struct {
		name, in string
		want     ysb.Campaigns
	}{
		{"plain", "ad_id,campaign_id\na1,c1\na2,c1\na3,c2\n", ysb.Campaigns{"a1": "c1", "a2": "c1", "a3": "c2"}},
		{"crlf-spaces-blank", "ad_id, campaign_id\r\n a1 , c1 \r\n\r\n\na2,c2", ysb.Campaigns{"a1": "c1", "a2": "c2"}},
		{"header-only", "ad_id,campaign_id\n", ysb.Campaigns{}},
		{"repeated-same", "ad_id,campaign_id\na1,c1\na1,c1\n", ysb.Campaigns{"a1": "c1"}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			got, err := ysb.ReadCampaigns(strings.NewReader(c.in), "m.csv")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	bad := []struct {
		name, in, loc string
	}{
		{"empty", "", "m.csv:"},
		{"no-header", "a1,c1\na2,c2\n", "m.csv:1:"},
		{"wrong-header", "ad,campaign\na1,c1\n", "m.csv:1:"},
		{"no-comma", "ad_id,campaign_id\na1,c1\na2\n", "m.csv:3:"},
		{"empty-ad", "ad_id,campaign_id\na1,c1\n\n,c2\n", "m.csv:4:"},
		{"empty-campaign", "ad_id,campaign_id\na1,\n", "m.csv:2:"},
		{"three-fields", "ad_id,campaign_id\na1,c1\na2,c2,x\n", "m.csv:3:"},
		{"conflict", "ad_id,campaign_id\na1,c1\na2,c2\na1,c2\n", "m.csv:4:"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			got, err := ysb.ReadCampaigns(strings.NewReader(c.in), "m.csv")
			if err == nil {
				t.Fatalf("ReadCampaigns succeeded with %v", got)
			}
			if !strings.Contains(err.Error(), c.loc) {
				t.Errorf("error %q does not name %s", err, c.loc)
			}
		})
	}
	if _, err := ysb.LoadCampaigns(filepath.Join(t.TempDir(), "missing.csv")); err == nil {
		t.Error("LoadCampaigns of a missing file succeeded")
	}
}

// TestWriteCSV checks the output format the CLI writes.
func TestWriteCSV(t *testing.T) {
	rs := []ysb.Result{
		{Key: "c1", Start: 1_700_000_000_000, End: 1_700_000_010_000, Value: 3},
		{Key: "c2", Start: 1_700_000_010_000, End: 1_700_000_020_000, Value: 12},
	}
	var b bytes.Buffer
	if err := ysb.WriteCSV(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "campaign_id,window_start_ms,count\nc1,1700000000000,3\nc2,1700000010000,12\n"
	if b.String() != want {
		t.Errorf("WriteCSV wrote %q, want %q", b.String(), want)
	}
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		if strings.Count(sc.Text(), ",") != 2 {
			t.Errorf("row %q does not have 3 fields", sc.Text())
		}
	}
}

// TestRunFileNegativeEventTimes runs the job over event times around the
// Unix epoch, some of them negative, which the decoder accepts and the
// engine's windows handle (a tumbling window starts at a multiple of its
// size, rounding down). The reference and the baseline loop must put each
// event in the same window as the engine: -5 ms is in [-10000, 0).
func TestRunFileNegativeEventTimes(t *testing.T) {
	n := 30_000
	dir := t.TempDir()
	evs, camp := spreadEvents(n, 12, 40_000)
	for i := range evs {
		evs[i].EventTime = -25_000 + int64(i)*40_000/int64(n)
	}
	path := filepath.Join(dir, "negative.jsonl")
	writeEvents(t, path, disorder(evs, 4_000, 3))
	run := runFile(t, ysb.FileConfig{Events: []string{path}, Campaigns: camp, Workers: 2, MaxDelay: 5 * time.Second})
	for _, r := range run.Results {
		if r.Start%ysb.WindowMillis != 0 || r.End != r.Start+ysb.WindowMillis {
			t.Fatalf("engine window [%d, %d) is not a 10 s window", r.Start, r.End)
		}
	}
	if run.Metrics.Late != 0 {
		t.Errorf("Metrics.Late = %d, want 0", run.Metrics.Late)
	}
	// The window of -5 ms per the engine.
	one := []gen.YSBEvent{evs[0]}
	one[0].EventTime = -5
	one[0].EventType = "view"
	onePath := filepath.Join(dir, "one.jsonl")
	writeEvents(t, onePath, one)
	oneRun := runFile(t, ysb.FileConfig{Events: []string{onePath}, Campaigns: camp, Workers: 1})
	if len(oneRun.Results) != 1 || oneRun.Results[0].Start != -10_000 {
		t.Fatalf("engine puts a view at -5 ms in %+v; want the window [-10000, 0)", oneRun.Results)
	}
	if ref := ysb.Reference(one, camp); len(ref) != 1 || ref[0].Start != -10_000 {
		t.Errorf("Reference puts a view at -5 ms in %+v; want the window [-10000, 0)", ref)
	}
	if b := baselineResults(camp, one); len(b) != 1 || b[0].Start != -10_000 {
		t.Errorf("Baseline puts a view at -5 ms in %+v; want the window [-10000, 0)", b)
	}
	checkResults(t, "Reference over negative event times", run.Results, ysb.Reference(evs, camp))
	checkResults(t, "Baseline over negative event times", run.Results, baselineResults(camp, evs))
}
