// Package gen provides built-in generator sources, for benchmarks, tests
// and demos: YSB (the ad events of the Yahoo Streaming Benchmark), Zipf
// (keys with tunable skew) and Nexmark (the persons, auctions and bids of
// the Nexmark benchmark). Each is a weir.Input; the runtime opens one
// reader per instance of the source.
//
// Invariants shared by the generators:
//
//   - Deterministic. Every record is a function of the seed and its global
//     sequence number (0, 1, 2, ...) and of nothing else, apart from event
//     times taken from the wall clock (with Rate > 0, or StartTime left 0;
//     see below). The same seed, instance and parallelism always give the
//     same sequence.
//   - Split without overlap. Instance i of p emits the records whose global
//     sequence numbers are i, i+p, i+2p, ...; with a bounded total (Events)
//     the shares differ by at most one record. The union over the p
//     instances is exactly the records one instance would emit.
//   - Event time. With Rate 0 the records come as fast as the consumer reads
//     them and event times are synthetic: record seq has the time
//     StartTime + seq*1000/EventTimeRate ms, so the data are reproducible
//     when StartTime is set, and the instances' event times advance
//     together. With Rate > 0 each instance emits Rate/p records per second
//     and stamps record k of the instance (from 0) with the wall clock at
//     Open plus k/(Rate/p) seconds, in ms: the time it is due, as pacing
//     starts at the first Read, which normally follows Open at once. It is
//     about when the record is generated, unless the consumer falls behind;
//     either way the event times do not depend on when Read is called.
//   - Smooth pacing. A paced reader returns what is due (never more than
//     BatchSize records), sleeping at most 5 ms; if nothing is due by then
//     it returns an empty batch and a nil error.
//   - End. Read returns io.EOF once the instance's share of Events is done
//     or Duration has passed since its first Read.
//   - Checkpoints. Every reader implements weir.Seekable. After Seek, on a
//     reader opened with the same settings and SourceContext, the reader
//     emits the records that followed the position, with the same values
//     and event times (the position keeps the origin of the event times,
//     even one taken from the wall clock). Pacing starts again at the first
//     Read after Seek: with Rate > 0, the event times of the records after
//     the position then stay behind the wall clock by the time the job was
//     down. Duration counts on from the time spent before the position
//     (as of the Read that returned the batch it is in), not from zero:
//     the run generates for about Duration in all.
//   - Rescaling. Every reader also implements weir.Rescalable: SeekSplits
//     resumes, with another parallelism, from the positions of all the old
//     readers. New instance i of p' emits, in order, the records of its
//     share (i, i+p', ...) that no old reader had emitted, with the same
//     values. Its event times are t0 + seq*1000/R ms, R being Rate when
//     paced and EventTimeRate otherwise and t0 the earliest origin of the
//     old readers: with Rate 0 and StartTime set, the times records always
//     have. Pacing starts again at the first Read, at Rate/p' per reader;
//     Duration counts on from the longest time spent of the old readers.
//   - Cheap. A reader reuses one batch buffer, and strings come from pools
//     built once per process, so Read does not allocate in steady state.
//
// Usage, in a job:
//
//	src := gen.YSB{Rate: 100_000, Duration: time.Minute, Seed: 1}
//	ads := src.Ads() // ad id → campaign id, for the join
//	events := weir.Source(job, "ysb", src, weir.Parallelism(4))
//
// or read directly:
//
//	r, err := gen.Zipf{Keys: 1000, S: 1.2, Events: 1e6}.Open(weir.SourceContext{Instance: 0, Parallelism: 1})
//	if err != nil {
//		return err
//	}
//	defer r.Close()
//	for {
//		batch, err := r.Read()
//		if err == io.EOF {
//			break
//		} else if err != nil {
//			return err
//		}
//		for _, rec := range batch {
//			counts[rec.Key]++
//		}
//	}
//
// For benchmarks that must not measure generation, YSBEvents builds events
// in memory, and YSBEvent.AppendJSON writes them in the YSB wire format.
package gen
