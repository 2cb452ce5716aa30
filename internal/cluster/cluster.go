package cluster

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Inputs are what a process can know about itself.
type Inputs struct {
	// Process is --process, or -1 if not given.
	Process int
	// Peers is --peers.
	Peers []string
	// Hostfile is the text of --hostfile ("" if none), and HostfileName
	// its name, for errors.
	Hostfile, HostfileName string
	// Env reads an environment variable ("" if unset); nil reads none.
	Env func(string) string
	// Hostname is this host's name.
	Hostname string
	// Port is the base port (--port) for SLURM and Kubernetes.
	Port int
}

// Cluster is this process's place in the job.
type Cluster struct {
	Self  int
	Peers []string // host:port of every process, by index
	// From names where the answer came from: "flags", "hostfile",
	// "slurm", "kubernetes" or "single".
	From string
}

// Processes is the number of processes.
func (c Cluster) Processes() int { return len(c.Peers) }

// Resolve works out the cluster from the first source that applies. A
// job that names no source is a single process.
func Resolve(in Inputs) (Cluster, error) {
	env := in.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	switch {
	case len(in.Peers) > 0:
		if in.Process < 0 {
			return Cluster{}, errors.New("cluster: --peers needs --process")
		}
		return check(Cluster{Self: in.Process, Peers: in.Peers, From: "flags"})
	case in.Hostfile != "" || in.HostfileName != "":
		return fromHostfile(in)
	case env("SLURM_PROCID") != "" && env("SLURM_NTASKS") != "":
		return fromSlurm(in, env)
	case env("WEIR_SERVICE") != "" && env("KUBERNETES_SERVICE_HOST") != "":
		return fromKubernetes(in, env)
	case in.Process > 0:
		return Cluster{}, fmt.Errorf("cluster: --process %d without --peers, --hostfile, SLURM or Kubernetes", in.Process)
	}
	return Cluster{Self: 0, Peers: []string{""}, From: "single"}, nil
}

func check(c Cluster) (Cluster, error) {
	if c.Self < 0 || c.Self >= len(c.Peers) {
		return Cluster{}, fmt.Errorf("cluster: process %d of %d (from %s)", c.Self, len(c.Peers), c.From)
	}
	seen := map[string]int{}
	for i, p := range c.Peers {
		host, port, err := net.SplitHostPort(p)
		if err != nil || host == "" || port == "" {
			return Cluster{}, fmt.Errorf("cluster: peer %d address %q (from %s): want host:port", i, p, c.From)
		}
		if j, dup := seen[p]; dup {
			return Cluster{}, fmt.Errorf("cluster: peers %d and %d both at %s (from %s)", j, i, p, c.From)
		}
		seen[p] = i
	}
	return c, nil
}

func fromHostfile(in Inputs) (Cluster, error) {
	var peers []string
	for i, line := range strings.Split(in.Hostfile, "\n") {
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(line); err != nil {
			return Cluster{}, fmt.Errorf("cluster: %s:%d: %q: want host:port", in.HostfileName, i+1, line)
		}
		peers = append(peers, line)
	}
	if len(peers) == 0 {
		return Cluster{}, fmt.Errorf("cluster: %s lists no peers", in.HostfileName)
	}
	self := in.Process
	if self < 0 {
		for i, p := range peers {
			if host, _, _ := net.SplitHostPort(p); host == in.Hostname {
				if self >= 0 {
					return Cluster{}, fmt.Errorf("cluster: %s lists host %s more than once; give --process", in.HostfileName, in.Hostname)
				}
				self = i
			}
		}
		if self < 0 {
			return Cluster{}, fmt.Errorf("cluster: %s does not list this host (%s); give --process", in.HostfileName, in.Hostname)
		}
	}
	return check(Cluster{Self: self, Peers: peers, From: "hostfile"})
}

func fromSlurm(in Inputs, env func(string) string) (Cluster, error) {
	self, err1 := strconv.Atoi(env("SLURM_PROCID"))
	n, err2 := strconv.Atoi(env("SLURM_NTASKS"))
	if err1 != nil || err2 != nil || n < 1 {
		return Cluster{}, fmt.Errorf("cluster: SLURM_PROCID=%q SLURM_NTASKS=%q", env("SLURM_PROCID"), env("SLURM_NTASKS"))
	}
	list := first(env("SLURM_STEP_NODELIST"), env("SLURM_JOB_NODELIST"))
	nodes, err := ExpandHostlist(list)
	if err != nil {
		return Cluster{}, err
	}
	perNode, err := expandCounts(first(env("SLURM_STEP_TASKS_PER_NODE"), env("SLURM_TASKS_PER_NODE")), len(nodes))
	if err != nil {
		return Cluster{}, err
	}
	var peers []string
	for i, node := range nodes {
		for k := 0; k < perNode[i]; k++ {
			peers = append(peers, net.JoinHostPort(node, strconv.Itoa(in.Port+k)))
		}
	}
	if len(peers) != n {
		return Cluster{}, fmt.Errorf("cluster: SLURM places %d tasks on nodes %q, but SLURM_NTASKS is %d", len(peers), list, n)
	}
	return check(Cluster{Self: self, Peers: peers, From: "slurm"})
}

func fromKubernetes(in Inputs, env func(string) string) (Cluster, error) {
	k := strings.LastIndexByte(in.Hostname, '-')
	ord, err := strconv.Atoi(in.Hostname[k+1:])
	if k <= 0 || err != nil {
		return Cluster{}, fmt.Errorf("cluster: host name %q is not a StatefulSet pod's (name-ordinal)", in.Hostname)
	}
	n, err := strconv.Atoi(env("WEIR_PROCESSES"))
	if err != nil || n < 1 {
		return Cluster{}, fmt.Errorf("cluster: WEIR_PROCESSES=%q: want the StatefulSet's replica count", env("WEIR_PROCESSES"))
	}
	set, svc := in.Hostname[:k], env("WEIR_SERVICE")
	peers := make([]string, n)
	for i := range peers {
		peers[i] = net.JoinHostPort(fmt.Sprintf("%s-%d.%s", set, i, svc), strconv.Itoa(in.Port))
	}
	return check(Cluster{Self: ord, Peers: peers, From: "kubernetes"})
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
