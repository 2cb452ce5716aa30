package cluster

import (
	"slices"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolve(t *testing.T) {
	tests := []struct {
		name  string
		in    Inputs
		self  int
		peers []string
		from  string
	}{
		{"single", Inputs{Process: -1}, 0, []string{""}, "single"},
		{"flags", Inputs{Process: 1, Peers: []string{"a:1", "b:2"}}, 1, []string{"a:1", "b:2"}, "flags"},
		{"hostfile by host name", Inputs{Process: -1, Hostfile: "# job\nn1:70\n\nn2:70 # second\n", HostfileName: "hosts", Hostname: "n2"},
			1, []string{"n1:70", "n2:70"}, "hostfile"},
		{"hostfile with process", Inputs{Process: 0, Hostfile: "h:1\nh:2\n", HostfileName: "hosts", Hostname: "h"}, 0, []string{"h:1", "h:2"}, "hostfile"},
		{"slurm", Inputs{Process: -1, Port: 7000, Env: envOf(map[string]string{
			"SLURM_PROCID": "2", "SLURM_NTASKS": "3", "SLURM_STEP_NODELIST": "node[08-09]", "SLURM_STEP_TASKS_PER_NODE": "2,1"})},
			2, []string{"node08:7000", "node08:7001", "node09:7000"}, "slurm"},
		{"kubernetes", Inputs{Process: -1, Port: 7070, Hostname: "weir-1", Env: envOf(map[string]string{
			"KUBERNETES_SERVICE_HOST": "10.0.0.1", "WEIR_SERVICE": "weir", "WEIR_PROCESSES": "2"})},
			1, []string{"weir-0.weir:7070", "weir-1.weir:7070"}, "kubernetes"},
		{"flags win over slurm", Inputs{Process: 0, Peers: []string{"x:1"}, Env: envOf(map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "9"})},
			0, []string{"x:1"}, "flags"},
	}
	for _, tt := range tests {
		c, err := Resolve(tt.in)
		if err != nil {
			t.Errorf("%s: Resolve: %v", tt.name, err)
			continue
		}
		if c.Self != tt.self || !slices.Equal(c.Peers, tt.peers) || c.From != tt.from {
			t.Errorf("%s: Resolve = %d %v %s; want %d %v %s", tt.name, c.Self, c.Peers, c.From, tt.self, tt.peers, tt.from)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		in   Inputs
		want string
	}{
		{Inputs{Process: -1, Peers: []string{"a:1"}}, "--peers needs --process"},
		{Inputs{Process: 2, Peers: []string{"a:1", "b:1"}}, "process 2 of 2"},
		{Inputs{Process: 0, Peers: []string{"a:1", "a:1"}}, "both at a:1"},
		{Inputs{Process: 0, Peers: []string{"nocolon"}}, "want host:port"},
		{Inputs{Process: -1, Hostfile: "a:1\nbad line\n", HostfileName: "hosts"}, "hosts:2"},
		{Inputs{Process: -1, Hostfile: "a:1\n", HostfileName: "hosts", Hostname: "zz"}, "does not list this host"},
		{Inputs{Process: 3}, "without --peers"},
		{Inputs{Process: -1, Env: envOf(map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_TASKS_PER_NODE": "1(x2)"})}, "SLURM_NTASKS is 4"},
		{Inputs{Process: -1, Hostname: "weir", Env: envOf(map[string]string{"KUBERNETES_SERVICE_HOST": "x", "WEIR_SERVICE": "s", "WEIR_PROCESSES": "2"})}, "not a StatefulSet pod"},
	}
	for _, tt := range tests {
		_, err := Resolve(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%+v) error %v; want one containing %q", tt.in, err, tt.want)
		}
	}
}

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"node[01-03,7],gpu5", []string{"node01", "node02", "node03", "node7", "gpu5"}},
		{"r[1-2]c[0-1]", []string{"r1c0", "r1c1", "r2c0", "r2c1"}},
	}
	for _, tt := range tests {
		got, err := ExpandHostlist(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ExpandHostlist(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "n[1-", "n[3-1]", "n[x]", "n]"} {
		if _, err := ExpandHostlist(bad); err == nil {
			t.Errorf("ExpandHostlist(%q) accepted", bad)
		}
	}
}

func TestExpandCounts(t *testing.T) {
	got, err := expandCounts("2(x3),1", 4)
	if err != nil || !slices.Equal(got, []int{2, 2, 2, 1}) {
		t.Errorf("expandCounts = %v, %v", got, err)
	}
	if _, err := expandCounts("2(x3)", 4); err == nil {
		t.Error("expandCounts accepted a list for the wrong node count")
	}
}
