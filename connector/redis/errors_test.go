package redis_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/redis"
)

// A bad URL is an error naming it (without its password), from every
// entry point, and panics nowhere.
func TestBadURL(t *testing.T) {
	ctx := context.Background()
	cases := []struct{ url, want string }{
		{"http://127.0.0.1:6379", `"http://127.0.0.1:6379"`},
		{"redis://127.0.0.1:6379/notadb", `"redis://127.0.0.1:6379/notadb"`},
		{"redis://u:secret@127.0.0.1:xx/0", `127.0.0.1:xx`},
		{"", "no URL"},
	}
	for _, tc := range cases {
		_, err := redis.NewLookup(ctx, redis.LookupConfig{URL: tc.url})
		mustContain(t, err, tc.want)
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error %q shows the password", err)
		}
		mustContain(t, redis.LoadCampaigns(ctx, tc.url, "", map[string]string{"a": "c"}), tc.want)
		_, err = redis.ReadCampaigns(ctx, tc.url, "")
		mustContain(t, err, tc.want)
		_, err = redis.ReadYSBResults(ctx, tc.url, "")
		mustContain(t, err, tc.want)
		s := redis.YSBResults(redis.ResultsConfig{URL: tc.url})
		mustContain(t, s.Write([]weir.WindowResult[string, int64]{{Key: "c", Value: 1}}), tc.want)
		mustContain(t, s.(weir.EpochSink).EndEpoch(1), tc.want)
		mustContain(t, s.Close(), tc.want)
	}
}

// A server that does not answer is retried for about ten seconds; the
// error names its address.
func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const url = "redis://127.0.0.1:1/0"
	start := time.Now()
	_, err := redis.NewLookup(ctx, redis.LookupConfig{URL: url})
	took := time.Since(start)
	mustContain(t, err, "127.0.0.1:1", "cannot reach")
	if took < 8*time.Second || took > 20*time.Second {
		t.Errorf("gave up after %v; want about 10 s of retries", took)
	}
}

// The retries end with the context, and the sink reports an unreachable
// server at its first write to it.
func TestUnreachableServerContext(t *testing.T) {
	t.Parallel()
	const url = "redis://127.0.0.1:1/0"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := redis.ReadYSBResults(ctx, url, "")
	mustContain(t, err, "127.0.0.1:1", "connection refused", "deadline exceeded")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("gave up after %v; want soon after the context's 500 ms", took)
	}
	s := redis.YSBResults(redis.ResultsConfig{URL: url})
	if err := s.Write([]weir.WindowResult[string, int64]{{Key: "c", Value: 1}}); err != nil {
		t.Fatalf("Write before any flush: %v", err)
	}
	if testing.Short() {
		return
	}
	mustContain(t, s.(weir.EpochSink).EndEpoch(1), "127.0.0.1:1", "cannot reach")
}

// A server that comes up while NewLookup retries is found: here a proxy
// to the local Redis that starts listening 1.5 s late.
func TestLateServer(t *testing.T) {
	t.Parallel()
	url, prefix, c := server(t)
	c.Set(context.Background(), prefix+"k", "v", 0)
	target := strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	done, stopped := make(chan struct{}), make(chan struct{})
	defer func() { close(done); <-stopped }()
	go func() {
		defer close(stopped)
		time.Sleep(1500 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("proxy: %v", err)
			return
		}
		go func() { <-done; ln.Close() }()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	start := time.Now()
	l, err := redis.NewLookup(context.Background(), redis.LookupConfig{URL: "redis://" + addr + "/0", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if took := time.Since(start); took < time.Second {
		t.Fatalf("connected after %v, before the proxy listened", took)
	}
	checkGet(t, l, "k", "v", true)
}

// A server that answers with an error (here: a password it does not
// have) is not retried; the error names the address, not the password.
func TestServerRefuses(t *testing.T) {
	url, _, _ := server(t)
	bad := strings.Replace(url, "redis://", "redis://nobody:secret@", 1)
	start := time.Now()
	_, err := redis.NewLookup(context.Background(), redis.LookupConfig{URL: bad})
	mustContain(t, err, "127.0.0.1:6379", "refused PING", "nobody:xxxxx@")
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error %q shows the password", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("gave up after %v; an error reply is not worth retrying", took)
	}
}
