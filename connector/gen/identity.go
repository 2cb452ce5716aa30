package gen

import "fmt"

// Identity implements weir.Identified: every parameter that decides the
// events (the batch size does not).
func (g YSB) Identity() string {
	return fmt.Sprintf("ysb generator: campaigns %d, ads per campaign %d, rate %v, events %d, duration %v, seed %d, start time %d, event-time rate %v",
		g.Campaigns, g.AdsPerCampaign, g.Rate, g.Events, g.Duration, g.Seed, g.StartTime, g.EventTimeRate)
}

// Identity implements weir.Identified.
func (z Zipf) Identity() string {
	return fmt.Sprintf("zipf generator: keys %d, s %v, rate %v, events %d, duration %v, seed %d, start time %d, event-time rate %v",
		z.Keys, z.S, z.Rate, z.Events, z.Duration, z.Seed, z.StartTime, z.EventTimeRate)
}

// Identity implements weir.Identified.
func (n Nexmark) Identity() string {
	return fmt.Sprintf("nexmark generator: rate %v, events %d, duration %v, seed %d, start time %d, event-time rate %v",
		n.Rate, n.Events, n.Duration, n.Seed, n.StartTime, n.EventTimeRate)
}
