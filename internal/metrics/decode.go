package metrics

import (
	"fmt"

	"github.com/weirstream/weir/internal/bin"
)

// Decode decodes a ProcessStats that Encode made. It refuses a message
// of another version, one cut short or with bytes after it, and counts
// out of range; it allocates no more than the message's length allows.
func Decode(b []byte) (ProcessStats, error) {
	var ps ProcessStats
	if len(b) < 4 || string(b[:2]) != encMagic {
		return ps, fmt.Errorf("metrics: not a summary")
	}
	if b[2] != encVersion {
		return ps, fmt.Errorf("metrics: summary version %d, want %d", b[2], encVersion)
	}
	if b[3]&^1 != 0 {
		return ps, fmt.Errorf("metrics: unknown flags %#x at offset 3", b[3])
	}
	ps.Final = b[3]&1 != 0
	r := &reader{Decoder: bin.Decoder{B: b[4:]}, size: len(b)}
	names := make([]string, r.count(maxStrings))
	for k := range names {
		names[k] = r.str()
	}
	if p := r.u(); p > maxList {
		r.fail(fmt.Errorf("metrics: process %d out of range", p))
	} else {
		ps.Process = int(p)
	}
	ps.Time, ps.Epoch, ps.Watermark, ps.WatermarkLag, ps.Records = r.i(), uint64(r.i()), r.i(), r.d(), r.i()
	ps.Latency = LatencyStats{Count: r.i(), P50: r.d(), P90: r.d(), P99: r.d(), P999: r.d(), Max: r.d(), Sum: r.d()}
	if n := r.count(maxList); n > 0 {
		ps.Instances = make([]InstanceStats, n)
		for k := range ps.Instances {
			ps.Instances[k] = decodeInstance(r, names)
		}
	}
	if n := r.count(maxList); n > 0 {
		ps.Peers = make([]PeerStats, n)
		for k := range ps.Peers {
			ps.Peers[k] = PeerStats{Peer: int(r.i()), BytesOut: r.i(), FramesOut: r.i(), BytesIn: r.i(), FramesIn: r.i(), CreditWait: r.d()}
		}
	}
	if n := r.count(maxList); n > 0 {
		ps.Checkpoints = make([]CheckpointStats, n)
		for k := range ps.Checkpoints {
			ps.Checkpoints[k] = CheckpointStats{ID: uint64(r.i()), Epoch: uint64(r.i()), Start: r.i(), Duration: r.d(),
				Alignment: r.d(), Bytes: r.i(), Complete: r.i() != 0}
		}
	}
	if n := r.count(maxList); n > 0 {
		ps.Loads = make([]KeyGroupLoad, n)
		for k := range ps.Loads {
			ps.Loads[k] = KeyGroupLoad{Operator: r.name(names), Counts: r.list(maxGroups)}
		}
	}
	if r.err == nil && len(r.B) != 0 {
		r.fail(fmt.Errorf("metrics: %d bytes after the summary", len(r.B)))
	}
	if r.err != nil {
		return ProcessStats{}, r.err
	}
	return ps, nil
}

func decodeInstance(r *reader, names []string) InstanceStats {
	in := InstanceStats{Operator: r.name(names), Instance: int(r.i()), Process: int(r.i())}
	flags := r.i() // bit 0 Source, bit 1 Running, bit 2 KnowsBacklog
	in.Source, in.Running, in.KnowsBacklog = flags&1 != 0, flags&2 != 0, flags&4 != 0
	in.RecordsIn, in.RecordsOut, in.BytesIn, in.BytesOut = r.i(), r.i(), r.i(), r.i()
	in.Useful, in.Idle, in.Backpressure, in.Lifetime, in.Queue, in.Backlog = r.d(), r.d(), r.d(), r.d(), int(r.i()), r.i()
	in.Epoch, in.Watermark, in.KeyGroupLo, in.KeyGroups = uint64(r.i()), r.i(), int(r.i()), r.list(maxGroups)
	return in
}
