package weir

import "github.com/weirstream/weir/internal/dataflow"

// PartitionStats describes the partitioning of one keyed aggregation over
// the epochs it has seen.
type PartitionStats = dataflow.PartitionStats
