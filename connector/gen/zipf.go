package gen

import (
	"fmt"
	"math"
	"time"

	"github.com/weirstream/weir"
)

// Zipf generates records whose keys follow a Zipf distribution: key k (the
// rank, from 0) has probability ∝ 1/(k+1)^S, so key 0 is the most frequent.
// It is the usual workload for skew: hot keys, hot partitions.
//
// Splitting, pacing and event times follow the same rules as YSB.
type Zipf struct {
	// Keys is the number of distinct keys, at least 1.
	Keys int
	// S is the exponent, any finite S > 0.
	S float64
	// Events is the total number of records across all instances; 0 is
	// unbounded.
	Events int64
	// Rate is the total number of records per second across all
	// instances; 0 emits as fast as possible.
	Rate float64
	// Seed determines the record sequence.
	Seed uint64
	// BatchSize is the most records one Read returns (default 1024).
	BatchSize int
	// Duration stops each instance this long after its first Read; 0 is
	// unbounded.
	Duration time.Duration
	// StartTime and EventTimeRate give the synthetic event times when Rate
	// is 0, as for YSB (defaults: the wall clock at Open, and 1,000,000
	// records per second).
	StartTime     int64
	EventTimeRate float64
}

// ZipfRecord is one record of the Zipf generator.
type ZipfRecord struct {
	// Key is the Zipf-distributed rank in [0, Keys).
	Key uint64
	// EventTime is in milliseconds since the Unix epoch.
	EventTime int64
	// Value is the record's global sequence number: unique across
	// instances and, with Events > 0, exactly the numbers 0..Events-1, so a
	// sink can check that every record arrived exactly once.
	Value int64
}

// Open implements weir.Input. The alias table is built once and shared by
// the instances that are open at the same time.
func (z Zipf) Open(ctx weir.SourceContext) (weir.Reader[ZipfRecord], error) {
	if err := checkZipf(z.Keys, z.S); err != nil {
		return nil, fmt.Errorf("gen.Zipf: %w", err)
	}
	t := timing{
		events: z.Events, rate: z.Rate, duration: z.Duration,
		startTime: z.StartTime, eventTimeRate: z.EventTimeRate, batchSize: z.BatchSize,
	}
	s, err := newSchedule("gen.Zipf", ctx, t)
	if err != nil {
		return nil, err
	}
	s.identify(kindZipf, t, z.Seed, uint64(z.Keys), math.Float64bits(z.S))
	sampler := sharedZipfSampler(z.Keys, z.S)
	key := streamKey(z.Seed, domainZipf)
	return newReader(s, func(s *schedule, b []ZipfRecord) {
		for i := range b {
			seq := s.seqAt(i)
			r := newStream(key, seq)
			b[i] = ZipfRecord{Key: sampler.sample(r.Uint64()), EventTime: s.eventTime(seq), Value: int64(seq)}
		}
	}), nil
}
