package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestElasticRefusedJoiners has processes try to join a running mesh of
// slots 0 and 1 that must not: one with another secret, one with other
// settings, one for the slot of a running process, one of a fixed mesh.
// Each fails with the error a fixed mesh gives, and the members run on.
func TestElasticRefusedJoiners(t *testing.T) {
	m := newElasticMesh(t, 4)
	logs := []*syncBuffer{{}, {}}
	m.edit = func(i int, c *Config) {
		if i < 2 {
			c.Logger = slog.New(slog.NewTextHandler(logs[i], nil))
		}
	}
	m.start(0, 1)
	m.edit = nil

	secret := m.joinConfig(2, 0)
	secret.Secret, secret.DialTimeout = "guess", time.Second
	_, err := Dial(context.Background(), secret)
	if err == nil || !strings.Contains(err.Error(), "no mesh within 1s") || !strings.Contains(err.Error(), "wrong secret") || fatal(err) {
		t.Errorf("Dial(another secret) = %v; want no mesh, saying wrong secret", err)
	}

	other := m.joinConfig(3, 1)
	other.Settings = []Setting{{"binary", "0123456789abcdef"}, {"--workers", "3"}}
	_, err = Dial(context.Background(), other)
	want := "transport: peer 1 (" + m.addrs[1] + ") runs another job: --workers is 3 here, 2 there"
	var mm *MismatchError
	if !errors.As(err, &mm) || err.Error() != want {
		t.Errorf("Dial(other settings) = %v; want %s", err, want)
	}

	taken := m.joinConfig(1, 0)
	taken.Listener = listenAny(t)
	_, err = Dial(context.Background(), taken)
	var r *RefusedError
	if !errors.As(err, &r) || !r.ByPeer || !strings.Contains(err.Error(), "slot 1 is taken") {
		t.Errorf("Dial(a running process's slot) = %v; want a refusal saying the slot is taken", err)
	}

	fixed := testConfig(0, []string{"127.0.0.1:1", m.addrs[1]}, listenAny(t))
	_, err = Dial(context.Background(), fixed)
	want = "transport: peer 1 (" + m.addrs[1] + ") runs another job: mesh is fixed here, elastic there"
	if !errors.As(err, &mm) || err.Error() != want {
		t.Errorf("Dial(a fixed mesh's process) = %v; want %s", err, want)
	}

	// The members log the refusals once their handshakes end.
	waitLog(t, logs[0], "wrong secret", 5*time.Second)
	waitLog(t, logs[0], "a second process claims slot 1", 5*time.Second)
	waitLog(t, logs[1], "--workers is 2 here, 3 there", 5*time.Second)
	nets := netsOf(m, 4)
	exchangeSlots(t, nets, []int{0, 1}, []uint32{1, 2}, 50)
	waitMembers(t, nets, []int{0, 1})
	for i := range 2 {
		if err := nets[i].Err(); err != nil {
			t.Errorf("slot %d: Err() = %v; want nil", i, err)
		}
	}
}

// listenAny opens a listener on a free loopback port, for a process
// whose slot's address is taken.
func listenAny(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// TestElasticLocalRefusals joins processes to LocalSlots that must not:
// other settings, a running process's slot, a slot out of range; and
// none after a process aborted. The members run on after the refusals.
func TestElasticLocalRefusals(t *testing.T) {
	m := newLocalSlotMesh(t, 3)
	m.start(0, 1)
	_, err := m.l.Join(2, []Setting{{"binary", "0123456789abcdef"}, {"--workers", "3"}})
	var mm *MismatchError
	if want := "transport: peer 0 (local) runs another job: --workers is 3 here, 2 there"; !errors.As(err, &mm) || err.Error() != want {
		t.Errorf("Join(other settings) = %v; want %s", err, want)
	}
	_, err = m.l.Join(1, testSettings)
	var r *RefusedError
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "slot 1 is taken") {
		t.Errorf("Join(a running process's slot) = %v; want a refusal", err)
	}
	if _, err := m.l.Join(3, nil); err == nil || !strings.Contains(err.Error(), "slot 3 out of range [0, 3)") {
		t.Errorf("Join(3 of 3) = %v; want out of range", err)
	}
	nets := netsOf(m, 3)
	exchangeSlots(t, nets, []int{0, 1}, []uint32{1}, 50)
	waitMembers(t, nets, []int{0, 1})

	nets[1].Abort(errors.New("disk full"))
	<-nets[0].Done()
	want := "transport: peer 1 (local): failed: disk full"
	if err := nets[0].Err(); err == nil || err.Error() != want {
		t.Errorf("Err() after a peer aborted = %v; want %s", err, want)
	}
	if _, err := m.l.Join(2, testSettings); err == nil || !strings.Contains(err.Error(), "the local mesh failed") {
		t.Errorf("Join() after an abort = %v; want the mesh failed", err)
	}
}

// TestElasticLostPeer cuts the connections of a process that joined, as
// a crash would (no close frame): the others fail, naming it.
func TestElasticLostPeer(t *testing.T) {
	m := newElasticMesh(t, 3)
	m.start(0, 1)
	m.join([]int{2}, []int{0})
	nets := netsOf(m, 3)
	waitMembers(t, nets, []int{0, 1, 2})
	exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{1}, 20)
	for _, p := range nets[2].(elasticTCP).el.live() {
		p.conn.(*net.TCPConn).SetLinger(0) // reset, not FIN
		p.conn.Close()
	}
	for i := range 2 {
		within(t, nets[i].Done(), 5*time.Second, "Done of a lost peer")
		err := nets[i].Err()
		var pe *PeerError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "peer 2 ("+m.addrs[2]+"): ") {
			t.Errorf("slot %d: Err() = %v; want a PeerError naming peer 2 (%s)", i, err, m.addrs[2])
		}
	}
}

// TestElasticConcurrentJoins has three processes join two running ones
// at once, through different contacts: all five connect to each other
// and exchange data.
func TestElasticConcurrentJoins(t *testing.T) {
	for _, mk := range slotMeshes {
		t.Run(mk.name, func(t *testing.T) {
			m := mk.make(t, 5)
			m.start(0, 1)
			m.join([]int{2, 3, 4}, []int{0, 1, 0})
			nets := netsOf(m, 5)
			all := []int{0, 1, 2, 3, 4}
			waitMembers(t, nets, all)
			for _, i := range all {
				if evs := nextEvents(t, nets[i], 4); len(evs) != 4 {
					t.Errorf("slot %d: Events() = %v", i, evs)
				}
			}
			exchangeSlots(t, nets, all, []uint32{3, 4}, 50)
		})
	}
}

// TestElasticStartAlone starts the first process of a job alone; others
// join through contact lists that hold their own address and that of a
// free slot: they skip them and join through a running process.
func TestElasticStartAlone(t *testing.T) {
	m := newElasticMesh(t, 4)
	m.start(2)
	for _, j := range []struct{ slot, via int }{{0, 2}, {3, 0}, {1, 3}} {
		c := m.config(j.slot)
		c.Join = []string{m.addrs[j.slot], "127.0.0.1:1", m.addrs[j.via]}
		nets, errs := m.dial([]Config{c})
		if errs[0] != nil {
			t.Fatalf("Dial(slot %d joining) = %v", j.slot, errs[0])
		}
		m.nets[j.slot] = nets[0]
	}
	nets := netsOf(m, 4)
	waitMembers(t, nets, []int{0, 1, 2, 3})
	exchangeSlots(t, nets, []int{0, 1, 2, 3}, []uint32{8}, 50)
}

// TestElasticDialTimeout: a member started together that never comes,
// and contacts that never answer, fail Dial at DialTimeout, naming them.
func TestElasticDialTimeout(t *testing.T) {
	m := newElasticMesh(t, 3)
	c := m.config(0)
	c.Members, c.DialTimeout = []int{0, 1}, 500*time.Millisecond
	_, errs := m.dial([]Config{c})
	// Slot 1's address listens, but nothing answers there.
	want := "transport: process 0: no mesh within 500ms; missing process 1 (" + m.addrs[1] + ")"
	if errs[0] == nil || errs[0].Error() != want {
		t.Errorf("Dial(a member missing) = %v; want %s", errs[0], want)
	}
	c = m.config(2)
	c.Join, c.DialTimeout = []string{"127.0.0.1:1"}, 500*time.Millisecond
	_, errs = m.dial([]Config{c})
	want = "transport: process 2: no mesh within 500ms; no process of the running job let us in at 127.0.0.1:1: "
	if errs[0] == nil || !strings.HasPrefix(errs[0].Error(), want) {
		t.Errorf("Dial(no contact) = %v; want %s...", errs[0], want)
	}
}

// TestElasticLeaveWhileJoining has the process in slot 0 leave while a
// process joins through it (or, if it is gone, through slot 1): nobody
// fails, and the joiner ends up connected to slot 1 alone.
func TestElasticLeaveWhileJoining(t *testing.T) {
	for k := range 5 {
		m := newElasticMesh(t, 3)
		m.start(0, 1)
		c := m.config(2)
		c.Join = []string{m.addrs[0], m.addrs[1]}
		var nets []Elastic
		var errs []error
		left := make(chan error, 1)
		go func() {
			if k > 0 {
				time.Sleep(time.Duration(k) * time.Millisecond) // vary where the join is when 0 leaves
			}
			left <- m.nets[0].Close()
		}()
		nets, errs = m.dial([]Config{c})
		if err := <-left; err != nil {
			t.Errorf("#%d: Close() of slot 0 = %v", k, err)
		}
		if errs[0] != nil {
			t.Fatalf("#%d: Dial(slot 2 joining) = %v", k, errs[0])
		}
		m.nets[2] = nets[0]
		all := netsOf(m, 3)
		waitMembers(t, all, []int{1, 2})
		exchangeSlots(t, all, []int{1, 2}, []uint32{1}, 20)
		for _, i := range []int{1, 2} {
			if err := all[i].Err(); err != nil {
				t.Errorf("#%d: slot %d: Err() = %v; want nil", k, i, err)
			}
		}
	}
}

// TestElasticJoinThroughJoiner has a process join through one that is
// itself joining: its contact lets it in once its own view is complete,
// so its Dial returns connected to all three.
func TestElasticJoinThroughJoiner(t *testing.T) {
	m := newElasticMesh(t, 3)
	m.start(0)
	first, second := m.joinConfig(1, 0), m.joinConfig(2, 1)
	nets, errs := m.dial([]Config{first, second})
	for k, err := range errs {
		if err != nil {
			t.Fatalf("Dial(slot %d joining) = %v", k+1, err)
		}
	}
	if got := nets[1].Members(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("Members() as Dial of slot 2 returned = %v; want [0 1 2]", got)
	}
	m.nets[1], m.nets[2] = nets[0], nets[1]
	all := netsOf(m, 3)
	waitMembers(t, all, []int{0, 1, 2})
	exchangeSlots(t, all, []int{0, 1, 2}, []uint32{1}, 20)
}

// TestElasticTLS joins, leaves and rejoins over mutual TLS.
func TestElasticTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	m := newElasticMesh(t, 3)
	m.edit = func(i int, c *Config) { c.TLS = loadTLS(t, dir, ca, "p"+string(rune('0'+i))) }
	m.start(0, 1)
	m.join([]int{2}, []int{1})
	nets := netsOf(m, 3)
	waitMembers(t, nets, []int{0, 1, 2})
	exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{1, 2}, 50)
	if err := nets[0].Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	waitMembers(t, nets, []int{1, 2})
	m.join([]int{0}, []int{2})
	nets = netsOf(m, 3)
	waitMembers(t, nets, []int{0, 1, 2})
	exchangeSlots(t, nets, []int{0, 1, 2}, []uint32{1, 2}, 50)
}
