package state

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/partition"
)

func BenchmarkUpsertString100(b *testing.B) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("%08x-1b7b-4f43-9a53-3e1f0a9c%04d", i*7919, i)
	}
	seq := make([]int, 1<<16)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range seq {
		seq[i] = r.IntN(100)
	}
	t := NewTable[string, int64](0)
	i := 0
	for b.Loop() {
		k := keys[seq[i&(1<<16-1)]]
		*t.Upsert(partition.HashString(k), k)++
		i++
	}
}

func BenchmarkGoMapString100(b *testing.B) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("%08x-1b7b-4f43-9a53-3e1f0a9c%04d", i*7919, i)
	}
	seq := make([]int, 1<<16)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range seq {
		seq[i] = r.IntN(100)
	}
	m := map[string]int64{}
	i := 0
	for b.Loop() {
		k := keys[seq[i&(1<<16-1)]]
		m[k]++
		i++
	}
}
