package coord_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
	"github.com/weirstream/weir/internal/coord"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the scripts' expected actions with what the coordinator does")

// The scripts under testdata are traces: each line "> command" steps the
// coordinator (or asks it something), and the lines after it, up to a
// blank line, a comment or the next command, are the actions Ready then
// gives, one a line, or "error: ..." if Step failed. Commands:
//
//	new self=0 procs=2 every=2 keep=2 groups=128 from=0
//	join TASK...
//	report TASK N BLOB...      BLOB: op:keygroup=data (state) or op#instance=data (source)
//	finish TASK BLOB...
//	peer PROCESS N
//	written N ok|superseded|fail MESSAGE
//	complete N yes|no|fail MESSAGE
//	has N PROCESS yes|no|fail MESSAGE
//	progress
//
// go test -run TestScripts -rewrite writes what the coordinator does into
// the scripts, to be read over before it is committed.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := runScript(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if d := firstDiff(string(b), got); d != "" {
				t.Errorf("%s: %s", f, d)
			}
		})
	}
}

// firstDiff describes the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	n := max(len(w), len(g))
	w, g = append(w, make([]string, n-len(w))...), append(g, make([]string, n-len(g))...)
	for i := range n {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\nwant %q\ngot  %q", i+1, w[i], g[i])
		}
	}
	return ""
}

// runScript runs a script and returns it with each command's output
// replaced by what the coordinator did.
func runScript(src string) (string, error) {
	var out strings.Builder
	var c *coord.Coordinator
	inOutput := false
	for i, line := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		cmd, isCmd := strings.CutPrefix(line, "> ")
		switch {
		case isCmd:
		case line == "" || strings.HasPrefix(line, "#"):
			inOutput = false
			out.WriteString(line + "\n")
			continue
		case inOutput:
			continue // an expected line: replaced by what happens
		default:
			return "", fmt.Errorf("line %d: %q is neither a command, a comment nor output", i+1, line)
		}
		out.WriteString(line + "\n")
		inOutput = true
		lines, err := runCommand(&c, strings.Fields(cmd))
		if err != nil {
			return "", fmt.Errorf("line %d: %v", i+1, err)
		}
		for _, l := range lines {
			out.WriteString(l + "\n")
		}
	}
	return out.String(), nil
}

// runCommand runs one command and returns its output lines.
func runCommand(c **coord.Coordinator, f []string) ([]string, error) {
	if len(f) == 0 {
		return nil, errors.New("empty command")
	}
	if f[0] == "new" {
		cfg, err := parseConfig(f[1:])
		if err != nil {
			return nil, err
		}
		*c, err = coord.New(cfg)
		if err != nil {
			return []string{"error: " + err.Error()}, nil
		}
		return nil, nil
	}
	if *c == nil {
		return nil, errors.New("no coordinator: the script starts with new")
	}
	if f[0] == "progress" {
		h, done := (*c).Progress()
		return []string{fmt.Sprintf("progress highest=%d complete=%d written=%d pending=%d idle=%v",
			h, done, (*c).NewestWritten(), (*c).Pending(), (*c).Idle())}, nil
	}
	evs, err := parseEvents(f)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range evs {
		if err := (*c).Step(ev); err != nil {
			lines = append(lines, "error: "+err.Error())
		}
	}
	for _, a := range (*c).Ready() {
		lines = append(lines, a.String())
	}
	(*c).Advance()
	return lines, nil
}

func parseConfig(args []string) (coord.Config, error) {
	v := map[string]uint64{"self": 0, "procs": 1, "every": 1, "keep": 1, "groups": 128, "from": 0}
	for _, a := range args {
		k, s, _ := strings.Cut(a, "=")
		if _, ok := v[k]; !ok {
			return coord.Config{}, fmt.Errorf("unknown setting %s", k)
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return coord.Config{}, fmt.Errorf("%s: %v", a, err)
		}
		v[k] = n
	}
	return coord.Config{Self: int(v["self"]), Processes: int(v["procs"]), Every: v["every"], Keep: int(v["keep"]),
		KeyGroups: int(v["groups"]), From: v["from"]}, nil
}

// parseEvents reads one event command (join takes several tasks).
func parseEvents(f []string) ([]coord.Event, error) {
	num := func(i int) (uint64, error) {
		if i >= len(f) {
			return 0, fmt.Errorf("%s: argument %d missing", f[0], i)
		}
		return strconv.ParseUint(f[i], 10, 64)
	}
	n, err := num(1)
	if err != nil {
		return nil, err
	}
	switch f[0] {
	case "join":
		var evs []coord.Event
		for i := 1; i < len(f); i++ {
			t, err := num(i)
			if err != nil {
				return nil, err
			}
			evs = append(evs, coord.Join{Task: coord.TaskID(t)})
		}
		return evs, nil
	case "report":
		cp, err := num(2)
		if err != nil {
			return nil, err
		}
		st, src, err := parseBlobs(f[3:])
		return []coord.Event{coord.Report{Task: coord.TaskID(n), N: cp, State: st, Sources: src}}, err
	case "finish":
		st, src, err := parseBlobs(f[2:])
		return []coord.Event{coord.Finish{Task: coord.TaskID(n), State: st, Sources: src}}, err
	case "peer":
		cp, err := num(2)
		return []coord.Event{coord.PeerWrote{Process: int(n), N: cp}}, err
	case "written":
		ok, fail, err := outcome(f[2:], "ok", "superseded")
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			return []coord.Event{coord.PartWritten{N: n}}, nil
		case fail == nil: // superseded
			return []coord.Event{coord.PartWritten{N: n, Err: errors.New("checkpoint pruned"), Superseded: true}}, nil
		}
		return []coord.Event{coord.PartWritten{N: n, Err: fail}}, nil
	case "complete":
		ok, fail, err := outcome(f[2:], "yes", "no")
		return []coord.Event{coord.CompleteChecked{N: n, Complete: ok, Err: fail}}, err
	case "has":
		p, err := num(2)
		if err != nil {
			return nil, err
		}
		ok, fail, err := outcome(f[3:], "yes", "no")
		return []coord.Event{coord.PartChecked{N: n, Process: int(p), Has: ok, Err: fail}}, err
	}
	return nil, fmt.Errorf("unknown command %s", f[0])
}

// outcome reads "yes", "no" or "fail MESSAGE" (with yes and no named
// as the command names them): whether yes, and the failure if any.
func outcome(f []string, yes, no string) (bool, error, error) {
	switch {
	case len(f) == 1 && f[0] == yes:
		return true, nil, nil
	case len(f) == 1 && f[0] == no:
		return false, nil, nil
	case len(f) > 1 && f[0] == "fail":
		return false, errors.New(strings.Join(f[1:], " ")), nil
	}
	return false, nil, fmt.Errorf("want %s, %s or fail MESSAGE, not %q", yes, no, f)
}

// parseBlobs reads op:kg=data as a state blob and op#inst=data as a
// source blob.
func parseBlobs(f []string) ([]checkpoint.StateBlob, []checkpoint.SourceBlob, error) {
	var st []checkpoint.StateBlob
	var src []checkpoint.SourceBlob
	for _, b := range f {
		name, data, _ := strings.Cut(b, "=")
		if op, kg, ok := strings.Cut(name, ":"); ok {
			n, err := strconv.ParseUint(kg, 10, 32)
			if err != nil {
				return nil, nil, fmt.Errorf("blob %s: %v", b, err)
			}
			st = append(st, checkpoint.StateBlob{Operator: op, KeyGroup: uint32(n), Data: []byte(data)})
		} else if op, inst, ok := strings.Cut(name, "#"); ok {
			n, err := strconv.Atoi(inst)
			if err != nil {
				return nil, nil, fmt.Errorf("blob %s: %v", b, err)
			}
			src = append(src, checkpoint.SourceBlob{Operator: op, Instance: n, Data: []byte(data)})
		} else {
			return nil, nil, fmt.Errorf("blob %s: want op:keygroup=data or op#instance=data", b)
		}
	}
	return st, src, nil
}
