package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func launchCmd() *cobra.Command {
	var n, restarts int
	var el elasticLaunch
	cmd := &cobra.Command{
		Use:   "launch -n N -- WEIR-ARGS...",
		Short: "Run a distributed job as N local processes",
		Long: `Starts N processes of this binary on this host, each with the given
arguments plus --process I and --peers listing every process's address
(free ports on 127.0.0.1), and a shared secret in WEIR_SECRET (a random one
unless it is set). Process 0's standard output passes through as it is
(the job's summary); every other line, and every standard error line, is
prefixed with [I]. When one process fails, the others are stopped and
launch exits with that process's error, unless --restart allows it to
start the job again (with checkpoints, it resumes from the latest one).
Each process's pid is printed on standard error when it starts.

With --slots M (more than N), the job is elastic: the addresses cover M
slots, the N processes start it with --members N, and with --join-after D
the processes of the other slots start D later with --join, joining the
running job (each takes key groups and source shares from the others).

  weir launch -n 3 -- run ysb --events 1000000 --out counts.csv
  weir launch -n 2 --slots 3 --join-after 5s -- run wordcount --in src --out counts.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return fmt.Errorf("-n %d: must be at least 1", n)
			}
			if restarts < 0 {
				return fmt.Errorf("--restart %d: must be at least 0", restarts)
			}
			if err := el.check(n); err != nil {
				return err
			}
			// Stopping launch stops the job, and nothing starts it again:
			// the first signal asks every process to stop cleanly, a
			// second kills them.
			sig := make(chan os.Signal, 2)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			st := &launchStop{}
			go st.watch(sig)
			for attempt := 0; ; attempt++ {
				err := launch(n, args, st, el)
				if st.stopping() {
					if err != nil {
						return fmt.Errorf("stopped by a signal: %w", err)
					}
					fmt.Fprintln(os.Stderr, "weir launch: stopped by a signal; not starting the job again")
					return nil
				}
				if err == nil || attempt >= restarts {
					return err
				}
				fmt.Fprintf(os.Stderr, "weir launch: %v; starting the job again (%d of %d)\n", err, attempt+1, restarts)
			}
		},
	}
	cmd.Flags().IntVarP(&n, "processes", "n", 2, "number of processes")
	cmd.Flags().IntVar(&restarts, "restart", 0, "start the job again up to this many times after a process fails")
	cmd.Flags().IntVar(&el.slots, "slots", 0, "an elastic job of this many slots: the -n processes start it (--members), the others may join")
	cmd.Flags().DurationVar(&el.joinAfter, "join-after", 0, "with --slots: start the processes of the other slots this long after the first, joining the running job")
	return cmd
}

func launch(n int, args []string, st *launchStop, el elasticLaunch) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	peers, err := freeAddrs(max(n, el.slots))
	if err != nil {
		return err
	}
	secret := os.Getenv("WEIR_SECRET")
	if secret == "" {
		b := make([]byte, 16)
		rand.Read(b)
		secret = hex.EncodeToString(b)
	}
	total := n
	if el.joinAfter > 0 {
		total = el.slots
	}
	var (
		mu    sync.Mutex // serializes output lines
		procs = make([]*exec.Cmd, total)
		ended = make([]atomic.Bool, total)
		wg    sync.WaitGroup
	)
	type exit struct {
		i   int
		err error
	}
	exits := make(chan exit, total)
	started := 0
	for i := range total {
		if i == n && !el.wait(st) {
			break
		}
		if st.stopping() {
			break // a signal came: start no more, and stop those started
		}
		c := exec.Command(exe, append(append(append([]string(nil), args...), "--process", strconv.Itoa(i), "--peers", strings.Join(peers, ",")), el.args(i, n, peers)...)...)
		c.Env = append(os.Environ(), "WEIR_SECRET="+secret)
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
			stopAll(procs, ended)
			return fmt.Errorf("process %d: %w", i, err)
		}
		procs[i] = c
		started++
		mu.Lock()
		fmt.Fprintf(os.Stderr, "weir launch: process %d pid %d\n", i, c.Process.Pid)
		mu.Unlock()
		prefix := fmt.Sprintf("[%d] ", i)
		outPrefix := prefix
		if i == 0 {
			outPrefix = ""
		}
		// Wait closes the pipes: it must follow the last read of them.
		var copied sync.WaitGroup
		copied.Add(2)
		wg.Add(2)
		go copyLines(&copied, &wg, &mu, os.Stdout, stdout, outPrefix)
		go copyLines(&copied, &wg, &mu, os.Stderr, stderr, prefix)
		go func() {
			copied.Wait()
			err := c.Wait()
			ended[i].Store(true)
			exits <- exit{i, err}
		}()
	}
	st.attach(procs, ended)
	defer st.detach()
	var first error
	for range started {
		e := <-exits
		if e.err != nil && first == nil {
			first = fmt.Errorf("process %d: %w", e.i, e.err)
			if !st.stopping() {
				stopAll(procs, ended)
			}
		}
	}
	wg.Wait()
	return first
}

// freeAddrs returns n addresses on 127.0.0.1 whose ports were free a
// moment ago.
func freeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// stopAll asks every running process to stop, and kills those that have
// not after a few seconds.
func stopAll(procs []*exec.Cmd, ended []atomic.Bool) {
	for i, c := range procs {
		if c != nil && !ended[i].Load() {
			c.Process.Signal(syscall.SIGTERM)
		}
	}
	go func() {
		time.Sleep(5 * time.Second)
		for i, c := range procs {
			if c != nil && !ended[i].Load() {
				c.Process.Kill()
			}
		}
	}()
}

func copyLines(copied, wg *sync.WaitGroup, mu *sync.Mutex, w io.Writer, r io.Reader, prefix string) {
	defer wg.Done()
	defer copied.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		mu.Lock()
		fmt.Fprintf(w, "%s%s\n", prefix, sc.Bytes())
		mu.Unlock()
	}
	io.Copy(io.Discard, r) // a line too long to scan: keep the process from blocking
}

// launchStop is what a signal to launch does to the processes of the
// current attempt.
type launchStop struct {
	mu      sync.Mutex
	signals int
	procs   []*exec.Cmd
	ended   []atomic.Bool
}

func (s *launchStop) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signals > 0
}

// watch forwards the first signal to the processes as SIGTERM (a clean
// stop: each takes a final checkpoint if it has checkpoints) and kills
// them at the second.
func (s *launchStop) watch(sig <-chan os.Signal) {
	for range sig {
		s.mu.Lock()
		s.signals++
		first := s.signals == 1
		procs, ended := s.procs, s.ended
		s.mu.Unlock()
		if first {
			fmt.Fprintln(os.Stderr, "weir launch: stopping the job cleanly (a second signal kills it)")
		}
		for i, c := range procs {
			if c != nil && !ended[i].Load() {
				if first {
					c.Process.Signal(syscall.SIGTERM)
				} else {
					c.Process.Kill()
				}
			}
		}
	}
}

// attach makes the attempt's processes the ones a signal stops, and
// stops them if a signal came while they started.
func (s *launchStop) attach(procs []*exec.Cmd, ended []atomic.Bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs, s.ended = procs, ended
	if s.signals > 0 {
		for i, c := range procs {
			if c != nil && !ended[i].Load() {
				c.Process.Signal(syscall.SIGTERM)
			}
		}
	}
}

func (s *launchStop) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs, s.ended = nil, nil
}

// elasticLaunch is how launch starts an elastic job: over slots
// addresses, the processes of the slots past -n joining after joinAfter.
type elasticLaunch struct {
	slots     int
	joinAfter time.Duration
}

func (el elasticLaunch) check(n int) error {
	switch {
	case el.slots != 0 && el.slots <= n:
		return fmt.Errorf("--slots %d: must be more than the %d processes that start the job", el.slots, n)
	case el.joinAfter < 0:
		return fmt.Errorf("--join-after %v: must not be negative", el.joinAfter)
	case el.joinAfter > 0 && el.slots == 0:
		return errors.New("--join-after: give --slots, the slots the job has (the others join)")
	}
	return nil
}

// args are the flags process i of n starting ones takes in an elastic
// job: --members, and --join for the processes that join.
func (el elasticLaunch) args(i, n int, peers []string) []string {
	if el.slots == 0 {
		return nil
	}
	a := []string{"--members", strconv.Itoa(n)}
	if i >= n {
		a = append(a, "--join", peers[0])
	}
	return a
}

// wait waits joinAfter before the joining processes start; it reports
// false if a signal came meanwhile.
func (el elasticLaunch) wait(st *launchStop) bool {
	deadline := time.Now().Add(el.joinAfter)
	for time.Now().Before(deadline) {
		if st.stopping() {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return !st.stopping()
}
