// Package cluster works out which process of a distributed job this one
// is and where its peers listen. It is pure: it reads flags, a hostfile's
// text, environment variables and the host name given to it, and returns
// the answer; the command line gathers them.
//
// The sources, in order of precedence:
//
//   - flags: --process I --peers host:port,host:port,...
//   - a hostfile: one host:port per line (blank lines and # comments
//     skipped), with --process I, or, without it, the line whose host is
//     this host name (exactly one must match)
//   - SLURM: SLURM_PROCID is the index, SLURM_NTASKS the count, the
//     step's node list (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST, in
//     SLURM's compressed form such as node[01-03,7]) with
//     SLURM_STEP_TASKS_PER_NODE (else SLURM_TASKS_PER_NODE, such as
//     2(x3),1) places tasks on nodes in blocks; task i listens on
//     port + its rank on its node
//   - a Kubernetes StatefulSet: the index is the ordinal at the end of the
//     host name (weir-2 is 2), the count is WEIR_PROCESSES, and peer i is
//     <set>-<i>.<WEIR_SERVICE>:<port>, the headless service's DNS name
//     (needs WEIR_SERVICE and KUBERNETES_SERVICE_HOST)
//
// No process is special: every process gets the same peer list.
//
//	c, err := cluster.Resolve(cluster.Inputs{Process: -1, Env: os.Getenv, Hostname: host, Port: 7070})
//	if c.Processes() > 1 { ... dial c.Peers from c.Self ... }
package cluster
