package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// elasticLaunch is how launch starts an elastic job: over slots
// addresses, the processes of the slots past -n joining after joinAfter;
// with scale, launch starts and stops processes by what the job's
// autoscaler says it needs.
type elasticLaunch struct {
	slots     int
	joinAfter time.Duration
	scale     bool
}

func (el elasticLaunch) check(n int) error {
	switch {
	case el.slots != 0 && el.slots <= n:
		return fmt.Errorf("--slots %d: must be more than the %d processes that start the job", el.slots, n)
	case el.joinAfter < 0:
		return fmt.Errorf("--join-after %v: must not be negative", el.joinAfter)
	case el.joinAfter > 0 && el.slots == 0:
		return errors.New("--join-after: give --slots, the slots the job has (the others join)")
	case el.scale && el.slots == 0:
		return errors.New("--elastic: give --slots, the most processes the job may have (the -n start it, the others join and leave as it needs)")
	case el.scale && el.joinAfter > 0:
		return errors.New("--elastic: the job says when processes join; drop --join-after")
	}
	return nil
}

// args are the flags process i of n starting ones takes in an elastic
// job: --members, --join for the processes that join, and --elastic
// (SIGTERM makes a process leave) when launch stops processes itself.
func (el elasticLaunch) args(i, n int, peers []string) []string {
	if el.slots == 0 {
		return nil
	}
	a := []string{"--members", strconv.Itoa(n)}
	if i >= n {
		a = append(a, "--join", peers[0])
	}
	if el.scale {
		a = append(a, "--elastic")
	}
	return a
}

// procTable is the processes of one attempt of launch, by slot: those
// running, those asked to leave, and what starts another.
type procTable struct {
	exe        string
	args       []string
	peers      []string
	secret     string
	n          int
	el         elasticLaunch
	st         *launchStop
	mu         sync.Mutex // procs, leaving; and serializes output lines
	procs      []*exec.Cmd
	leaving    []bool
	ended      []atomic.Bool
	running    int
	exits      chan procExit
	needs      chan need // what the job's autoscaler says it needs (with --elastic)
	wg         sync.WaitGroup
	lastReport string
}

type procExit struct {
	i   int
	err error
}

// need is a line of the job's autoscaler: the processes it needs, and
// those that took part in the round it sized.
type need struct {
	more       bool // "start more processes", else "fewer processes would do"
	n, running int
}

// start starts the process of slot i.
func (t *procTable) start(i int) error {
	c := exec.Command(t.exe, append(append(append([]string(nil), t.args...), "--process", strconv.Itoa(i), "--peers", strings.Join(t.peers, ",")), t.el.args(i, t.n, t.peers)...)...)
	c.Env = append(os.Environ(), "WEIR_SECRET="+t.secret)
	c.SysProcAttr = childAttr()
	stdout, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := c.StderrPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("process %d: %w", i, err)
	}
	t.mu.Lock()
	t.procs[i] = c
	t.leaving[i] = false
	t.ended[i].Store(false)
	t.running++
	fmt.Fprintf(os.Stderr, "weir launch: process %d pid %d\n", i, c.Process.Pid)
	t.mu.Unlock()
	if t.st.stopping() {
		c.Process.Signal(syscall.SIGTERM) // a signal came as it started
	}
	prefix := fmt.Sprintf("[%d] ", i)
	outPrefix := prefix
	if i == 0 {
		outPrefix = ""
	}
	// Wait closes the pipes: it must follow the last read of them.
	var copied sync.WaitGroup
	copied.Add(2)
	t.wg.Add(2)
	go copyLines(&copied, &t.wg, &t.mu, os.Stdout, stdout, outPrefix, nil)
	go copyLines(&copied, &t.wg, &t.mu, os.Stderr, stderr, prefix, t.hear)
	go func() {
		copied.Wait()
		err := c.Wait()
		t.ended[i].Store(true)
		t.exits <- procExit{i, err}
	}()
	return nil
}

// exited records that the process of slot i has ended.
func (t *procTable) exited(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running--
	t.leaving[i] = false
}

// live is how many processes run.
func (t *procTable) live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running
}

// signalAll sends sig to every process that runs.
func (t *procTable) signalAll(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, c := range t.procs {
		if c != nil && !t.ended[i].Load() {
			c.Process.Signal(sig)
		}
	}
}

// stopAll asks every running process to stop, and kills those that have
// not after a few seconds.
func (t *procTable) stopAll() {
	t.signalAll(syscall.SIGTERM)
	go func() {
		time.Sleep(5 * time.Second)
		t.signalAll(syscall.SIGKILL)
	}()
}

// needLine is what a process's autoscaler says when more processes are
// needed, or fewer would do: the processes it needs, and those that
// took part in the round it sized.
var needLine = regexp.MustCompile(`(start more processes|fewer processes would do)\b.*\bneed=(\d+) processes=(\d+)`)

// hear reads a line of a process's standard error, and passes on what
// the job needs when it says so.
func (t *procTable) hear(line []byte) {
	if t.needs == nil {
		return
	}
	m := needLine.FindSubmatch(line)
	if m == nil {
		return
	}
	n, err1 := strconv.Atoi(string(m[2]))
	running, err2 := strconv.Atoi(string(m[3]))
	if err1 == nil && err2 == nil {
		select {
		case t.needs <- need{more: string(m[1]) == "start more processes", n: n, running: running}:
		default: // a later line says it again
		}
	}
}

// scaleTo starts processes in the lowest free slots, or asks the highest
// to leave (never process 0), until as many take part as nd needs
// (within the slots). A line about a round sized when another number of
// processes took part than take part now (it came late, or the
// processes changed since) is passed over: its need is relative to
// those.
func (t *procTable) scaleTo(nd need) {
	t.mu.Lock()
	defer t.mu.Unlock()
	need := min(max(nd.n, 1), len(t.procs))
	var staying, free []int
	for i, c := range t.procs {
		switch {
		case c != nil && !t.ended[i].Load() && !t.leaving[i]:
			staying = append(staying, i)
		case c == nil || t.ended[i].Load():
			free = append(free, i)
		}
	}
	if nd.running != len(staying) || nd.more != (need > len(staying)) {
		return
	}
	if report := fmt.Sprintf("%d/%d", need, len(staying)); need != len(staying) && report != t.lastReport {
		fmt.Fprintf(os.Stderr, "weir launch: the job needs %d processes; %d take part\n", need, len(staying))
		t.lastReport = report
	}
	for len(staying) > need && staying[len(staying)-1] != 0 {
		i := staying[len(staying)-1]
		staying = staying[:len(staying)-1]
		fmt.Fprintf(os.Stderr, "weir launch: process %d leaves the job\n", i)
		t.leaving[i] = true
		t.procs[i].Process.Signal(syscall.SIGTERM)
	}
	for len(staying) < need && len(free) > 0 {
		i := free[0]
		free = free[1:]
		staying = append(staying, i)
		t.mu.Unlock()
		err := t.start(i)
		t.mu.Lock()
		if err != nil {
			fmt.Fprintf(os.Stderr, "weir launch: %v\n", err)
			return
		}
	}
}
