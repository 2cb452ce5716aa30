package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
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
With --elastic instead, launch starts and stops processes as the job's
autoscaler (--autoscale) says: when it says more processes are needed
("start more processes ... need=K"), launch starts processes in the
lowest free slots, which join, until K take part; when it says fewer
would do ("fewer processes would do ... need=K"), launch sends SIGTERM to
the highest (never process 0), which leave the job (--elastic is passed
on: their key groups and shares move to the others), until K take part.

  weir launch -n 3 -- run ysb --events 1000000 --out counts.csv
  weir launch -n 2 --slots 3 --join-after 5s -- run wordcount --in src --out counts.csv
  weir launch -n 1 --slots 3 --elastic -- run wordcount --input src --out counts.csv --rate 600 --cost 1ms --autoscale --partitioning hash`,
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
	cmd.Flags().BoolVar(&el.scale, "elastic", false, "with --slots: start processes that join, and stop processes that leave, as the job's autoscaler says it needs")
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
	slots := max(n, el.slots)
	t := &procTable{exe: exe, args: args, peers: peers, secret: secret, n: n, el: el,
		procs: make([]*exec.Cmd, slots), leaving: make([]bool, slots), ended: make([]atomic.Bool, slots),
		exits: make(chan procExit, 4*slots)}
	if el.scale {
		t.needs = make(chan need, 16)
	}
	st.attach(t)
	defer st.detach()
	defer t.wg.Wait()
	for i := range n {
		if st.stopping() {
			break // a signal came: start no more, and stop those started
		}
		if err := t.start(i); err != nil {
			t.stopAll()
			return err
		}
	}
	joiners := time.After(el.joinAfter)
	if el.joinAfter == 0 || el.slots == 0 {
		joiners = nil
	}
	var first error
	for t.live() > 0 {
		select {
		case e := <-t.exits:
			t.exited(e.i)
			if e.err != nil && first == nil {
				first = fmt.Errorf("process %d: %w", e.i, e.err)
				if !st.stopping() {
					t.stopAll()
				}
			}
		case <-joiners:
			joiners = nil
			for i := n; i < el.slots && first == nil && !st.stopping(); i++ {
				if err := t.start(i); err != nil && first == nil {
					first = err
					t.stopAll()
				}
			}
		case nd := <-t.needs:
			if first == nil && !st.stopping() {
				t.scaleTo(nd)
			}
		}
	}
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

// copyLines copies r's lines to w, each after prefix, and hands each to
// hear, if set.
func copyLines(copied, wg *sync.WaitGroup, mu *sync.Mutex, w io.Writer, r io.Reader, prefix string, hear func([]byte)) {
	defer wg.Done()
	defer copied.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		mu.Lock()
		fmt.Fprintf(w, "%s%s\n", prefix, sc.Bytes())
		mu.Unlock()
		if hear != nil {
			hear(sc.Bytes())
		}
	}
	io.Copy(io.Discard, r) // a line too long to scan: keep the process from blocking
}

// launchStop is what a signal to launch does to the processes of the
// current attempt.
type launchStop struct {
	mu      sync.Mutex
	signals int
	t       *procTable
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
		t := s.t
		s.mu.Unlock()
		if first {
			fmt.Fprintln(os.Stderr, "weir launch: stopping the job cleanly (a second signal kills it)")
		}
		if t != nil {
			if first {
				t.signalAll(syscall.SIGTERM)
			} else {
				t.signalAll(syscall.SIGKILL)
			}
		}
	}
}

// attach makes the attempt's processes the ones a signal stops; those
// started once a signal came are stopped as they start.
func (s *launchStop) attach(t *procTable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t = t
	t.st = s
}

func (s *launchStop) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t = nil
}
