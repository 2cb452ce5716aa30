package redis_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weirstream/weir/internal/services"
)

var prefixSeq atomic.Int64

// server returns the URL of the local Redis, a prefix no other test
// uses, and a client of its own; the prefix's keys are deleted when the
// test ends.
func server(t *testing.T) (url, prefix string, c *goredis.Client) {
	t.Helper()
	url = services.Need(t, services.Redis)
	name := strings.NewReplacer("/", "-", " ", "-", "*", "-", "?", "-", "[", "-", "]", "-").Replace(t.Name())
	prefix = fmt.Sprintf("weirtest:%s:%d:%d:", name, time.Now().UnixNano(), prefixSeq.Add(1))
	opt, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c = goredis.NewClient(opt)
	t.Cleanup(func() {
		ctx := context.Background()
		keys := scanKeys(t, c, prefix)
		for lo := 0; lo < len(keys); lo += 500 {
			if err := c.Del(ctx, keys[lo:min(lo+500, len(keys))]...).Err(); err != nil {
				t.Errorf("deleting the test's keys: %v", err)
			}
		}
		if left := scanKeys(t, c, prefix); len(left) != 0 {
			t.Errorf("%d keys under %q left after cleanup", len(left), prefix)
		}
		c.Close()
	})
	return url, prefix, c
}

// scanKeys returns every key under prefix (which has no glob characters).
func scanKeys(t *testing.T, c *goredis.Client, prefix string) []string {
	t.Helper()
	var out []string
	var cursor uint64
	for {
		keys, next, err := c.Scan(context.Background(), cursor, prefix+"*", 1000).Result()
		if err != nil {
			t.Fatalf("SCAN %s*: %v", prefix, err)
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			return out
		}
	}
}

// mustContain fails the test unless err's text has every one of want.
func mustContain(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// equalCounts reports how got and want (campaign -> window -> count)
// differ, at most a few differences; "" if they are equal.
func equalCounts(got, want map[string]map[int64]int64) string {
	var diffs []string
	for _, c := range slices.Sorted(maps.Keys(want)) {
		for _, w := range slices.Sorted(maps.Keys(want[c])) {
			if g, ok := got[c][w]; !ok || g != want[c][w] {
				diffs = append(diffs, fmt.Sprintf("campaign %s window %d: got %d (present %v), want %d", c, w, g, ok, want[c][w]))
			}
		}
	}
	for c, ws := range got {
		for w, n := range ws {
			if _, ok := want[c][w]; !ok {
				diffs = append(diffs, fmt.Sprintf("campaign %s window %d: got %d, want none", c, w, n))
			}
		}
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("... %d differences in all", len(diffs)))
	}
	return strings.Join(diffs, "\n")
}
