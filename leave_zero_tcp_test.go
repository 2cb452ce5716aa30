package weir_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// tcpPeers returns n addresses on the loopback that were free a moment
// ago.
func tcpPeers(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// A process 0 started again, as a member, while the elastic job it left
// runs on (a pod restarted by its StatefulSet) finds the job running
// and fails before it opens the checkpoints the job writes, saying why;
// the job runs on to the plain count.
func TestProcessZeroAgainRefused(t *testing.T) {
	in := wordsInput(15000)
	peers := tcpPeers(t, 3)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := func(p int) []weir.JobOption {
		return []weir.JobOption{weir.Workers(2), weir.BatchInterval(20 * time.Millisecond), weir.Cluster(p, peers, "secret"),
			weir.ElasticCluster(3), weir.Checkpoints(dir, 3, 3)}
	}
	jobs := make([]*weir.Job, 3)
	outs := make([]*kept[wordCount], 3)
	errs := make([]error, 3)
	done := make([]chan struct{}, 3)
	var wg sync.WaitGroup
	for p := range jobs {
		jobs[p] = weir.NewJob("again", opts(p)...)
		outs[p] = wordCountEverywhere(jobs[p], in, 6, nil)
		done[p] = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[p])
			errs[p] = jobs[p].Run(ctx)
		}()
	}
	for jobs[1].Metrics().Records < 1000 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := jobs[1].Leave(0); err != nil {
		t.Fatal(err)
	}
	<-done[0]
	if errs[0] != nil {
		t.Fatalf("process 0, which left: %v", errs[0])
	}
	again := weir.NewJob("again", opts(0)...)
	wordCountEverywhere(again, in, 6, nil)
	began := time.Now()
	err := again.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "runs already without process 0") {
		t.Errorf("process 0 started again: %v; want it refused, the job running without it", err)
	}
	t.Logf("refused in %v", time.Since(began))
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", p, err)
		}
	}
	var all []wordCount
	for _, o := range outs {
		all = append(all, o.recs...)
	}
	checkWordCounts(t, in, all)
}
