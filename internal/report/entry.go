package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Suite names a benchmark suite: the weir bench command whose lines it
// gathers.
type Suite string

// The suites of a full report.
const (
	Nexmark   Suite = "nexmark"
	YSB       Suite = "ysb"
	Skew      Suite = "skew"
	Fission   Suite = "fission"
	Transport Suite = "transport"
)

// Suites are the suites a report shows, in order. Lines of other jobs
// (such as ysb-json) are shown as they are, after them.
var Suites = []Suite{Nexmark, YSB, Skew, Fission, Transport}

// Kind says what an entry holds.
type Kind string

// The kinds of entry.
const (
	// KindMachine describes the machine the runs of a results file ran on.
	KindMachine Kind = "machine"
	// KindResult is one JSON line a benchmark printed, with its command.
	KindResult Kind = "result"
	// KindMissing is a command that failed (having printed results or
	// not), printed nothing, or was not run: weir has no such benchmark.
	KindMissing Kind = "missing"
)

// Entry is one line of a results file.
type Entry struct {
	Kind  Kind  `json:"kind"`
	Suite Suite `json:"suite,omitempty"`
	// Command is the exact command line that printed Result (or failed);
	// "" when it is not known (a line copied from a benchmark's output).
	Command string `json:"command,omitempty"`
	// WallSeconds is how long Command ran, as the report's runner saw it.
	WallSeconds float64        `json:"wall_seconds,omitempty"`
	Result      map[string]any `json:"result,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Machine     *Machine       `json:"machine,omitempty"`
	// File and Line say where the entry was read ("", 0: not read).
	File string `json:"-"`
	Line int    `json:"-"`
}

// MarshalLine returns e as one JSON line, newline included, as Read reads it.
func (e Entry) MarshalLine() ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Read reads a results file of JSON lines. A line is either an entry (an
// object with "kind", as MarshalLine writes them) or a line as a weir
// bench command prints it, whose suite its fields tell ("query":
// nexmark; "simulate": skew; otherwise "job") and whose command is
// unknown. Blank lines are skipped. name names the file in errors, which
// give the line: "results.jsonl:3: ...".
func Read(r io.Reader, name string) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []Entry
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		e.File, e.Line = name, n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

func parseLine(line []byte) (Entry, error) {
	var obj map[string]any
	if err := json.Unmarshal(line, &obj); err != nil {
		return Entry{}, fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := obj["kind"]; !ok {
		s, err := suiteOf(obj)
		return Entry{Kind: KindResult, Suite: s, Result: obj}, err
	}
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return Entry{}, fmt.Errorf("not an entry: %w", err)
	}
	switch e.Kind {
	case KindMachine:
		if e.Machine == nil {
			return Entry{}, errors.New(`a machine entry without "machine"`)
		}
	case KindResult:
		if e.Suite == "" || e.Result == nil {
			return Entry{}, errors.New(`a result entry needs "suite" and "result"`)
		}
	case KindMissing:
		if e.Suite == "" {
			return Entry{}, errors.New(`a missing entry needs "suite"`)
		}
	default:
		return Entry{}, fmt.Errorf("unknown kind %q (want machine, result or missing)", e.Kind)
	}
	return e, nil
}

// suiteOf tells the suite of a line a benchmark printed.
func suiteOf(obj map[string]any) (Suite, error) {
	if _, ok := obj["query"].(string); ok {
		return Nexmark, nil
	}
	if sim, _ := obj["simulate"].(bool); sim {
		return Skew, nil
	}
	if job, _ := obj["job"].(string); job != "" {
		return Suite(job), nil
	}
	return "", errors.New(`neither an entry (no "kind") nor a benchmark's line (no "job" or "query")`)
}

// num returns m[key] as a number.
func num(m map[string]any, key string) (float64, bool) {
	v, ok := m[key].(float64)
	return v, ok
}

// str returns m[key] as a string, "" if it is none.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
