package report

import (
	"bufio"
	"strconv"
	"strings"
)

// Machine describes where and when the runs of a results file ran.
type Machine struct {
	CPU         string `json:"cpu"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	Go          string `json:"go"`
	Platform    string `json:"platform"` // GOOS/GOARCH
	// Date is when the runs started, RFC 3339.
	Date string `json:"date"`
	// Load is the load average (1, 5 and 15 minutes) when they started:
	// a machine shared with other work gives noisier figures.
	Load string `json:"load,omitempty"`
	// LoadEnd is the load average when they ended.
	LoadEnd string `json:"load_end,omitempty"`
	// Commit is the source's commit, if known ("-dirty": with changes).
	Commit string `json:"commit,omitempty"`
}

// CPUModel returns the first "model name" of /proc/cpuinfo's text, or
// "unknown".
func CPUModel(cpuinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return "unknown"
}

// MemTotal returns MemTotal of /proc/meminfo's text in bytes, 0 if it has
// none.
func MemTotal(meminfo string) int64 {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) >= 3 && f[2] == "kB" {
				n *= 1024
			}
			return n
		}
	}
	return 0
}

// LoadAverage returns the first three fields of /proc/loadavg's text.
func LoadAverage(loadavg string) string {
	f := strings.Fields(loadavg)
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
