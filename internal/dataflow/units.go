package dataflow

// UnitCtx is shared by the head of a task instance and the ordered
// exchanges at the ends of its chain: the head sets the unit it pushes and
// ends it, and every exchange then sends its frame for that unit.
type UnitCtx struct {
	Unit  int64
	Exits []unitExit
}

type unitExit interface{ EndUnit(unit int64) error }

func (u *UnitCtx) End() error {
	for _, e := range u.Exits {
		if err := e.EndUnit(u.Unit); err != nil {
			return err
		}
	}
	return nil
}

// OrdRecv is how an ordered task instance reads its input.
type OrdRecv struct {
	First, Step int64 // the units it takes: first, first+step, ...
	Senders     int
	Whole       bool // senders send whole units: unit u comes from sender u mod senders
	KeepSeq     bool // the instance is in a keyed region and passes sequence numbers on
}
