package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/ui"
)

// serveUI serves the dashboard of job on addr until stop is called. The
// listener is open when it returns, so a port taken is an error at start.
func serveUI(addr string, job *weir.Job) (stop func(), err error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--ui: %w", err)
	}
	srv := &http.Server{Handler: ui.Handler(job), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "weir: dashboard: %v\n", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "weir: dashboard at http://%s/\n", l.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, nil
}
