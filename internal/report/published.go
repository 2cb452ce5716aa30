package report

// Published are other systems' published Nexmark figures, in events/s per
// core with the generator in the process, by query.
type Published struct {
	System  string
	Note    string
	PerCore map[string]float64
}

// Flink and Feldera are the figures the report sets Weir's next to.
var (
	Flink = Published{System: "Flink", Note: "Flink's nexmark suite",
		PerCore: map[string]float64{"q0": 165e3, "q1": 163e3, "q2": 195e3, "q3": 128e3, "q4": 31e3, "q5": 41e3, "q7": 17.6e3, "q8": 131e3}}
	Feldera = Published{System: "Feldera", Note: "Feldera's table: q0–q3, q5 and q8 are about 410–440 K, shown as 425 K",
		PerCore: map[string]float64{"q0": 425e3, "q1": 425e3, "q2": 425e3, "q3": 425e3, "q4": 265e3, "q5": 425e3, "q7": 196e3, "q8": 425e3}}
)

// target is what a query must reach: events/s per core at 2 workers, and
// its rate at 1 worker over the hand-written loop's.
type target struct {
	perCore, ratio float64
}

// targetOf returns the targets of a query: q0–q2 at least 4 M events/s
// per core and half the loop's rate, every other query 1.5 M and 0.3.
func targetOf(query string) target {
	switch query {
	case "q0", "q1", "q2":
		return target{perCore: 4e6, ratio: 0.5}
	}
	return target{perCore: 1.5e6, ratio: 0.3}
}
