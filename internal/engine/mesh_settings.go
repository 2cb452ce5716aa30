package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// meshSettings lists what every process of a distributed job must have
// alike, in the order a difference is reported: the first setting whose
// value differs (or that one process lacks) fails the job on both sides,
// as "peer 1 (host:port) runs another job: --workers is 2 here, 3 there".
// Settings are named by their CLI flag where one exists, so the message
// says what to fix. The binary comes first (another binary may build
// another plan from the same options), the plan last (it differs
// whenever an option above does, and says least). Entries that identify
// the job's input come from identitySettings; more may be appended, with
// names unique within the list.
func (j *Job) meshSettings(p *plan.Physical) []transport.Setting {
	c := j.Cfg
	partitioning := c.Partitioning
	if partitioning == "" {
		partitioning = "auto"
	}
	s := []transport.Setting{
		{Name: "binary", Value: binaryHash()},
		{Name: "--workers", Value: strconv.Itoa(c.Workers)},
		{Name: "--key-groups", Value: strconv.Itoa(c.KeyGroups)},
		{Name: "--interval", Value: c.Interval.String()},
		{Name: "--epoch-records", Value: strconv.Itoa(c.EpochRecords)},
		{Name: "--ordered", Value: strconv.FormatBool(c.Ordered)},
		{Name: "batch size", Value: strconv.Itoa(c.BatchSize)},
		{Name: "--partitioning", Value: partitioning},
		// The first key-group tables and source shares.
		{Name: "--active-instances", Value: strconv.Itoa(c.Active)},
	}
	if c.Ckpt != nil {
		// Processes that restored different checkpoints, or take them at
		// different epochs, must not run together. A process that joins
		// an elastic job restores nothing. The interval is the
		// configuration's: a process of an elastic job asks process 0
		// whether the job runs (joinIfRunning) before it opens its
		// checkpoints, with the same settings.
		if !c.Cluster.Elastic() && j.coord != nil {
			s = append(s, transport.Setting{Name: "restored checkpoint", Value: strconv.FormatUint(j.coord.from, 10)})
		}
		s = append(s, transport.Setting{Name: "--checkpoint-every", Value: strconv.FormatUint(c.Ckpt.Every, 10)})
	}
	if c.Cluster.Elastic() {
		s = append(s, transport.Setting{Name: "--members", Value: strconv.Itoa(c.Cluster.Members)})
	}
	if a := c.Autoscale; a != nil {
		// Every process must size alike: the same policy and moves.
		s = append(s, transport.Setting{Name: "--autoscale", Value: fmt.Sprintf("%+v", *a)})
	}
	s = append(s, j.identitySettings()...)
	ph := sha256.Sum256([]byte(p.Explain()))
	return append(s, transport.Setting{Name: "plan", Value: hex.EncodeToString(ph[:16])})
}

// binaryHash is the hex SHA-256 of the running executable's bytes, read
// once per process: processes built from other sources, or with other
// flags or toolchains, differ. On Linux it reads /proc/self/exe, the file
// that runs even if its path was replaced since. If the executable
// cannot be read, the value says why (and processes that fail alike
// would agree).
var binaryHash = sync.OnceValue(func() string {
	path := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		var err error
		if path, err = os.Executable(); err != nil {
			return "unknown: " + err.Error()
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
})
