package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/postgres"
)

type click struct {
	User string
	TS   int64 // event time, milliseconds
}

// userCount is a user's running count of clicks.
type userCount struct {
	User string
	N    int64
}

func clicks(n int) []click {
	r := rand.New(rand.NewPCG(3, 5))
	in := make([]click, n)
	for i := range in {
		in[i] = click{User: fmt.Sprintf("u%d", int(r.ExpFloat64()*8)), TS: int64(i)}
	}
	return in
}

// countsOf is the failure-free result: clicks per user, and per user and
// 1-second window (keyed "user/start").
func countsOf(in []click) (users, windows map[string]int64) {
	users, windows = map[string]int64{}, map[string]int64{}
	for _, c := range in {
		users[c.User]++
		windows[fmt.Sprintf("%s/%d", c.User, c.TS/1000*1000)]++
	}
	return users, windows
}

// countJob reads in, crashing at record crashAt (-1: never), and upserts
// each user's running count into users, and each window's count into
// windows.
func countJob(j *weir.Job, url string, in []click, rate float64, crashAt int64, users, windows string) {
	var src weir.Input[click] = weir.SliceSource[click]{Records: in, BatchSize: 50}
	if rate > 0 {
		src = weir.Paced(src, rate)
	}
	s := weir.Map(weir.Source(j, "clicks", src), func(c click) click {
		if c.TS == crashAt {
			panic("crash")
		}
		return c
	}, weir.Stateless(), weir.Name("crash"))
	running := weir.Process(weir.KeyBy(s, func(c click) string { return c.User }),
		func(user string, n *int64, _ click, out []userCount) []userCount {
			*n++
			return append(out, userCount{user, *n})
		}, weir.Name("running"))
	weir.Sink(running, postgres.Upsert(postgres.Config{URL: url, Table: users, Columns: []string{"user_id", "n"}, Key: []string{"user_id"}},
		func(c userCount, dst []any) []any { return append(dst, c.User, c.N) }), weir.Name("users"))

	timed := weir.EventTime(s, func(c click) int64 { return c.TS }, 0, weir.Name("time"))
	counts := weir.Count(weir.Window(weir.KeyBy(timed, func(c click) string { return c.User }), weir.Tumbling(time.Second),
		weir.WindowOptions(weir.Name("window"))))
	weir.Sink(counts, postgres.Upsert(postgres.Config{URL: url, Table: windows, Columns: []string{"user_id", "start", "n"}, Key: []string{"user_id", "start"}},
		func(w weir.WindowResult[string, int64], dst []any) []any { return append(dst, w.Key, w.Start, w.Value) }), weir.Name("windows"))
}

const windowQuery = "SELECT user_id || '/' || start, n FROM "

// prefixOf returns the length of the prefix of in whose per-user counts
// are got, or -1 if there is none.
func prefixOf(in []click, got map[string]int64) int {
	cur := map[string]int64{}
	for p := 0; ; p++ {
		if sameCounts(cur, got) == "" {
			return p
		}
		if p == len(in) {
			return -1
		}
		cur[in[p].User]++
	}
}

// A job crashes midway and restarts from its checkpoints: until the
// restart the tables hold what a checkpoint covered, and at the end they
// hold the failure-free result.
func TestCrashAndRestart(t *testing.T) {
	for _, from := range []string{"latest", "oldest"} {
		t.Run(from, func(t *testing.T) { crashAndRestart(t, from) })
	}
}

func crashAndRestart(t *testing.T, from string) {
	d := newDB(t)
	users := d.table("weir_users", "user_id text PRIMARY KEY, n bigint NOT NULL")
	windows := d.table("weir_windows", "user_id text, start bigint, n bigint NOT NULL, PRIMARY KEY (user_id, start)")
	in := clicks(20000)
	const crashAt, epoch = 12100, 200
	ckpt := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first := weir.NewJob("first", weir.Workers(1), weir.EpochRecords(epoch), weir.Checkpoints(ckpt, 3, 100))
	countJob(first, d.url, in, 20000, crashAt, users, windows)
	err := first.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "crash") {
		t.Fatalf("first run: %v; want the crash", err)
	}
	// The table holds what the last committed checkpoint covered, no
	// more: the one reader cuts epoch e (numbered from 0) after record
	// (e+1)*epoch, and checkpoint f covers epochs up to f.
	p, f := prefixOf(in, d.counts("SELECT user_id, n FROM "+users)), d.fence(users)
	t.Logf("after the crash: fence at checkpoint %d, the table holds the counts of the first %d records", f, p)
	if f <= 0 || int64(p) != (f+1)*epoch {
		t.Fatalf("after the crash at record %d: fence %d, the table holds the counts of the first %d records; want those of the first %d",
			crashAt, f, p, (f+1)*epoch)
	}

	opts := []weir.JobOption{weir.Workers(2), weir.EpochRecords(300), weir.Checkpoints(ckpt, 2, 100)}
	if from == "oldest" {
		opts = append(opts, weir.FromCheckpoint(oldestCheckpoint(t, ckpt)))
	}
	second := weir.NewJob("second", opts...)
	countJob(second, d.url, in, 0, -1, users, windows)
	if err := second.Run(ctx); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if second.Metrics().RestoredFrom == 0 {
		t.Fatal("the second run restored no checkpoint")
	}
	t.Logf("restored from checkpoint %d", second.Metrics().RestoredFrom)
	wantUsers, wantWindows := countsOf(in)
	if diff := sameCounts(d.counts("SELECT user_id, n FROM "+users), wantUsers); diff != "" {
		t.Errorf("running counts: %s", diff)
	}
	if diff := sameCounts(d.counts(windowQuery+windows), wantWindows); diff != "" {
		t.Errorf("window counts: %s", diff)
	}
	for _, name := range []string{users, windows} {
		if n := d.staged(name); n != 0 {
			t.Errorf("%s: %d rows left staged; want 0", name, n)
		}
	}
}

// oldestCheckpoint returns the directory of the oldest checkpoint in dir.
func oldestCheckpoint(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var chks []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "chk-") {
			chks = append(chks, e.Name())
		}
	}
	if len(chks) < 2 {
		t.Fatalf("%s holds checkpoints %v; want at least 2", dir, chks)
	}
	slices.Sort(chks)
	return filepath.Join(dir, chks[0])
}

// Without checkpoints, each epoch's rows are upserted at its end, and
// the job's result is in the tables when it finishes.
func TestWithoutCheckpoints(t *testing.T) {
	d := newDB(t)
	users := d.table("weir_plain_users", "user_id text PRIMARY KEY, n bigint NOT NULL")
	windows := d.table("weir_plain_windows", "user_id text, start bigint, n bigint NOT NULL, PRIMARY KEY (user_id, start)")
	in := clicks(20000)
	epochs := 0
	j := weir.NewJob("plain", weir.Workers(2), weir.EpochRecords(500), weir.OnEpoch(func(weir.EpochStats) { epochs++ }))
	countJob(j, d.url, in, 0, -1, users, windows)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	wantUsers, wantWindows := countsOf(in)
	if diff := sameCounts(d.counts("SELECT user_id, n FROM "+users), wantUsers); diff != "" {
		t.Errorf("running counts: %s", diff)
	}
	if diff := sameCounts(d.counts(windowQuery+windows), wantWindows); diff != "" {
		t.Errorf("window counts after %d epochs: %s", epochs, diff)
	}
	if n := d.count("SELECT count(*) FROM pg_class WHERE relname = $1", "weir_stage_"+users); n != 0 {
		t.Errorf("a job without checkpoints made a staging table")
	}
}

// Without checkpoints, rows are upserted at the end of their epoch (the
// last of a key's rows wins) and not before; Close upserts the rest.
func TestEpochsDirectly(t *testing.T) {
	d := newDB(t)
	table := d.table("weir_epochs", kvColumns)
	s := kvSink(d.url, table)
	if err := s.Write([]kv{{"a", 1}, {"b", 1}, {"a", 2}}); err != nil {
		t.Fatal(err)
	}
	if got := d.counts("SELECT k, v FROM " + table); len(got) != 0 {
		t.Fatalf("before the epoch's end: %v; want nothing", got)
	}
	if err := s.EndEpoch(1); err != nil {
		t.Fatal(err)
	}
	if diff := sameCounts(d.counts("SELECT k, v FROM "+table), map[string]int64{"a": 2, "b": 1}); diff != "" {
		t.Fatalf("after epoch 1: %s", diff)
	}
	s.Write([]kv{{"b", 5}, {"c", 3}})
	s.EndEpoch(2)
	s.Write([]kv{{"a", 7}, {"a", 8}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := sameCounts(d.counts("SELECT k, v FROM "+table), map[string]int64{"a": 8, "b": 5, "c": 3}); diff != "" {
		t.Fatalf("after Close: %s", diff)
	}
}
