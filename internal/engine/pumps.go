package engine

import (
	"errors"
	"math"

	"github.com/weirstream/weir/internal/exchange"
	"github.com/weirstream/weir/internal/migrate"
	"github.com/weirstream/weir/internal/progress"
	"github.com/weirstream/weir/internal/runtime"
)

// livingPump runs pump, which ends after a final marker or the
// receiver's retirement, again and again: between a sender and a
// receiver that live by their key groups (lives.go) either may take part
// again over the same channel. It is a listener: the runtime does not
// wait for it once its tasks have ended, and the network's close at the
// process's end ends it. An in-order close of the sender's process
// (exchange.ErrSilentClose) is no error while the sender takes no part
// (it never joined, or it retired) or once its final marker reached the
// receiver's current life; otherwise it goes to ended (endedSender).
func livingPump(pump func(done <-chan struct{}) error, ended func(error) error, sender, receiver *runtime.Retirement) func(done <-chan struct{}) error {
	return func(done <-chan struct{}) error {
		// The receiver's and the sender's join epochs when the sender's
		// last part ended.
		gotR, gotS := uint64(migrate.Never), uint64(migrate.Never)
		for {
			err := pump(done)
			switch {
			case err == nil:
				gotR, gotS = receiver.Joins(), sender.Joins()
				continue
			case !errors.Is(err, exchange.ErrSilentClose):
				return err
			case sender.Joins() == migrate.Never || sender.From() != migrate.Never || receiver.Joins() == gotR && sender.Joins() == gotS:
				return nil
			}
			return ended(err)
		}
	}
}

// endedSender ends a remote sender's slot of a receiver's inbox whose
// process closed its end of the mesh in order before sending the
// receiver anything (exchange.ErrSilentClose, err). That happens to a
// receiver that joined after the sender ended (its final marker was
// held for the join) when the sender's process ended altogether before
// it could send it again: its runtime, which held it, is gone. The slot
// gets what that runtime would have sent: a final marker as the end of
// the receiver's join epoch (its own, or this process's, joined, if it
// joined the running job; at least the sender's). In any other case err
// stands: a sender that retires (its process left) is left out by the
// receiver's inbox and its pump ends with its final marker, and a
// receiver present from the start got the sender's final marker, so an
// in-order close that meets either is no end of input (a process that
// failed at its start, say).
func endedSender(slot runtime.Outlet, sender, receiver *runtime.Retirement, joined uint64, err error) error {
	at := max(receiver.Joins(), joined)
	if sender.From() != migrate.Never || at == 0 || at == migrate.Never {
		return err
	}
	at = max(at, sender.Joins())
	return slot.Mark(progress.Marker{Epoch: progress.Epoch(at), Final: true, Watermark: math.MaxInt64})
}
