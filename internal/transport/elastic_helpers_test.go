package transport

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// elasticMesh is a test's elastic mesh of processes over TCP on
// loopback: the slots' addresses, and the process in each slot (nil:
// none).
type elasticMesh struct {
	t     *testing.T
	addrs []string
	lns   []net.Listener // not yet taken by a process
	nets  []Elastic
	edit  func(slot int, c *Config) // changes each process's config, if set
}

// newElasticMesh reserves n slots' addresses.
func newElasticMesh(t *testing.T, n int) *elasticMesh {
	lns, addrs := listen(t, n)
	m := &elasticMesh{t: t, addrs: addrs, lns: lns, nets: make([]Elastic, n)}
	t.Cleanup(func() {
		for _, ln := range m.lns {
			if ln != nil {
				ln.Close()
			}
		}
		for _, nw := range m.nets {
			if nw != nil {
				nw.Close()
			}
		}
	})
	return m
}

// config is testConfig for slot i of the mesh, elastic, on the slot's
// reserved listener or (if that was taken) its address again.
func (m *elasticMesh) config(i int) Config {
	c := testConfig(i, m.addrs, m.lns[i])
	m.lns[i] = nil
	c.Elastic = true
	if m.edit != nil {
		m.edit(i, &c)
	}
	return c
}

// dial runs Dial for the configs at once and returns the networks and
// errors by config.
func (m *elasticMesh) dial(cfgs []Config) ([]Elastic, []error) {
	nets := make([]Elastic, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for k, cfg := range cfgs {
		wg.Go(func() {
			nw, err := Dial(context.Background(), cfg)
			if err == nil {
				nets[k] = nw.(Elastic)
				m.t.Cleanup(func() { nw.Close() })
			}
			errs[k] = err
		})
	}
	wg.Wait()
	return nets, errs
}

// start starts the processes of slots together (Members) and fails the
// test if one fails.
func (m *elasticMesh) start(slots ...int) {
	m.t.Helper()
	cfgs := make([]Config, len(slots))
	for k, i := range slots {
		cfgs[k] = m.config(i)
		cfgs[k].Members = slots
	}
	nets, errs := m.dial(cfgs)
	for k, i := range slots {
		if errs[k] != nil {
			m.t.Fatalf("Dial(slot %d of %v) = %v", i, slots, errs[k])
		}
		m.nets[i] = nets[k]
	}
}

// joinConfig is the config of a process joining in slot i through the
// process in slot contact.
func (m *elasticMesh) joinConfig(i, contact int) Config {
	c := m.config(i)
	c.Join = []string{m.addrs[contact]}
	return c
}

// join has processes join, in slots[k] through contacts[k], at once, and
// fails the test if one fails.
func (m *elasticMesh) join(slots, contacts []int) {
	m.t.Helper()
	cfgs := make([]Config, len(slots))
	for k, i := range slots {
		cfgs[k] = m.joinConfig(i, contacts[k])
	}
	nets, errs := m.dial(cfgs)
	for k, i := range slots {
		if errs[k] != nil {
			m.t.Fatalf("Dial(slot %d joining through %d) = %v", i, contacts[k], errs[k])
		}
		m.nets[i] = nets[k]
	}
}

// present returns the networks of the slots, by slot order, as Networks.
func (m *elasticMesh) present(slots ...int) []Network {
	nets := make([]Network, len(slots))
	for k, i := range slots {
		nets[k] = m.nets[i]
	}
	return nets
}

// waitMembers waits until every process of slots has them all as
// members.
func waitMembers(t *testing.T, nets []Elastic, slots []int) {
	t.Helper()
	for _, i := range slots {
		for deadline := time.Now().Add(10 * time.Second); !slices.Equal(nets[i].Members(), slots); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("slot %d: Members() = %v; want %v", i, nets[i].Members(), slots)
			}
		}
	}
}

// nextEvents reads n events of nw, failing the test if they do not come.
func nextEvents(t *testing.T, nw Elastic, n int) []Event {
	t.Helper()
	var evs []Event
	for range n {
		select {
		case e, ok := <-nw.Events():
			if !ok {
				t.Fatalf("Events() closed after %v; want %d events", evs, n)
			}
			evs = append(evs, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("Events() = %v; want %d events", evs, n)
		}
	}
	return evs
}

// exchangeSlots is exchange between the processes in slots.
func exchangeSlots(t *testing.T, nets []Elastic, slots []int, chans []uint32, frames int) {
	t.Helper()
	ns := make([]Network, len(nets))
	for i, nw := range nets {
		if nw != nil {
			ns[i] = nw
		}
	}
	exchangeAmong(t, ns, slots, chans, frames)
}

// recvEOF checks that r ends with io.EOF, now.
func recvEOF(r Receiver) error {
	if p, err := r.Recv(); err != io.EOF {
		return fmt.Errorf("Recv() = %d bytes, %v; want io.EOF", len(p), err)
	}
	return nil
}

// slotMesh is an elastic mesh of either implementation, for tests that
// run over both.
type slotMesh interface {
	// start starts the processes of slots together.
	start(slots ...int)
	// join has processes join at once, in slots[k] through the process
	// in contacts[k] (TCP).
	join(slots, contacts []int)
	// net returns the process in slot i.
	net(i int) Elastic
}

func (m *elasticMesh) net(i int) Elastic { return m.nets[i] }

// localSlotMesh is a slotMesh of LocalSlots.
type localSlotMesh struct {
	t    *testing.T
	l    *LocalSlots
	nets []Elastic
}

func newLocalSlotMesh(t *testing.T, n int) *localSlotMesh {
	m := &localSlotMesh{t: t, l: NewLocalSlots(n), nets: make([]Elastic, n)}
	t.Cleanup(func() {
		for _, nw := range m.nets {
			if nw != nil {
				nw.Close()
			}
		}
	})
	return m
}

func (m *localSlotMesh) start(slots ...int) { m.join(slots, nil) }

func (m *localSlotMesh) join(slots, _ []int) {
	m.t.Helper()
	errs := make([]error, len(slots))
	var wg sync.WaitGroup
	for k, i := range slots {
		wg.Go(func() {
			m.nets[i], errs[k] = m.l.Join(i, testSettings)
		})
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			m.t.Fatalf("Join(%d) = %v", slots[k], err)
		}
	}
}

func (m *localSlotMesh) net(i int) Elastic { return m.nets[i] }

// slotMeshes are the implementations the elastic tests run over.
var slotMeshes = []struct {
	name string
	make func(t *testing.T, n int) slotMesh
}{
	{"tcp", func(t *testing.T, n int) slotMesh { return newElasticMesh(t, n) }},
	{"local", func(t *testing.T, n int) slotMesh { return newLocalSlotMesh(t, n) }},
}

// nets returns the processes of m in every slot, nil where none is.
func netsOf(m slotMesh, n int) []Elastic {
	nets := make([]Elastic, n)
	for i := range nets {
		nets[i] = m.net(i)
	}
	return nets
}
