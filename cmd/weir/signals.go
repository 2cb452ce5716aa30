package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/weirstream/weir"
)

// jobSignals makes SIGINT and SIGTERM stop a job cleanly: the first
// closes the returned channel (weir.StopOn: with checkpoints the job runs
// on to the next checkpoint and stops there), the second cancels the
// context, which stops it at once. With --elastic in a distributed job,
// the first makes this process leave the job instead (weir.LeaveOn).
// release undoes it.
func jobSignals(parent context.Context, jf *jobFlags) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	leaving := jf.elastic && jf.cluster.resolved.Processes() > 1
	if leaving {
		jf.leaveOn = stop
	} else {
		jf.stopOn = stop
	}
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-sig:
				n++
				if n == 1 {
					if leaving {
						fmt.Fprintf(os.Stderr, "weir: %v: this process leaves the job (again to stop it at once)\n", s)
					} else if jf.ckptDir != "" {
						fmt.Fprintf(os.Stderr, "weir: %v: stopping at the next checkpoint (again to stop at once)\n", s)
					} else {
						fmt.Fprintf(os.Stderr, "weir: %v: stopping (without checkpoints nothing resumes this run)\n", s)
					}
					close(stop)
				} else {
					cancel()
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// stoppedRun reports a job that Run ended with err, if it was stopped by
// a signal: with checkpoints, where it stopped and that the next run
// resumes there (a clean stop, nil error); without, what was not written
// (an error, since nothing resumes it). Any other error is returned as
// it is.
func stoppedRun(err error, job string, m weir.Metrics, jf jobFlags, outputs string) error {
	switch {
	case errors.Is(err, weir.ErrStopped) && jf.ckptDir != "":
		if jf.cluster.leader() {
			fmt.Fprintf(os.Stderr, "%s: stopped cleanly at checkpoint %d after %d records%s; %s not written yet: the same command resumes from %s\n",
				job, m.StoppedAt, m.Records, readSince(m, jf), outputs, jf.ckptDir)
		}
		return nil
	case errors.Is(err, weir.ErrStopped), errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: stopped after %d records%s, before its end and without checkpoints: %s not written", job, m.Records, jf.cluster.share(), outputs)
	}
	return err
}
