package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// committed moves the start of parts to the offsets the source's group
// committed for them, where it has.
func (r *reader[T]) committed(ctx context.Context, parts []int32) error {
	fetched, err := r.kadm.FetchOffsets(ctx, r.in.cfg.Group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil // a group that never committed
	}
	if err != nil {
		return fmt.Errorf("group %s: %w", r.in.cfg.Group, err)
	}
	for _, p := range parts {
		o, ok := fetched.Lookup(r.topic(), p)
		if !ok {
			continue
		}
		if o.Err != nil {
			return fmt.Errorf("group %s, partition %d: %w", r.in.cfg.Group, p, o.Err)
		}
		if o.At >= 0 {
			r.next[p] = o.At
		}
	}
	return nil
}

// groupReader is the reader of a source with a Group: only it is
// acknowledged (a reader without one is spared the positions the job
// would take for it).
type groupReader[T any] struct{ *reader[T] }

// Acknowledge implements weir.Acknowledged: it commits the position's
// offsets as the group's. It may run while the reader reads, and after
// Close (then through a client of its own).
func (g groupReader[T]) Acknowledge(pos []byte) error {
	r := g.reader
	p, err := decodePosition(pos)
	if err != nil {
		return fmt.Errorf("kafka: topic %s: %w", r.topic(), err)
	}
	offsets := kadm.Offsets{}
	for _, pp := range p.parts {
		offsets.AddOffset(p.topic, pp.part, pp.next, -1)
	}
	if len(offsets) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.in.cfg.connect())
	defer cancel()
	r.ackMu.Lock()
	defer r.ackMu.Unlock()
	adm := r.kadm
	if r.closed {
		cl, err := r.in.cfg.dial()
		if err != nil {
			return err
		}
		defer cl.Close()
		adm = kadm.NewClient(cl)
	}
	resp, err := adm.CommitOffsets(ctx, r.in.cfg.Group, offsets)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("kafka: %s: committing topic %s's offsets to group %s: %w", r.in.cfg.where(), p.topic, r.in.cfg.Group, err)
	}
	return nil
}
