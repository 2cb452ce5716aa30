package weir

// unitCtx is shared by the head of a task instance and the ordered
// exchanges at the ends of its chain: the head sets the unit it pushes and
// ends it, and every exchange then sends its frame for that unit.
type unitCtx struct {
	unit  int64
	exits []unitExit
}

type unitExit interface{ endUnit(unit int64) error }

func (u *unitCtx) end() error {
	for _, e := range u.exits {
		if err := e.endUnit(u.unit); err != nil {
			return err
		}
	}
	return nil
}

// ordRecv is how an ordered task instance reads its input.
type ordRecv struct {
	first, step int64 // the units it takes: first, first+step, ...
	senders     int
	whole       bool // senders send whole units: unit u comes from sender u mod senders
	keepSeq     bool // the instance is in a keyed region and passes sequence numbers on
}
