package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weirstream/weir"
)

// Fields of a window's hash.
const (
	SeenCountField   = "seen_count"
	TimeUpdatedField = "time_updated"
)

// maxPending is how many windows Write keeps before it writes them out
// without waiting for the end of the epoch.
const maxPending = 100_000

// ResultsConfig configures YSBResults.
type ResultsConfig struct {
	// URL is the server's, as redis://[user:password@]host:port/db.
	URL string
	// Prefix is put before every key written, the set of campaigns and
	// the window and list ids' keys included (default "": the
	// benchmark's own layout).
	Prefix string
}

// window names one result: a campaign's window by its start.
type window struct {
	campaign string
	start    int64
}

// row is one result to write.
type row struct {
	window
	count int64
}

// ysbResults is the sink YSBResults returns.
type ysbResults struct {
	cfg    ResultsConfig
	setErr error // a bad URL, reported by every call

	mu      sync.Mutex // guards pending and order
	pending map[window]int64
	order   []window // pending's windows as they first came

	flushMu sync.Mutex // one flush at a time; guards client
	client  *goredis.Client
}

// YSBResults returns a sink that writes the windows' counts of the YSB
// query (Key: the campaign, Start: the window's start in ms, Value: the
// count) in the benchmark's layout (see the package comment). Write keeps
// the rows (the latest count of each window); EndEpoch and Close write
// them with three pipelined round trips per 1,000 windows. It is safe for
// concurrent use, so a sink with several instances may share it; each
// instance's Close writes what is pending and closes the connection,
// which a later write opens again. A bad URL is the error of every call;
// an unreachable server, of the first write to it.
func YSBResults(cfg ResultsConfig) weir.Output[weir.WindowResult[string, int64]] {
	r := &ysbResults{cfg: cfg, pending: map[window]int64{}}
	_, r.setErr = options(cfg.URL)
	return r
}

// Write implements weir.Output.
func (r *ysbResults) Write(batch []weir.WindowResult[string, int64]) error {
	if r.setErr != nil {
		return r.setErr
	}
	r.mu.Lock()
	for i := range batch {
		w := window{batch[i].Key, batch[i].Start}
		if _, there := r.pending[w]; !there {
			w.campaign = strings.Clone(w.campaign)
			r.order = append(r.order, w)
		}
		r.pending[w] = batch[i].Value
	}
	full := len(r.order) >= maxPending
	r.mu.Unlock()
	if full {
		return r.flush()
	}
	return nil
}

// EndEpoch implements weir.EpochSink: it writes what is pending.
func (r *ysbResults) EndEpoch(uint64) error {
	if r.setErr != nil {
		return r.setErr
	}
	return r.flush()
}

// Close implements weir.Output: it writes what is pending and closes the
// connection.
func (r *ysbResults) Close() error {
	if r.setErr != nil {
		return r.setErr
	}
	err := r.flush()
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if r.client != nil {
		err = errors.Join(err, r.client.Close())
		r.client = nil
	}
	return err
}

// flush writes the pending rows. Rows it fails to write stay pending,
// unless a newer count came meanwhile.
func (r *ysbResults) flush() error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	rows := make([]row, len(r.order))
	for i, w := range r.order {
		rows[i] = row{w, r.pending[w]}
	}
	clear(r.pending)
	r.order = r.order[:0]
	r.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	ctx := context.Background()
	err := r.connect(ctx)
	for lo := 0; err == nil && lo < len(rows); lo += batchSize {
		err = writeRows(ctx, r.client, r.cfg.Prefix, rows[lo:min(lo+batchSize, len(rows))])
		if err != nil {
			rows = rows[lo:]
		}
	}
	if err != nil {
		r.mu.Lock()
		for _, w := range rows {
			if _, newer := r.pending[w.window]; !newer {
				r.pending[w.window] = w.count
				r.order = append(r.order, w.window)
			}
		}
		r.mu.Unlock()
	}
	return err
}

// connect opens the connection if it is not open; flushMu is held.
func (r *ysbResults) connect(ctx context.Context) error {
	if r.client != nil {
		return nil
	}
	c, err := connect(ctx, r.cfg.URL)
	if err != nil {
		return err
	}
	r.client = c
	return nil
}

// ids is what the first round trip of writeRows learns.
type ids struct {
	list   map[string]string // campaign -> its window list's id
	window []string          // rows[i]'s window id
	fresh  []bool            // whether this write made rows[i]'s id
}

// writeRows writes rows, at most batchSize, in three round trips:
//
//  1. HSETNX c windows <new id>, then HGET c windows, for each campaign;
//     HSETNX c w <new id>, then HGET c w, for each window: the ids,
//     made by whichever writer came first, as everyone reads them;
//  2. EXISTS <window id> for each window whose id was there already;
//  3. in one MULTI/EXEC, SADD campaigns for the campaigns, LPUSH <list
//     id> w for each window whose hash does not exist yet, and HSET
//     <window id> seen_count <count> time_updated <now ms> for each.
//
// Since a window's first HSET and its LPUSH commit together, a window is
// in its campaign's list exactly when its hash exists, so a rewrite never
// lists a window twice, even after a write that failed between the
// round trips.
func writeRows(ctx context.Context, c *goredis.Client, prefix string, rows []row) error {
	got, err := makeIDs(ctx, c, prefix, rows)
	if err != nil {
		return err
	}
	listed := make([]bool, len(rows))
	var exists []*goredis.IntCmd
	var which []int
	err = pipelined(ctx, c, false, func(p goredis.Pipeliner) {
		for i := range rows {
			if !got.fresh[i] {
				exists = append(exists, p.Exists(ctx, prefix+got.window[i]))
				which = append(which, i)
			}
		}
	})
	if err != nil {
		return err
	}
	for j, e := range exists {
		listed[which[j]] = e.Val() == 1
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	campaigns := make([]any, 0, len(got.list))
	for cp := range got.list {
		campaigns = append(campaigns, cp)
	}
	return pipelined(ctx, c, true, func(p goredis.Pipeliner) {
		p.SAdd(ctx, prefix+CampaignsKey, campaigns...)
		for i, rw := range rows {
			if !listed[i] {
				p.LPush(ctx, prefix+got.list[rw.campaign], strconv.FormatInt(rw.start, 10))
			}
			p.HSet(ctx, prefix+got.window[i], SeenCountField, strconv.FormatInt(rw.count, 10), TimeUpdatedField, now)
		}
	})
}

// makeIDs is writeRows' first round trip.
func makeIDs(ctx context.Context, c *goredis.Client, prefix string, rows []row) (ids, error) {
	got := ids{list: map[string]string{}, window: make([]string, len(rows)), fresh: make([]bool, len(rows))}
	lists := map[string]*goredis.StringCmd{}
	sets := make([]*goredis.BoolCmd, len(rows))
	gets := make([]*goredis.StringCmd, len(rows))
	err := pipelined(ctx, c, false, func(p goredis.Pipeliner) {
		for i, rw := range rows {
			key := prefix + rw.campaign
			if lists[rw.campaign] == nil {
				p.HSetNX(ctx, key, WindowsField, newID())
				lists[rw.campaign] = p.HGet(ctx, key, WindowsField)
			}
			w := strconv.FormatInt(rw.start, 10)
			sets[i] = p.HSetNX(ctx, key, w, newID())
			gets[i] = p.HGet(ctx, key, w)
		}
	})
	if err != nil {
		return got, err
	}
	for cp, g := range lists {
		if got.list[cp] = g.Val(); got.list[cp] == "" {
			return got, fmt.Errorf("redis: campaign hash %q: no %q id after HSETNX", prefix+cp, WindowsField)
		}
	}
	for i := range rows {
		got.window[i], got.fresh[i] = gets[i].Val(), sets[i].Val()
		if got.window[i] == "" {
			return got, fmt.Errorf("redis: campaign hash %q: no id for window %d after HSETNX", prefix+rows[i].campaign, rows[i].start)
		}
	}
	return got, nil
}

// ReadYSBResults reads the results under prefix: campaign -> window start
// (ms) -> seen_count. It walks the set of campaigns (SMEMBERS campaigns),
// each campaign's hash (HGETALL: every field but "windows" is a window
// start, its value the window's id) and each window's hash (HGET id
// seen_count); a window whose id exists without a count yet is left out.
// Campaigns without windows are not in the map.
func ReadYSBResults(ctx context.Context, url, prefix string) (map[string]map[int64]int64, error) {
	c, err := connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	campaigns, err := c.SMembers(ctx, prefix+CampaignsKey).Result()
	if err != nil {
		return nil, keyError("SMEMBERS", prefix+CampaignsKey, err)
	}
	slices.Sort(campaigns)
	out := map[string]map[int64]int64{}
	for lo := 0; lo < len(campaigns); lo += batchSize {
		var hashes []*goredis.MapStringStringCmd
		err := pipelined(ctx, c, false, func(p goredis.Pipeliner) {
			for _, cp := range campaigns[lo:min(lo+batchSize, len(campaigns))] {
				hashes = append(hashes, p.HGetAll(ctx, prefix+cp))
			}
		})
		if err != nil {
			return nil, err
		}
		var found []row
		var idOf []string
		for j, h := range hashes {
			cp := campaigns[lo+j]
			for field, id := range h.Val() {
				if field == WindowsField {
					continue
				}
				start, err := strconv.ParseInt(field, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("redis: campaign hash %q has a field %q, neither %q nor a window start in ms", prefix+cp, field, WindowsField)
				}
				found = append(found, row{window: window{cp, start}})
				idOf = append(idOf, id)
			}
		}
		if err := readCounts(ctx, c, prefix, found, idOf, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readCounts reads the seen_count of windows (idOf their ids) into out.
func readCounts(ctx context.Context, c *goredis.Client, prefix string, windows []row, idOf []string, out map[string]map[int64]int64) error {
	for lo := 0; lo < len(windows); lo += batchSize {
		hi := min(lo+batchSize, len(windows))
		counts := make([]*goredis.StringCmd, 0, hi-lo)
		err := pipelined(ctx, c, false, func(p goredis.Pipeliner) {
			for i := lo; i < hi; i++ {
				counts = append(counts, p.HGet(ctx, prefix+idOf[i], SeenCountField))
			}
		})
		if err != nil {
			return err
		}
		for j, cmd := range counts {
			w := windows[lo+j]
			if errors.Is(cmd.Err(), goredis.Nil) {
				continue
			}
			n, err := strconv.ParseInt(cmd.Val(), 10, 64)
			if err != nil {
				return fmt.Errorf("redis: window hash %q (campaign %q, window %d): %s %q is not an integer", prefix+idOf[lo+j], w.campaign, w.start, SeenCountField, cmd.Val())
			}
			if out[w.campaign] == nil {
				out[w.campaign] = map[int64]int64{}
			}
			out[w.campaign][w.start] = n
		}
	}
	return nil
}
