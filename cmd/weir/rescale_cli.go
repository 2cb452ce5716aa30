package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/ui"
)

// rescaleTimeout bounds one request of weir rescale: the job answers as
// soon as the rescale is announced.
const rescaleTimeout = 30 * time.Second

func rescaleCmd() *cobra.Command {
	var (
		to       int
		leave    int
		strategy string
		gap      int
		perPair  int
	)
	cmd := &cobra.Command{
		Use:   "rescale (--to N | --leave P) ADDR",
		Short: "Rescale a running job's keyed operators to N instances, or make process P leave it",
		Long: `Asks a running job to spread the key groups of its keyed operators over
their first --to instances whose processes take part in the job (one
that has left is passed over), while it runs, and prints the migration
announced: the epochs its steps take force at and the key groups that move.

ADDR is the host:port of the --ui or --metrics server of any of the job's
processes (under weir launch, process i serves port+i); the process asked
announces the rescale to the others. The job can grow to its planned
instances (--workers x processes); start it with --active-instances to
leave some idle at first. weir rescale returns once the rescale is
announced, before its last step.

  weir run ysb --workers 4 --active-instances 2 --ui 127.0.0.1:8080 &
  weir rescale --to 4 127.0.0.1:8080
  weir rescale --to 1 --strategy all-at-once 127.0.0.1:8080

With --leave P instead, process P of a distributed job leaves it: its key
groups move to the other processes' instances (in steps of --strategy),
then its instances end and it exits 0 while the others run on. A job
started with --elastic leaves the same way on SIGTERM to one process.

  weir launch -n 3 -- run ysb --events 0 --ui 127.0.0.1:8080 &
  weir rescale --leave 2 127.0.0.1:8080`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("rescale needs one ADDR, the host:port of the job's --ui or --metrics server (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req := ui.RescaleRequest{Instances: &to, Strategy: strategy, Gap: &gap, PerPair: &perPair}
			if cmd.Flags().Changed("leave") {
				req.Instances, req.Leave = nil, &leave
			}
			if err := checkRescale(cmd, req); err != nil {
				return err
			}
			ans, err := postRescale(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			if req.Leave != nil {
				fmt.Printf("process %d leaves the job from epoch %d (%s): %d key groups move in %d steps, at epochs %d to %d\n",
					leave, ans.Leave, strategy, ans.Moves, ans.Steps, ans.First, ans.Last)
				return nil
			}
			fmt.Printf("rescale to %d instances (%s) announced: %d key groups move in %d steps, at epochs %d to %d\n",
				to, strategy, ans.Moves, ans.Steps, ans.First, ans.Last)
			for _, s := range ans.Sources {
				fmt.Printf("source %s: its shares move at epoch %d\n", s, ans.First)
			}
			for _, s := range ans.KeptSources {
				fmt.Printf("source %s; it keeps its shares\n", s)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&to, "to", 0, "the `N` instances of each keyed operator to spread the key groups over (required)")
	fs.IntVar(&leave, "leave", 0, "the process `P` of a distributed job that leaves it (instead of --to)")
	fs.StringVar(&strategy, "strategy", "batched", "how the key groups move: batched (at most one out of and one into each instance per step), all-at-once or fluid (one per step)")
	fs.IntVar(&gap, "gap", 1, "epochs between two steps")
	fs.IntVar(&perPair, "per-pair", 1, "key groups one batched step may hand between the same two instances")
	return cmd
}

// checkRescale refuses nonsense flags before asking the job.
func checkRescale(cmd *cobra.Command, req ui.RescaleRequest) error {
	switch {
	case cmd.Flags().Changed("to") && cmd.Flags().Changed("leave"):
		return errors.New("--to and --leave together: ask for one at a time")
	case req.Leave != nil && *req.Leave < 0:
		return fmt.Errorf("--leave %d: a process index is at least 0", *req.Leave)
	case req.Leave == nil && !cmd.Flags().Changed("to"):
		return errors.New("--to is required: the number of instances to rescale to (or --leave P)")
	case req.Leave == nil && *req.Instances < 1:
		return fmt.Errorf("--to %d: must be at least 1", *req.Instances)
	case *req.Gap < 1:
		return fmt.Errorf("--gap %d: must be at least 1 epoch", *req.Gap)
	case *req.PerPair < 1:
		return fmt.Errorf("--per-pair %d: must be at least 1 key group", *req.PerPair)
	}
	if _, err := weir.ParseRescaleStrategy(req.Strategy); err != nil {
		return fmt.Errorf("--strategy %s: want batched, all-at-once or fluid", req.Strategy)
	}
	return nil
}

// postRescale posts req to the job serving addr and returns its answer.
func postRescale(ctx context.Context, addr string, req ui.RescaleRequest) (ui.RescaleAnswer, error) {
	var ans ui.RescaleAnswer
	base := strings.TrimSuffix(addr, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		if _, _, err := net.SplitHostPort(base); err != nil {
			return ans, fmt.Errorf("rescale %s: want host:port, the address of the job's --ui or --metrics server (%v)", addr, err)
		}
		base = "http://" + base
	}
	body, err := json.Marshal(req)
	if err != nil {
		return ans, err
	}
	ctx, cancel := context.WithTimeout(ctx, rescaleTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/rescale", bytes.NewReader(body))
	if err != nil {
		return ans, fmt.Errorf("rescale %s: %w", addr, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return ans, fmt.Errorf("rescale %s: nothing answers there (is the job running, with --ui or --metrics at that address?): %v", addr, op.Err)
		}
		return ans, fmt.Errorf("rescale %s: %w", addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return ans, fmt.Errorf("rescale %s: reading the answer: %w", addr, err)
	}
	msg := strings.TrimPrefix(strings.TrimSpace(string(b)), "weir: ")
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.Unmarshal(b, &ans); err != nil {
			return ans, fmt.Errorf("rescale %s: the answer %q is not a migration: %v", addr, msg, err)
		}
		return ans, nil
	case http.StatusConflict:
		return ans, fmt.Errorf("rescale %s: the job refuses: %s", addr, msg)
	case http.StatusBadRequest:
		return ans, fmt.Errorf("rescale %s: the job calls the request bad: %s", addr, msg)
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return ans, fmt.Errorf("rescale %s: %s serves no rescale control: is it a weir job's --ui or --metrics address? (%s)", addr, base, resp.Status)
	}
	return ans, fmt.Errorf("rescale %s: %s: %s", addr, resp.Status, msg)
}
