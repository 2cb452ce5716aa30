package redis_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/gen"
	"github.com/weirstream/weir/connector/redis"
)

type result = weir.WindowResult[string, int64]

const windowMillis = 10_000

// events generates n YSB events whose times rise evenly over span ms from
// a time off a window boundary.
func events(n int, seed uint64, span int64) ([]gen.YSBEvent, map[string]string) {
	evs, ads := gen.YSBEvents(n, seed)
	base := int64(gen.YSBEventsStart + 3_217)
	for i := range evs {
		evs[i].EventTime = base + int64(i)*span/int64(n)
	}
	table := map[string]string{}
	for _, a := range ads {
		table[a.AdID] = a.CampaignID
	}
	return evs, table
}

// plainCounts is the YSB query computed directly: views per campaign per
// 10 s window.
func plainCounts(evs []gen.YSBEvent, table map[string]string) map[string]map[int64]int64 {
	out := map[string]map[int64]int64{}
	for _, e := range evs {
		c, ok := table[e.AdID]
		if e.EventType != "view" || !ok {
			continue
		}
		if out[c] == nil {
			out[c] = map[int64]int64{}
		}
		out[c][e.EventTime-e.EventTime%windowMillis]++
	}
	return out
}

// checkLayout checks the layout under prefix against want: every
// campaign's hash names a window list holding each of its windows once,
// and each window's hash has its count and a time_updated.
func checkLayout(t *testing.T, c *goredis.Client, prefix string, want map[string]map[int64]int64) {
	t.Helper()
	ctx := context.Background()
	for cp, windows := range want {
		h, err := c.HGetAll(ctx, prefix+cp).Result()
		if err != nil {
			t.Fatal(err)
		}
		list, err := c.LRange(ctx, prefix+h["windows"], 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		var wantList []string
		for w := range windows {
			wantList = append(wantList, strconv.FormatInt(w, 10))
		}
		slices.Sort(list)
		slices.Sort(wantList)
		if !slices.Equal(list, wantList) {
			t.Fatalf("campaign %s: window list %q, want %q", cp, list, wantList)
		}
		for w, n := range windows {
			wh, err := c.HGetAll(ctx, prefix+h[strconv.FormatInt(w, 10)]).Result()
			if err != nil {
				t.Fatal(err)
			}
			if wh["seen_count"] != strconv.FormatInt(n, 10) || wh["time_updated"] == "" || len(wh) != 2 {
				t.Fatalf("campaign %s window %d: hash %v, want seen_count %d and time_updated", cp, w, wh, n)
			}
		}
	}
}

// A weir job counts views per campaign per 10 s window, joining the
// campaign through a Lookup of the table LoadCampaigns wrote, and writes
// the counts with YSBResults from two sink instances: what
// ReadYSBResults reads back is the plain count.
func TestYSBJobWritesResults(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	evs, table := events(200_000, 11, 65_000)
	if err := redis.LoadCampaigns(ctx, url, prefix, table); err != nil {
		t.Fatal(err)
	}
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Preload(ctx, slices.Collect(maps.Keys(table))); err != nil {
		t.Fatal(err)
	}
	var lookupErr error
	var errOnce sync.Once
	job := weir.NewJob("ysb-redis", weir.Workers(2))
	src := weir.Source(job, "events", weir.SliceSource[gen.YSBEvent]{Records: evs, BatchSize: 1024})
	views := weir.FilterRef(src, func(e *gen.YSBEvent) bool { return e.EventType == "view" })
	type view struct {
		Campaign  string
		EventTime int64
	}
	proj := weir.MapRef(views, func(e *gen.YSBEvent) view {
		cp, _, err := l.Get(ctx, e.AdID)
		if err != nil {
			errOnce.Do(func() { lookupErr = err })
		}
		return view{cp, e.EventTime}
	})
	known := weir.Filter(proj, func(v view) bool { return v.Campaign != "" })
	timed := weir.EventTime(known, func(v view) int64 { return v.EventTime }, 0)
	keyed := weir.KeyBy(timed, func(v view) string { return v.Campaign })
	counts := weir.Count(weir.Window(keyed, weir.Tumbling(windowMillis*time.Millisecond)))
	weir.Sink(counts, redis.YSBResults(redis.ResultsConfig{URL: url, Prefix: prefix}), weir.Parallelism(2))
	if err := job.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if lookupErr != nil {
		t.Fatal(lookupErr)
	}
	if hits, misses := l.Stats(); misses != 0 || hits == 0 {
		t.Errorf("lookup: %d hits, %d misses after Preload; want no misses", hits, misses)
	}
	want := plainCounts(evs, table)
	if len(want) != 100 || len(want[table[evs[0].AdID]]) != 7 {
		t.Fatalf("plain count: %d campaigns; the test expects the generator's 100, each with 7 windows", len(want))
	}
	got, err := redis.ReadYSBResults(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if d := equalCounts(got, want); d != "" {
		t.Fatalf("ReadYSBResults differs from the plain count:\n%s", d)
	}
	checkLayout(t, c, prefix, want)
}

// rows turns counts into sink rows, in a shuffled order.
func rows(counts map[string]map[int64]int64, seed uint64) []result {
	var out []result
	for c, ws := range counts {
		for w, n := range ws {
			out = append(out, result{Key: c, Start: w, End: w + windowMillis, Value: n})
		}
	}
	slices.SortFunc(out, func(a, b result) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Start, b.Start))
	})
	r := rand.New(rand.NewPCG(seed, 2))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// write writes rs through a new sink in batches of size, ending an
// epoch after each, then closes it.
func write(t *testing.T, url, prefix string, rs []result, size int) {
	t.Helper()
	s := redis.YSBResults(redis.ResultsConfig{URL: url, Prefix: prefix})
	for lo := 0; lo < len(rs); lo += size {
		batch := slices.Clone(rs[lo:min(lo+size, len(rs))])
		if err := s.Write(batch); err != nil {
			t.Fatal(err)
		}
		for i := range batch { // the sink may not keep the batch
			batch[i] = result{Key: "overwritten", Start: -1, Value: -1}
		}
		if err := s.(weir.EpochSink).EndEpoch(uint64(lo)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Writing the same results again, as a job restored from a checkpoint
// does, leaves the same counts, the same window ids and no window listed
// twice; a newer count replaces the old one rather than adding to it.
func TestYSBResultsReplay(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	evs, table := events(50_000, 3, 40_000)
	want := plainCounts(evs, table)
	rs := rows(want, 1)
	write(t, url, prefix, rs, 97)
	ids := map[string]map[string]string{}
	for cp := range want {
		ids[cp] = c.HGetAll(ctx, prefix+cp).Val()
	}
	write(t, url, prefix, rows(want, 2), 1000) // the replay
	got, err := redis.ReadYSBResults(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if d := equalCounts(got, want); d != "" {
		t.Fatalf("after the replay:\n%s", d)
	}
	checkLayout(t, c, prefix, want)
	for cp := range want {
		if h := c.HGetAll(ctx, prefix+cp).Val(); !maps.Equal(h, ids[cp]) {
			t.Fatalf("campaign %s: the replay changed the window ids: %v, was %v", cp, h, ids[cp])
		}
	}
	// A later firing of one window, with a new count, then a window
	// whose id was made by a write that stopped there.
	r0 := rs[0]
	want[r0.Key][r0.Start] = r0.Value + 5
	half := r0.Start + 100*windowMillis
	c.HSet(ctx, prefix+r0.Key, strconv.FormatInt(half, 10), "id-of-a-stopped-write")
	want[r0.Key][half] = 42
	write(t, url, prefix, []result{{Key: r0.Key, Start: r0.Start, Value: r0.Value + 5}, {Key: r0.Key, Start: half, Value: 42}}, 10)
	got, err = redis.ReadYSBResults(ctx, url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if d := equalCounts(got, want); d != "" {
		t.Fatalf("after the new count:\n%s", d)
	}
	checkLayout(t, c, prefix, want)
	if n := c.HGet(ctx, prefix+"id-of-a-stopped-write", "seen_count").Val(); n != "42" {
		t.Fatalf("the stopped write's window id holds seen_count %q, want 42", n)
	}
}

// Several goroutines share one sink, as a sink's instances do (run with
// -race): each writes its campaigns and ends epochs at its own pace.
func TestYSBResultsShared(t *testing.T) {
	url, prefix, c := server(t)
	evs, table := events(30_000, 5, 50_000)
	want := plainCounts(evs, table)
	s := redis.YSBResults(redis.ResultsConfig{URL: url, Prefix: prefix})
	rs := rows(want, 3)
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []result
			for _, r := range rs {
				if int(r.Key[0])%workers == w {
					mine = append(mine, r)
				}
			}
			for lo := 0; lo < len(mine); lo += 13 {
				if err := s.Write(mine[lo:min(lo+13, len(mine))]); err != nil {
					errs <- err
					return
				}
				if err := s.(weir.EpochSink).EndEpoch(uint64(lo)); err != nil {
					errs <- err
					return
				}
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := redis.ReadYSBResults(context.Background(), url, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if d := equalCounts(got, want); d != "" {
		t.Fatal(d)
	}
	checkLayout(t, c, prefix, want)
}

// A campaign key that holds a string, not a hash, fails the write with
// an error naming the key.
func TestYSBResultsWrongType(t *testing.T) {
	url, prefix, c := server(t)
	c.Set(context.Background(), prefix+"c1", "a string", 0)
	s := redis.YSBResults(redis.ResultsConfig{URL: url, Prefix: prefix})
	if err := s.Write([]result{{Key: "c1", Start: 0, End: windowMillis, Value: 1}}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, s.(weir.EpochSink).EndEpoch(1), fmt.Sprintf("%q", prefix+"c1"), "WRONGTYPE")
	mustContain(t, s.Close(), prefix+"c1") // still pending
}
