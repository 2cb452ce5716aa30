package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// LookupConfig configures a Lookup.
type LookupConfig struct {
	// URL is the server's, as redis://[user:password@]host:port/db.
	URL string
	// Prefix is put before every key looked up (default "").
	Prefix string
	// TTL is how long a cached value, or a cached absence, is used
	// before the server is asked again: 0 means one minute, a negative
	// TTL never expires.
	TTL time.Duration
	// MaxEntries bounds the cache (0 or less: 1<<20), rounded up to a
	// multiple of the cache's 64 shards. Past a shard's share, an
	// arbitrary entry of the shard makes room for a new one.
	MaxEntries int
}

// Lookup reads string keys of Redis through a local cache: a Get is
// answered from the cache when it can, else by GET on the server, and
// the answer, found or not, is cached for TTL. It is safe for
// concurrent use; a Get answered from the cache takes a read lock on
// one of many shards and allocates nothing.
type Lookup struct {
	client *goredis.Client
	prefix string
	ttl    time.Duration
	shards [numShards]shard
}

const numShards = 64

// entry is one cached answer; expires is in Unix nanoseconds, 0 never.
type entry struct {
	value   string
	ok      bool
	expires int64
}

type shard struct {
	mu     sync.RWMutex
	m      map[string]entry
	max    int
	hits   atomic.Int64
	misses atomic.Int64
	_      [40]byte // keeps neighbouring shards' counters apart
}

// NewLookup connects to cfg.URL and checks the server with PING. A
// server that does not answer is retried with a growing backoff for
// about ten seconds, or until ctx ends; the error then names its
// address.
func NewLookup(ctx context.Context, cfg LookupConfig) (*Lookup, error) {
	c, err := connect(ctx, cfg.URL)
	if err != nil {
		return nil, err
	}
	l := &Lookup{client: c, prefix: cfg.Prefix, ttl: cfg.TTL}
	if l.ttl == 0 {
		l.ttl = time.Minute
	}
	max := cfg.MaxEntries
	if max <= 0 {
		max = 1 << 20
	}
	per := max / numShards
	if max%numShards != 0 {
		per++
	}
	for i := range l.shards {
		l.shards[i].m = make(map[string]entry)
		l.shards[i].max = per
	}
	return l, nil
}

// shardOf hashes key (FNV-1a) to its shard.
func (l *Lookup) shardOf(key string) *shard {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return &l.shards[h%numShards]
}

// cached returns the cached answer for key, if there is a live one.
func (s *shard) cached(key string, now int64) (e entry, ok bool) {
	s.mu.RLock()
	e, ok = s.m[key]
	s.mu.RUnlock()
	if ok && e.expires != 0 && now >= e.expires {
		return entry{}, false
	}
	return e, ok
}

func (s *shard) put(key string, e entry) {
	s.mu.Lock()
	if _, there := s.m[key]; !there && len(s.m) >= s.max {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[key] = e
	s.mu.Unlock()
}

func (l *Lookup) expiry(now int64) int64 {
	if l.ttl < 0 {
		return 0
	}
	return now + int64(l.ttl)
}

// Get returns the value of the key Prefix+key: from the cache if it
// holds a live answer, else from the server (GET), caching the answer.
// ok is false when the key does not exist. A key that holds another type
// than a string is an error naming the key; errors are not cached.
func (l *Lookup) Get(ctx context.Context, key string) (value string, ok bool, err error) {
	s := l.shardOf(key)
	now := time.Now().UnixNano()
	if e, hit := s.cached(key, now); hit {
		s.hits.Add(1)
		return e.value, e.ok, nil
	}
	s.misses.Add(1)
	v, err := l.client.Get(ctx, l.prefix+key).Result()
	switch {
	case errors.Is(err, goredis.Nil):
		s.put(key, entry{expires: l.expiry(now)})
		return "", false, nil
	case err != nil:
		return "", false, keyError("GET", l.prefix+key, err)
	}
	s.put(key, entry{value: v, ok: true, expires: l.expiry(now)})
	return v, true, nil
}

// Preload reads keys (each under Prefix) with MGET, in batches, and
// caches the answers, absences included. A key that holds another type
// than a string reads as absent, as MGET has it.
func (l *Lookup) Preload(ctx context.Context, keys []string) error {
	full := make([]string, 0, min(len(keys), batchSize))
	for lo := 0; lo < len(keys); lo += batchSize {
		batch := keys[lo:min(lo+batchSize, len(keys))]
		full = full[:0]
		for _, k := range batch {
			full = append(full, l.prefix+k)
		}
		vals, err := l.client.MGet(ctx, full...).Result()
		if err != nil {
			return fmt.Errorf("redis: MGET of %d keys from %q: %w", len(full), full[0], err)
		}
		exp := l.expiry(time.Now().UnixNano())
		for i, k := range batch {
			e := entry{expires: exp}
			if s, ok := vals[i].(string); ok {
				e.value, e.ok = s, true
			}
			l.shardOf(k).put(k, e)
		}
	}
	return nil
}

// Stats returns how many Gets the cache answered (hits) and how many went
// to the server (misses).
func (l *Lookup) Stats() (hits, misses int64) {
	for i := range l.shards {
		hits += l.shards[i].hits.Load()
		misses += l.shards[i].misses.Load()
	}
	return hits, misses
}

// Close closes the connection to the server. Gets the cache answers
// still work; others fail.
func (l *Lookup) Close() error {
	return l.client.Close()
}
