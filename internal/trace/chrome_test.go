package trace

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestChrome(t *testing.T) {
	tr := &Trace{Processes: 2, Ops: []string{`map "x"`, "sink"},
		Workers: []Worker{{Name: `map "x"`, Op: 0}, {Name: "sink", Process: 1, Op: 1}},
		Events: []Event{
			{Worker: 0, Kind: Processing, Op: 0, Start: 1000, End: 5000},
			{Worker: 0, Kind: Send, Start: 5000, End: 5500, Channel: 3, Seq: 0},
			{Worker: 1, Kind: WaitInput, Op: 1, Start: 1000, End: 6000},
			{Worker: 1, Kind: Recv, Op: 1, Start: 6000, End: 6200, Channel: 3, Seq: 0},
			{Worker: 1, Kind: Processing, Op: 1, Start: 6200, End: 9000},
		}}
	var b bytes.Buffer
	if err := WriteChrome(&b, tr); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name, Cat, Bp string
			Pid, Tid          int
			Ts, Dur           float64
			ID                *int
			Args              map[string]string
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	var complete, meta int
	flows := map[int][]string{}
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			ev := tr.Events[complete]
			complete++
			if e.Tid != int(ev.Worker) || e.Pid != tr.Workers[ev.Worker].Process || e.Cat != ev.Kind.String() ||
				e.Ts != float64(ev.Start-1000)/1e3 || e.Dur != float64(ev.End-ev.Start)/1e3 {
				t.Errorf("complete event %+v is not %+v", e, ev)
			}
			if ev.Kind == Processing && e.Name != tr.Ops[ev.Op] {
				t.Errorf("processing named %q, want its operator %q", e.Name, tr.Ops[ev.Op])
			}
		case "s", "f":
			if e.ID == nil {
				t.Fatalf("flow event without id: %+v", e)
			}
			flows[*e.ID] = append(flows[*e.ID], e.Ph+string(rune('0'+e.Pid)))
			if e.Ph == "f" && (e.Bp != "e" || e.Ts != 5) {
				t.Errorf("flow end %+v: want bp e at the recv's start, 5 µs", e)
			}
		case "M":
			meta++
		default:
			t.Errorf("unexpected event %+v", e)
		}
	}
	if complete != len(tr.Events) || meta != 4 || len(flows) != 1 || flows[0][0] != "s0" || flows[0][1] != "f1" {
		t.Errorf("%d complete events, %d metadata, flows %v", complete, meta, flows)
	}
}
