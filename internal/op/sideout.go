package op

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/progress"
)

// SideOutput names a second output of a keyed process function, of
// records of type X (Flink's OutputTag). A function declares the side
// outputs it emits to in its Sides; Side takes one as a stream.
type SideOutput[X any] struct{ name string }

// NewSideOutput makes a side output named name, unique among the side
// outputs of one function.
func NewSideOutput[X any](name string) SideOutput[X] { return SideOutput[X]{name: name} }

// Name is the side output's name.
func (o SideOutput[X]) Name() string { return o.name }

// Emit outputs x on the side output, with the event time of c's
// Timestamp. Records emitted to a side output that no Side took are
// dropped, since nothing reads them; emitting to one that the function
// does not declare fails the job.
func (o SideOutput[X]) Emit(c SideEmitter, x X) {
	buf, ts := c.sideOf(o.name)
	if s, ok := buf.(*sideOut[X]); ok {
		s.add(x, ts)
		return
	}
	c.sideMiss(o.name, reflect.TypeFor[X](), buf)
}

// SideTag is a declared side output of any record type: a SideOutput.
type SideTag interface {
	sideName() string
	sideType() reflect.Type
	newSide(out any, size int, timed bool, err *error) sideSink
}

func (o SideOutput[X]) sideName() string       { return o.name }
func (o SideOutput[X]) sideType() reflect.Type { return reflect.TypeFor[X]() }

// newSide makes an instance's buffer of the side output, which pushes to
// out, or drops records if out is nil (no Side took it).
func (o SideOutput[X]) newSide(out any, size int, timed bool, err *error) sideSink {
	s := &sideOut[X]{timed: timed, size: size, err: err}
	if out != nil {
		s.out = out.(dataflow.Pusher[X])
	}
	return s
}

// SideEmitter is what SideOutput.Emit emits through: a *ProcessContext.
type SideEmitter interface {
	sideOf(name string) (buf any, ts int64)
	sideMiss(name string, t reflect.Type, found any)
}

// sideSlot is one declared side output of an instance.
type sideSlot struct {
	name string
	buf  sideSink
}

type sideSink interface {
	flush() error
	mark(m progress.Marker) error
}

// sideOut gathers an instance's records of one side output into a batch.
type sideOut[X any] struct {
	out   dataflow.Pusher[X] // nil: no Side took it
	b     dataflow.Batch[X]
	timed bool
	size  int
	err   *error // the instance's
}

func (s *sideOut[X]) add(x X, ts int64) {
	if s.out == nil {
		return
	}
	s.b.V = append(s.b.V, x)
	if s.timed {
		s.b.Ts = append(s.b.Ts, ts)
	}
	if len(s.b.V) >= s.size {
		if err := s.flush(); err != nil && *s.err == nil {
			*s.err = err
		}
	}
}

func (s *sideOut[X]) flush() error { return pushOut(s.out, &s.b) }

func (s *sideOut[X]) mark(m progress.Marker) error {
	if s.out == nil {
		return nil
	}
	return s.out.Mark(m)
}

func (c *ProcessContext[K, S, U]) sideOf(name string) (any, int64) {
	for i := range c.p.sides {
		if s := &c.p.sides[i]; s.name == name {
			return s.buf, c.ts
		}
	}
	return nil, c.ts
}

func (c *ProcessContext[K, S, U]) sideMiss(name string, t reflect.Type, found any) {
	if found == nil {
		c.p.fail(fmt.Errorf("weir: %s: its function emits to side output %q, which it does not declare in Sides", c.p.name, name))
		return
	}
	c.p.fail(fmt.Errorf("weir: %s: its function emits %v to side output %q, which it declares for another type", c.p.name, t, name))
}

// sideReg is what an operator's output stream knows of its side
// outputs: those its function declares, and the output port of each that
// Side took.
type sideReg struct {
	node  *dataflow.Node
	decl  []SideTag
	port  map[string]int
	timed bool
}

// newSideReg checks the side outputs that node n's function declares.
func newSideReg(j *dataflow.Graph, n *dataflow.Node, decl []SideTag, timed bool) *sideReg {
	seen := map[string]bool{}
	for _, d := range decl {
		switch name := d.sideName(); {
		case name == "":
			j.Fail(fmt.Errorf("weir: %s: a side output in Sides has no name", n.Name))
		case seen[name]:
			j.Fail(fmt.Errorf("weir: %s: side output %q is declared twice in Sides", n.Name, name))
		default:
			seen[name] = true
		}
	}
	return &sideReg{node: n, decl: decl, port: map[string]int{}, timed: timed}
}

// slots makes an instance's side outputs: declared ones, pushing to the
// consumers of the ports Side made (outs by port).
func (r *sideReg) slots(outs []any, size int, err *error) []sideSlot {
	var s []sideSlot
	for _, d := range r.decl {
		var out any
		if port, ok := r.port[d.sideName()]; ok {
			out = outs[port]
		}
		s = append(s, sideSlot{name: d.sideName(), buf: d.newSide(out, size, r.timed, err)})
	}
	return s
}

// Side returns the records that the function of the operator whose
// output is s emitted to side output o: s must be the output of a
// KeyedProcess or CoProcess whose function declares o in its Sides. The
// side stream has the event times of the records' Timestamp.
func Side[X, U any](s Stream[U], o SideOutput[X]) Stream[X] {
	j := s.job
	r := s.sides
	if r == nil {
		j.Fail(fmt.Errorf("weir: Side(%q): the stream is not the output of a KeyedProcess or CoProcess", o.name))
		return Stream[X]{job: j}
	}
	var names []string
	for _, d := range r.decl {
		names = append(names, fmt.Sprintf("%q", d.sideName()))
		if d.sideName() != o.name {
			continue
		}
		if _, ok := d.(SideOutput[X]); !ok {
			j.Fail(fmt.Errorf("weir: Side(%q): %s declares side output %q of %v, not %v", o.name, r.node.Name, o.name, d.sideType(), reflect.TypeFor[X]()))
			return Stream[X]{job: j}
		}
		port, ok := r.port[o.name]
		if !ok {
			port = len(r.node.Ports)
			r.node.Ports = append(r.node.Ports, func(outs []any) any { return dataflow.Combine[X](outs) })
			r.port[o.name] = port
		}
		return Stream[X]{job: j, node: r.node, port: port, timed: r.timed}
	}
	what := "none"
	if len(names) > 0 {
		what = strings.Join(names, ", ")
	}
	j.Fail(fmt.Errorf("weir: Side(%q): %s declares no side output %q in its function's Sides (it declares %s)", o.name, r.node.Name, o.name, what))
	return Stream[X]{job: j}
}
