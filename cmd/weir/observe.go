package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/prom"
	"github.com/weirstream/weir/ui"
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

// refuse refuses the flags in a command that runs no job (what says
// what it does instead).
func (f *observeFlags) refuse(what string) error {
	for _, a := range []struct{ flag, addr string }{{"--metrics", f.metrics}, {"--ui", f.ui}} {
		if a.addr != "" {
			return fmt.Errorf("%s %s: watches a running job, and %s", a.flag, a.addr, what)
		}
	}
	return nil
}

// run runs job, serving what the flags ask for while it runs.
func (f *observeFlags) run(ctx context.Context, job *weir.Job) error {
	stop, err := f.start(job)
	if err != nil {
		return err
	}
	defer stop()
	return job.Run(ctx)
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

// serveMetrics serves Prometheus's /metrics and /metrics.json for job on
// addr (package prom), and the rescale control POST /rescale (package ui).
func serveMetrics(addr string, job *weir.Job) (func(), error) {
	mux := http.NewServeMux()
	mux.Handle("/", prom.Handler(job))
	mux.Handle("/rescale", ui.RescaleHandler(job))
	return serveHTTP("--metrics", addr, "/metrics", mux)
}

// serveUI serves the dashboard of job on addr, with its rescale control
// (package ui).
func serveUI(addr string, job *weir.Job) (func(), error) {
	return serveHTTP("--ui", addr, "/", ui.Handler(job))
}

// serveHTTP serves h on addr until the returned func is called, and says
// on stderr where (the port chosen, for port 0). The listener is open when
// it returns, so a port taken is an error at start; stop lets requests in
// flight finish (for up to 2 s).
func serveHTTP(flag, addr, path string, h http.Handler) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "weir: %s: %v\n", flag, err)
		}
	}()
	fmt.Fprintf(os.Stderr, "weir: %s serving http://%s%s\n", flag, l.Addr(), path)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, nil
}
