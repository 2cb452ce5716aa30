package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteChrome writes t in the Chrome trace event format (JSON, read by
// Perfetto and chrome://tracing): a complete event ("ph":"X") per
// activity, with pid the process and tid the worker, named by its
// operator for Processing, Alignment and CheckpointIO and by its kind
// otherwise; a flow ("ph":"s" at the Send's start, "ph":"f" bound to the
// Recv that starts where it ends) per message edge; and the names of
// processes and workers as metadata. Times are microseconds from the
// trace's first event.
func WriteChrome(w io.Writer, t *Trace) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var origin int64
	for i, e := range t.Events {
		if i == 0 || e.Start < origin {
			origin = e.Start
		}
	}
	us := func(b []byte, ns int64) []byte { return strconv.AppendFloat(b, float64(ns-origin)/1e3, 'f', 3, 64) }
	first := true
	emit := func(b []byte) {
		if first {
			bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[` + "\n")
			first = false
		} else {
			bw.WriteString(",\n")
		}
		bw.Write(b)
	}
	procs := map[int]bool{}
	for i, wk := range t.Workers {
		if !procs[wk.Process] {
			procs[wk.Process] = true
			emit(fmt.Appendf(nil, `{"ph":"M","name":"process_name","pid":%d,"args":{"name":"process %d"}}`, wk.Process, wk.Process))
		}
		emit(fmt.Appendf(nil, `{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":%s}}`,
			wk.Process, i, quote(fmt.Sprintf("%s#%d", wk.Name, wk.Instance))))
	}
	var b []byte
	for _, e := range t.Events {
		name := e.Kind.String()
		if (e.Kind == Processing || e.Kind == Alignment || e.Kind == CheckpointIO) && int(e.Op) < len(t.Ops) {
			name = t.Ops[e.Op]
		}
		b = fmt.Appendf(b[:0], `{"ph":"X","name":%s,"cat":"%s","pid":%d,"tid":%d,"ts":`, quote(name), e.Kind, t.process(e.Worker), e.Worker)
		b = us(b, e.Start)
		b = append(b, `,"dur":`...)
		b = strconv.AppendFloat(b, float64(max(e.End-e.Start, 0))/1e3, 'f', 3, 64)
		emit(append(b, '}'))
	}
	msgs, _ := Match(t.Events)
	for id, m := range msgs {
		s, r := t.Events[m.Send], t.Events[m.Recv]
		b = fmt.Appendf(b[:0], `{"ph":"s","name":"message","cat":"message","id":%d,"pid":%d,"tid":%d,"ts":`, id, t.process(s.Worker), s.Worker)
		emit(append(us(b, s.Start), '}'))
		b = fmt.Appendf(b[:0], `{"ph":"f","bp":"e","name":"message","cat":"message","id":%d,"pid":%d,"tid":%d,"ts":`, id, t.process(r.Worker), r.Worker)
		emit(append(us(b, r.Start), '}'))
	}
	if first {
		bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[`)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func (t *Trace) process(w uint32) int {
	if int(w) < len(t.Workers) {
		return t.Workers[w].Process
	}
	return t.Process
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
