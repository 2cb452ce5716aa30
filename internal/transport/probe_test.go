package transport

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A process of slot 1 probes process 0 of an elastic job of members
// 0 and 1: "starting" while process 0 waits for slot 1, and one that
// asks to join then is turned away (neither disturbs process 0's Dial:
// it completes once slot 1 starts), "runs" once the
// members' mesh is complete; a probe with other settings is refused as
// another job's, and an address where nothing listens is an error.
func TestProbe(t *testing.T) {
	m := newElasticMesh(t, 2)
	cfg0, cfg1 := m.config(0), m.config(1)
	cfg0.Members, cfg1.Members = []int{0, 1}, []int{0, 1}
	probe := testConfig(1, m.addrs, nil)
	ctx := context.Background()
	started := make(chan error, 1)
	go func() {
		nw, err := Dial(ctx, cfg0)
		if err == nil {
			t.Cleanup(func() { nw.Close() })
		}
		started <- err
	}()
	var running bool
	var err error
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if running, err = Probe(ctx, probe, m.addrs[0]); err == nil {
			break
		}
	}
	if err != nil || running {
		t.Fatalf("probe while process 0 starts: %v, %v; want false (starting)", running, err)
	}
	// A process of slot 1 that asks to join now is turned away.
	early := testConfig(1, m.addrs, listenAny(t))
	early.Elastic, early.Join = true, []string{m.addrs[0]}
	if nw, err := Dial(ctx, early); err == nil || !strings.Contains(err.Error(), "start with them") {
		if nw != nil {
			nw.Close()
		}
		t.Fatalf("a member's process joining while the job starts: %v; want it told to start with the members", err)
	}
	nw1, err := Dial(ctx, cfg1)
	if err != nil {
		t.Fatalf("slot 1 after the probes: %v", err)
	}
	defer nw1.Close()
	if err := <-started; err != nil {
		t.Fatalf("process 0's Dial after a probe: %v", err)
	}
	if running, err := Probe(ctx, probe, m.addrs[0]); err != nil || !running {
		t.Fatalf("probe of the running job: %v, %v; want true", running, err)
	}
	other := probe
	other.Settings = []Setting{{Name: "--plan", Value: "another"}}
	if _, err := Probe(ctx, other, m.addrs[0]); err == nil || !strings.Contains(err.Error(), "another job") && !strings.Contains(err.Error(), "plan") {
		t.Errorf("probe with other settings: %v; want it refused as another job's", err)
	}
	free, _ := listen(t, 1)
	addr := free[0].Addr().String()
	free[0].Close()
	if _, err := Probe(ctx, probe, addr); err == nil {
		t.Error("probe of an address where nothing listens: no error")
	}
}
