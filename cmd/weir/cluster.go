package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/cluster"
	"github.com/weirstream/weir/internal/transport"
)

// clusterFlags place a process in a distributed job (see
// internal/cluster for the order in which sources apply).
type clusterFlags struct {
	process  int
	peers    []string
	hostfile string
	port     int
	secret   string
	resolved cluster.Cluster
	// members and join make the job elastic (ElasticCluster,
	// JoinCluster).
	members int
	join    []string

	meshTimeout            time.Duration
	tlsCert, tlsKey, tlsCA string
	tls                    *tls.Config // loaded from the three files, or nil
}

func (f *clusterFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.process, "process", -1, "this process's index in a distributed job")
	fs.StringSliceVar(&f.peers, "peers", nil, "host:port of every process of the job, by index")
	fs.StringVar(&f.hostfile, "hostfile", "", "file listing host:port of every process, one per line")
	fs.IntVar(&f.port, "port", 7070, "port to listen on under SLURM (plus the task's rank on its node) or Kubernetes")
	fs.StringVar(&f.secret, "secret", "", "secret shared by the job's processes (default $WEIR_SECRET)")
	fs.IntVar(&f.members, "members", 0, "an elastic job: the first `N` processes of --peers start it, the others may join it while it runs (--join)")
	fs.StringSliceVar(&f.join, "join", nil, "join the running elastic job (--members) at `ADDR` (host:port of any of its processes), taking the slot of --process: one past the members, or a member's (not process 0's) whose process left (default, for a process past the members: the other processes' addresses, tried in turn from process 0's)")
	fs.DurationVar(&f.meshTimeout, "mesh-timeout", transport.DefaultDialTimeout, "how long the job's processes wait for each other to connect")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM `FILE` of this process's certificate: with --tls-key and --tls-ca, the job's connections are mutual TLS 1.3")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM `FILE` of the private key of --tls-cert")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM `FILE` of the CA certificates that every process's certificate must chain to")
}

// loadTLS loads the TLS configuration of --tls-cert, --tls-key and
// --tls-ca: all three or none.
func (f *clusterFlags) loadTLS() error {
	var given, missing []string
	for _, fl := range []struct{ name, file string }{{"--tls-cert", f.tlsCert}, {"--tls-key", f.tlsKey}, {"--tls-ca", f.tlsCA}} {
		if fl.file != "" {
			given = append(given, fl.name)
		} else {
			missing = append(missing, fl.name)
		}
	}
	switch len(given) {
	case 0:
		return nil
	case 3:
		c, err := transport.LoadTLS(f.tlsCert, f.tlsKey, f.tlsCA)
		f.tls = c
		return err
	}
	return fmt.Errorf("--tls-cert, --tls-key and --tls-ca go together: %s without %s", strings.Join(given, " and "), strings.Join(missing, " and "))
}

// resolve works out this process's place from the flags and the
// environment.
func (f *clusterFlags) resolve() error {
	in := cluster.Inputs{Process: f.process, Peers: f.peers, Env: os.Getenv, Port: f.port}
	in.Hostname, _ = os.Hostname()
	if f.hostfile != "" {
		b, err := os.ReadFile(f.hostfile)
		if err != nil {
			return err
		}
		in.Hostfile, in.HostfileName = string(b), f.hostfile
	}
	c, err := cluster.Resolve(in)
	if err != nil {
		return err
	}
	if err := f.loadTLS(); err != nil {
		return err
	}
	if f.secret == "" {
		f.secret = os.Getenv("WEIR_SECRET")
	}
	if c.Processes() > 1 && f.secret == "" {
		return fmt.Errorf("a job of %d processes needs a shared secret: --secret or WEIR_SECRET", c.Processes())
	}
	f.resolved = c
	return nil
}

func (f *clusterFlags) options() []weir.JobOption {
	if f.resolved.Processes() <= 1 {
		return nil
	}
	opts := []weir.JobOption{weir.Cluster(f.resolved.Self, f.resolved.Peers, f.secret), weir.MeshTimeout(f.meshTimeout)}
	if f.tls != nil {
		opts = append(opts, weir.ClusterTLS(f.tls))
	}
	if f.members != 0 {
		opts = append(opts, weir.ElasticCluster(f.members))
	}
	join := f.join
	if f.members > 0 && f.resolved.Self >= f.members && len(join) == 0 {
		// A process of a slot past the members (a new pod of a scaled
		// StatefulSet, whose arguments are its siblings') joins the
		// running job through the first of the others that answers,
		// process 0 first.
		join = otherPeers(f.resolved)
	}
	if len(join) > 0 {
		opts = append(opts, weir.JoinCluster(join...))
	}
	return opts
}

// otherPeers are the addresses of c's other processes, in slot order.
func otherPeers(c cluster.Cluster) []string {
	var out []string
	for i, a := range c.Peers {
		if i != c.Self {
			out = append(out, a)
		}
	}
	return out
}

// single refuses a distributed run of a command that runs in one process.
func (f *clusterFlags) single(what string) error {
	if n := f.resolved.Processes(); n > 1 {
		return fmt.Errorf("%s runs in one process, not %d", what, n)
	}
	return nil
}

// share says, in a summary of process 0's figures, that they are its
// share of a distributed job's input.
func (f *clusterFlags) share() string {
	if n := f.resolved.Processes(); n > 1 {
		return fmt.Sprintf(" (all %d processes)", n)
	}
	return ""
}

// leader reports whether this process writes the job's outputs and
// summaries: process 0, or the only one.
func (f *clusterFlags) leader() bool { return f.resolved.Self == 0 }

// registered are the job flags of every command, so the root command can
// resolve the cluster of the one that runs.
var registered []*jobFlags

func resolveCluster(cmd *cobra.Command) error {
	for _, f := range registered {
		if f.fs == cmd.Flags() {
			if err := f.cluster.resolve(); err != nil {
				return err
			}
			if p := f.cluster.resolved; p.Processes() > 1 {
				over := ""
				if f.cluster.tls != nil {
					over = ", over mutual TLS"
				}
				fmt.Fprintf(os.Stderr, "weir: process %d of %d (%s), peers %s%s\n", p.Self, p.Processes(), p.From, strings.Join(p.Peers, ","), over)
			}
		}
	}
	return nil
}
