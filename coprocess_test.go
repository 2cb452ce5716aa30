package weir_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/pebblestate"
)

// purchase is the right input of the CoProcess tests: a record of another
// type, keyed like rec.
type purchase struct {
	ID     int
	User   string
	TS     int64
	Amount int64
}

func purchasesOf(in []rec) []purchase {
	out := make([]purchase, len(in))
	for i, r := range in {
		out[i] = purchase{ID: r.ID, User: r.Key, TS: r.TS, Amount: r.Val}
	}
	return out
}

// costate is a user's clicks and spending per window: state that both
// inputs write.
type costate struct {
	Clicks map[int64]int64 // window end -> clicks
	Spent  map[int64]int64 // window end -> amount
}

// coout is a user's window: clicks, amount spent, and Kind 1 for a large
// purchase from the side output (End its time, Spent its amount).
type coout struct {
	Key           string
	End           int64
	Clicks, Spent int64
	Kind          int8
}

var largePurchases = weir.NewSideOutput[purchase]("large orders")

// coJob joins clicks and orders per user and 40 ms window with CoProcess,
// the large orders from its side output added to the output.
func coJob(clicks weir.Stream[rec], orders weir.Stream[purchase]) weir.Stream[coout] {
	type ctx = weir.ProcessContext[string, costate, coout]
	window := func(c *ctx) (*costate, int64) {
		s := c.State()
		if s.Clicks == nil {
			s.Clicks, s.Spent = map[int64]int64{}, map[int64]int64{}
		}
		end := (c.Timestamp()/pw + 1) * pw
		c.RegisterEventTimer(end - 1)
		return s, end
	}
	joined := weir.CoProcess(weir.KeyBy(clicks, recKey), weir.KeyBy(orders, func(o purchase) string { return o.User }),
		weir.CoProcessFunc[string, rec, purchase, costate, coout]{
			OnLeft: func(c *ctx, r rec) {
				s, end := window(c)
				s.Clicks[end]++
			},
			OnRight: func(c *ctx, o purchase) {
				s, end := window(c)
				s.Spent[end] += o.Amount
				if o.Amount >= 900 {
					largePurchases.Emit(c, o)
				}
			},
			OnTimer: func(c *ctx, t weir.Timer) {
				s, end := c.State(), t.Time+1
				c.Emit(coout{Key: c.Key(), End: end, Clicks: s.Clicks[end], Spent: s.Spent[end]})
				delete(s.Clicks, end)
				delete(s.Spent, end)
				if len(s.Clicks) == 0 && len(s.Spent) == 0 {
					c.ClearState()
				}
			},
			Sides: []weir.SideTag{largePurchases},
		}, weir.Name("join"))
	large := weir.Map(weir.Side(joined, largePurchases), func(o purchase) coout {
		return coout{Key: o.User, End: o.TS, Spent: o.Amount, Kind: 1}
	}, weir.Stateless())
	return weir.Union(joined, large)
}

// coModel is coJob's output, computed directly.
func coModel(clicks []rec, orders []purchase) []coout {
	type win struct {
		key string
		end int64
	}
	wins := map[win]*coout{}
	at := func(key string, ts int64) *coout {
		w := win{key, (ts/pw + 1) * pw}
		if wins[w] == nil {
			wins[w] = &coout{Key: key, End: w.end}
		}
		return wins[w]
	}
	var out []coout
	for _, r := range clicks {
		at(r.Key, r.TS).Clicks++
	}
	for _, o := range orders {
		at(o.User, o.TS).Spent += o.Amount
		if o.Amount >= 900 {
			out = append(out, coout{Key: o.User, End: o.TS, Spent: o.Amount, Kind: 1})
		}
	}
	for _, w := range wins {
		out = append(out, *w)
	}
	return out
}

// CoProcess with state and timers written from both inputs equals the
// direct computation at 1-8 workers, with count and time epochs, and
// with its state in Pebble across a restore at another worker count.
func TestCoProcessModel(t *testing.T) {
	clicks, orders := genRecs(7, 5000, 15, maxDelay), purchasesOf(genRecs(8, 4000, 15, maxDelay))
	want := coModel(clicks, orders)
	for _, c := range runCfgs() {
		t.Run(c.name, func(t *testing.T) {
			j := c.job()
			os := weir.EventTime(source(c, j, "orders", orders), func(o purchase) int64 { return o.TS }, outOfOrder)
			out := &weir.Collect[coout]{}
			weir.Sink(coJob(timedSource(c, j, "clicks", clicks), os), out)
			run(t, j)
			checkBag(t, out.Records(), want)
		})
	}
	t.Run("pebble restored", func(t *testing.T) {
		dir := t.TempDir()
		build := func(j *weir.Job, crashAt int) *weir.Collect[coout] {
			cs := crashMap(weir.Source(j, "clicks", weir.SliceSource[rec]{Records: clicks, BatchSize: 50}), crashAt)
			os := weir.Source(j, "orders", weir.SliceSource[purchase]{Records: orders, BatchSize: 50})
			out := &weir.Collect[coout]{}
			weir.Sink(coJob(weir.EventTime(cs, recTS, outOfOrder), weir.EventTime(os, func(o purchase) int64 { return o.TS }, outOfOrder)), out, weir.Name("out"))
			return out
		}
		opts := func(w int) []weir.JobOption {
			return []weir.JobOption{weir.Workers(w), weir.EpochRecords(100), weir.QueueDepth(2), pebblestate.Dir(filepath.Join(dir, "state")), weir.Checkpoints(filepath.Join(dir, "ckpt"), 2, 2)}
		}
		first := weir.NewJob("first", opts(2)...)
		build(first, 4900)
		if err := runErr(t, first); err == nil || !strings.Contains(err.Error(), "crash") {
			t.Fatalf("first run: %v; want the crash", err)
		}
		second := weir.NewJob("second", opts(3)...)
		out := build(second, -1)
		if err := runErr(t, second); err != nil {
			t.Fatal(err)
		}
		if second.Metrics().RestoredFrom == 0 {
			t.Fatal("no checkpoint restored")
		}
		if dbs, _ := filepath.Glob(filepath.Join(dir, "state", "join-*", "*.log")); len(dbs) == 0 {
			t.Errorf("no Pebble database of the CoProcess under %s", filepath.Join(dir, "state"))
		}
		checkBag(t, out.Records(), want)
	})
}
