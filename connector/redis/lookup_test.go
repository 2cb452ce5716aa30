package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/redis"
	"github.com/weirstream/weir/internal/services"
)

// checkGet fails the test unless Get(key) answers value, ok.
func checkGet(t *testing.T, l *redis.Lookup, key, value string, ok bool) {
	t.Helper()
	v, found, err := l.Get(context.Background(), key)
	if err != nil || v != value || found != ok {
		t.Fatalf("Get(%q) = %q, %v, %v; want %q, %v, nil", key, v, found, err, value, ok)
	}
}

// checkStats fails the test unless the lookup's stats are hits, misses.
func checkStats(t *testing.T, l *redis.Lookup, hits, misses int64) {
	t.Helper()
	if h, m := l.Stats(); h != hits || m != misses {
		t.Fatalf("Stats() = %d hits, %d misses; want %d, %d", h, m, hits, misses)
	}
}

// A Get goes to the server once, then to the cache until the TTL ends;
// an absent key is cached as absent for as long.
func TestLookupHitMissAndTTL(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	c.Set(ctx, prefix+"ad1", "campaign1", 0)
	const ttl = 300 * time.Millisecond
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	start := time.Now()
	checkGet(t, l, "ad1", "campaign1", true) // from the server
	checkGet(t, l, "ad1", "campaign1", true) // from the cache
	checkGet(t, l, "ad2", "", false)         // absent, from the server
	checkGet(t, l, "ad2", "", false)         // absent, from the cache
	checkStats(t, l, 2, 2)

	// The server changes; within the TTL the cache still answers, the
	// cached absence included.
	c.Set(ctx, prefix+"ad1", "campaign9", 0)
	c.Set(ctx, prefix+"ad2", "campaign2", 0)
	checkGet(t, l, "ad1", "campaign1", true)
	checkGet(t, l, "ad2", "", false)
	if time.Since(start) >= ttl {
		t.Fatalf("the test took %v, longer than the TTL, before the TTL's end", time.Since(start))
	}
	checkStats(t, l, 4, 2)

	time.Sleep(ttl + 50*time.Millisecond)
	checkGet(t, l, "ad1", "campaign9", true)
	checkGet(t, l, "ad2", "campaign2", true)
	checkStats(t, l, 4, 4)
	checkGet(t, l, "ad2", "campaign2", true)
	checkStats(t, l, 5, 4)
}

// A negative TTL never expires; the default TTL (a minute) outlives the
// test.
func TestLookupTTLNeverAndDefault(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	c.Set(ctx, prefix+"k", "v1", 0)
	never, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix, TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer never.Close()
	def, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	checkGet(t, never, "k", "v1", true)
	checkGet(t, def, "k", "v1", true)
	c.Set(ctx, prefix+"k", "v2", 0)
	time.Sleep(100 * time.Millisecond)
	checkGet(t, never, "k", "v1", true)
	checkGet(t, def, "k", "v1", true)
	checkStats(t, never, 1, 1)
	checkStats(t, def, 1, 1)
}

// Preload fills the cache in batches (more keys than one MGET takes),
// present and absent keys alike: the Gets after it never reach the
// server.
func TestLookupPreload(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	const n = 2500
	want := map[string]string{}
	var keys []string
	for i := range n {
		k := fmt.Sprintf("ad%d", i)
		keys = append(keys, k)
		if i%5 == 0 {
			continue // absent
		}
		want[k] = fmt.Sprintf("campaign%d", i%7)
		c.Set(ctx, prefix+k, want[k], 0)
	}
	c.Del(ctx, prefix+"ad1")
	c.HSet(ctx, prefix+"ad1", "x", "y") // MGET reads a hash as absent
	delete(want, "ad1")
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Preload(ctx, keys); err != nil {
		t.Fatal(err)
	}
	checkStats(t, l, 0, 0)
	for _, k := range keys {
		v, ok := want[k]
		checkGet(t, l, k, v, ok)
	}
	checkStats(t, l, n, 0)
	if err := l.Preload(ctx, nil); err != nil {
		t.Fatalf("Preload(nil): %v", err)
	}
}

// MaxEntries bounds the cache: past it, entries make room for others,
// which then reach the server again.
func TestLookupMaxEntries(t *testing.T) {
	url, prefix, _ := server(t)
	ctx := context.Background()
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix, MaxEntries: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 1000
	for range 2 {
		for i := range n {
			checkGet(t, l, fmt.Sprint(i), "", false)
		}
	}
	// The cache holds at most 64 of the keys when the second pass starts,
	// and each of the others misses.
	hits, misses := l.Stats()
	if hits > 64 || misses < 2*n-64 || hits+misses != 2*n {
		t.Fatalf("Stats() = %d hits, %d misses; want at most 64 hits of %d Gets", hits, misses, 2*n)
	}
}

// Many goroutines Get at once (run with -race): every answer is the
// server's, and each key reaches the server at least once.
func TestLookupConcurrentGet(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	const keys, workers, gets = 500, 32, 2000
	want := map[string]string{}
	for i := range keys {
		k := fmt.Sprintf("ad%d", i)
		if i%3 != 0 {
			want[k] = fmt.Sprintf("campaign-%d", i*7)
			c.Set(ctx, prefix+k, want[k], 0)
		}
	}
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range gets {
				k := fmt.Sprintf("ad%d", r.IntN(keys))
				v, ok, err := l.Get(ctx, k)
				if wv, wok := want[k]; err != nil || v != wv || ok != wok {
					errs <- fmt.Errorf("Get(%q) = %q, %v, %v; want %q, %v", k, v, ok, err, wv, wok)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	hits, misses := l.Stats()
	if hits+misses != workers*gets || misses < keys || misses > keys*workers {
		t.Fatalf("Stats() = %d hits, %d misses; want %d Gets, at least %d of them misses", hits, misses, workers*gets, keys)
	}
}

// A key of another type is an error naming the key, and is not cached.
func TestLookupWrongType(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	c.HSet(ctx, prefix+"h", "f", "v")
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, _, err = l.Get(ctx, "h")
	mustContain(t, err, prefix+"h", "WRONGTYPE")
	c.Del(ctx, prefix+"h")
	c.Set(ctx, prefix+"h", "now a string", 0)
	checkGet(t, l, "h", "now a string", true)
}

// A Get the cache answers allocates nothing.
func TestLookupHitAllocatesNothing(t *testing.T) {
	url, prefix, c := server(t)
	ctx := context.Background()
	c.Set(ctx, prefix+"ad", "campaign", 0)
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkGet(t, l, "ad", "campaign", true)
	checkGet(t, l, "absent", "", false)
	allocs := testing.AllocsPerRun(1000, func() {
		if v, ok, err := l.Get(ctx, "ad"); v != "campaign" || !ok || err != nil {
			t.Fatal("wrong answer")
		}
		if _, ok, err := l.Get(ctx, "absent"); ok || err != nil {
			t.Fatal("wrong answer")
		}
	})
	if allocs != 0 {
		t.Fatalf("a cached Get allocates %.1f times; want 0", allocs/2)
	}
	checkStats(t, l, 2002, 2) // AllocsPerRun runs the function once more
}

func BenchmarkLookupHit(b *testing.B) {
	url := services.Need(b, services.Redis)
	ctx := context.Background()
	l, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url, Prefix: "weirbench:"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("ad-%d", i)
	}
	if err := l.Preload(ctx, keys); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Get(ctx, keys[i&1023])
			i++
		}
	})
}
