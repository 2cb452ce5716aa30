package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/dataflow"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/transport"
)

// A process of an elastic job asks process 0 whether the job runs before
// it opens its checkpoints; the settings it asks with are those it runs
// with, or process 0 would take it for a process of another job and fail.
func TestMeshSettingsBeforeCheckpoints(t *testing.T) {
	cfg := dataflow.JobConfig{KeyGroups: 8, Workers: 2, Interval: 100 * time.Millisecond}
	for _, o := range []dataflow.JobOption{
		dataflow.Cluster(1, []string{"a:1", "b:1", "c:1"}, "s"), dataflow.ElasticCluster(2), dataflow.Checkpoints(t.TempDir(), 5, 3),
	} {
		o(&cfg)
	}
	j := &Job{Graph: &dataflow.Graph{Cfg: cfg}}
	p := &plan.Physical{}
	before := j.meshSettings(p)
	j.coord = &coordinator{every: cfg.Ckpt.Every, from: 0}
	after := j.meshSettings(p)
	if !slices.Equal(before, after) {
		t.Errorf("settings before the checkpoints open\n%v\nand after\n%v", before, after)
	}
	if !slices.ContainsFunc(before, func(s transport.Setting) bool { return s.Name == "--checkpoint-every" && s.Value == "5" }) {
		t.Errorf("settings %v do not say --checkpoint-every 5", before)
	}
}
