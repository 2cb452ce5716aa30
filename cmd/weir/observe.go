package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
)

// observeFlags are the flags that watch a running job from outside:
// --metrics serves Prometheus's /metrics, --ui the dashboard.
type observeFlags struct {
	metrics string
	ui      string
}

func (f *observeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics on `ADDR` (host:port; process i of a job listens on port+i)")
	fs.StringVar(&f.ui, "ui", "", "serve the dashboard on `ADDR` (host:port; process i of a job listens on port+i)")
}

// check refuses addresses that cannot be listened on, before the job
// starts.
func (f *observeFlags) check() error {
	for _, a := range []struct{ flag, addr string }{{"--metrics", f.metrics}, {"--ui", f.ui}} {
		if a.addr == "" {
			continue
		}
		if _, err := offsetAddr(a.addr, 0); err != nil {
			return fmt.Errorf("%s: %w", a.flag, err)
		}
	}
	return nil
}

// start starts the servers the flags ask for, for job, which must be
// built (its process index is known); stop closes them.
func (f *observeFlags) start(job *weir.Job) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, s := range []struct {
		addr  string
		serve func(string, *weir.Job) (func(), error)
	}{{f.metrics, serveMetrics}, {f.ui, serveUI}} {
		if s.addr == "" {
			continue
		}
		addr, err := offsetAddr(s.addr, job.Process())
		if err != nil {
			stop()
			return nil, err
		}
		st, err := s.serve(addr, job)
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, st)
	}
	return stop, nil
}

// offsetAddr is addr with i added to its port: under weir launch, every
// process is given the same flags, and process i listens on port+i. Port
// 0 stays 0 (any free port).
func offsetAddr(addr string, i int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("bad port %q in %q", port, addr)
	}
	if p == 0 {
		return addr, nil
	}
	if p+i > 65535 {
		return "", fmt.Errorf("port %d + process %d is over 65535", p, i)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

var errNotBuilt = errors.New("not built yet")

// serveMetrics serves Prometheus's /metrics for job on addr.
func serveMetrics(addr string, job *weir.Job) (func(), error) { return nil, errNotBuilt }

// serveUI serves the dashboard of job on addr.
