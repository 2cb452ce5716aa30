package dataflow

import (
	"fmt"

	"github.com/weirstream/weir/internal/ds2"
	"github.com/weirstream/weir/internal/migrate"
)

// AutoscaleConfig is Autoscale's: the policy, the epochs of a policy
// interval, and how the rescales it asks for move key groups.
type AutoscaleConfig struct {
	Policy              ds2.Policy
	Every               int
	Strategy            migrate.Strategy
	Gap                 uint64
	PerPair, MaxPerStep int
}

// Autoscale makes the job size its keyed operators by itself while it
// runs (see the root package's Autoscale).
func Autoscale(a AutoscaleConfig) JobOption {
	return func(c *JobConfig) { c.Autoscale = &a }
}

// validateAutoscale refuses an autoscaling that cannot work in a job of
// procs processes.
func (c *JobConfig) validateAutoscale(procs int) error {
	a := c.Autoscale
	if a == nil {
		return nil
	}
	switch {
	case a.Every < 1:
		return fmt.Errorf("weir: Autoscale: a policy interval of %d epochs; want at least 1", a.Every)
	case c.EpochRecords > 0:
		return fmt.Errorf("weir: Autoscale: with count-based epochs (EpochRecords(%d)) a policy interval has no length in time; use time-based epochs", c.EpochRecords)
	case a.PerPair < 0 || a.MaxPerStep < 0:
		return fmt.Errorf("weir: Autoscale: PerPair(%d) and MaxPerStep(%d) must not be negative", a.PerPair, a.MaxPerStep)
	}
	if err := a.Policy.Check(); err != nil {
		return fmt.Errorf("weir: Autoscale: %w", err)
	}
	return nil
}
