// Package redis connects jobs to Redis, for the Yahoo Streaming Benchmark
// (YSB) in its original form, where the ad → campaign table lives in
// Redis and the windows' counts are written there.
//
// # Lookup
//
// A Lookup reads string keys through a local cache. Get answers from the
// cache when it holds a live answer, else asks the server (GET) and
// caches what it says, an absent key included, for LookupConfig.TTL.
// The cache is sharded, each shard a map under a read-write lock, so
// many goroutines may Get at once and a cached answer costs a read lock
// and no allocation. Preload fills the cache with MGET in batches.
//
// # Layout
//
// LoadCampaigns writes the campaign table as the benchmark's setup does,
// and YSBResults writes counts as its campaign processor does (keys are
// shown without the prefix, which is put before every key, the ids'
// included; the default prefix "" is the original layout):
//
//	<ad_id>          string  the ad's campaign id
//	campaigns        set     the campaign ids
//	<campaign_id>    hash    "<window start ms>" -> window id,
//	                         "windows" -> window list id
//	<window list id> list    the campaign's window starts, newest first
//	<window id>      hash    seen_count -> the count,
//	                         time_updated -> when written, ms since 1970
//
// Window and list ids are random UUIDs. A writer makes an id with HSETNX
// and reads back whichever id the hash holds, so two writers of a window
// agree on it. Where the original processor also LPUSHes every write's
// time to a global list time_updated, this package does not: that list
// grows without bound and a replay would add to it.
//
// ReadCampaigns and ReadYSBResults read the layout back.
//
// # Exactly once
//
// The sink writes a window's count with HSET, not HINCRBY: writing a
// window again sets the same fields to the same count, where HINCRBY
// would add it twice. A job restored from a checkpoint emits again the
// windows that fired after the checkpoint, and a window of the YSB query
// (a count over a tumbling window, which fires once, when the watermark
// passes its end) has the same count the second time; so the rewrite
// changes nothing but time_updated, and the sink's output is that of a
// run without failure: exactly once. A window that fires more than once
// (allowed lateness) ends with the count of its last firing, as long as
// its firings reach the sink in order.
//
// The window list stays free of duplicates across rewrites too: a
// window's LPUSH and the first HSET of its hash commit together in one
// MULTI/EXEC, and a writer pushes a window only when its hash does not
// exist yet, so a window is listed exactly when it has a count, even if
// a write failed half-way. Two sinks (two processes, say) that write the
// same window at the same moment may both push it; one sink writes one
// batch at a time, and in a job each window's key belongs to one
// instance at a time.
package redis
