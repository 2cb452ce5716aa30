package report

// fissionAbout says what the Fission section measures.
const fissionAbout = "`weir bench fission` runs a CPU-heavy pipeline (a scoring map of --rounds mixing rounds per record, a filter) " +
	"at 1 worker and at --workers, without and with `weir.Ordered`, interleaved; GOMAXPROCS follows the workers. " +
	"*speedup* is --workers over 1 (unordered), *ordering cost* 1 − ordered / unordered at --workers."

// fission writes the fission bench's figures.
func (b *builder) fission() error {
	g := b.suite("Fission", Fission, fissionAbout)
	if g == nil {
		return nil
	}
	p := &b.p
	var c commands
	rows := [][]string{{"workers", "records", "rounds", "keyed", "1 worker rec/s", "1 worker ordered", "N workers rec/s",
		"N workers ordered", "speedup", "ordering cost", "checked", "command"}}
	for _, e := range g.results {
		m := e.Result
		rows = append(rows, []string{field(m, "workers"), field(m, "records"), field(m, "rounds"), field(m, "keyed"),
			si(num(m, "w1_records_per_s")), si(num(m, "w1_ordered_records_per_s")), si(num(m, "wn_records_per_s")),
			si(num(m, "wn_ordered_records_per_s")), times(num(m, "speedup")), percent(num(m, "ordered_cost")), checked(m), c.ref(e)})
	}
	p.table(rows)
	c.write(p)
	return nil
}

// transportAbout says what the Transport section measures.
const transportAbout = "`weir bench transport` (under `weir launch -n 2`) sends records encoded in batches from process 0 to process 1 " +
	"over one channel of the mesh, timed from the first send to process 1's answer; bytes include frame headers."

// transport writes the transport bench's figures.
func (b *builder) transport() error {
	g := b.suite("Transport", Transport, transportAbout)
	if g == nil {
		return nil
	}
	p := &b.p
	var c commands
	rows := [][]string{{"records", "batch", "mode", "records/s", "bytes/s", "bytes/record", "command"}}
	for _, e := range g.results {
		m := e.Result
		modes := map[string]map[string]any{}
		if tls, ok := m["tls"].(bool); ok {
			modes[map[bool]string{false: "plain", true: "TLS"}[tls]] = m
		}
		for _, k := range []string{"plain", "tls"} {
			if sub, ok := m[k].(map[string]any); ok {
				modes[map[string]string{"plain": "plain", "tls": "TLS"}[k]] = sub
			}
		}
		for _, mode := range sortedKeys(modes) {
			f := modes[mode]
			rows = append(rows, []string{field(m, "records"), field(m, "batch"), mode, si(num(f, "records_per_s")),
				si(num(f, "bytes_per_s")), plain(num(m, "bytes_per_record")), c.ref(e)})
		}
	}
	p.table(rows)
	c.write(p)
	return nil
}
