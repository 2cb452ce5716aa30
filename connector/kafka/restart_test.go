package kafka_test

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/weirstream/weir/connector/kafka"
)

// brokers are the broker versions the sink's restarts are tried on:
// today's, which bump a writer's epoch at every transaction, and those
// before Kafka 4, which keep one epoch per writer.
var brokers = map[string][]kfake.Opt{"current": nil, "3.7": {kfake.MaxVersions(kversion.V3_7_0())}}

// Restarts from a checkpoint commit what it sealed, not what a reused
// writer wrote after it, and do not lose earlier sealed checkpoints.
func TestSinkRestartsOnBrokerVersions(t *testing.T) {
	for name, opts := range brokers {
		t.Run(name, func(t *testing.T) {
			// Checkpoint 1 commits on writer 0; checkpoint 2 seals b on
			// writer 1; writer 0, free again, takes c. The process dies.
			run := func() (kafka.SinkConfig, []byte, []byte) {
				cfg := clusterWith(t, opts, "out:1")
				sc := kafka.SinkConfig{Config: cfg, Topic: "out"}
				s := kafka.Sink(sc, value)
				if err := s.Recover(0); err != nil {
					t.Fatal(err)
				}
				s.Write([]string{"a"})
				note1, err := s.Prepare(1)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Commit(1, note1); err != nil {
					t.Fatal(err)
				}
				s.Write([]string{"b"})
				note2, err := s.Prepare(2)
				if err != nil {
					t.Fatal(err)
				}
				s.Write([]string{"c"})
				return sc, note1, note2
			}
			restart := func(sc kafka.SinkConfig, n uint64, note []byte, want ...string) {
				t.Helper()
				s := kafka.Sink(sc, value)
				if err := s.Commit(n, note); err != nil {
					t.Fatal(err)
				}
				if err := s.Recover(n); err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, sc.Config, "out"); !slices.Equal(got, want) {
					t.Errorf("restarted from checkpoint %d: out holds %v, want %v", n, got, want)
				}
			}
			sc, note1, _ := run()
			restart(sc, 1, note1, "a")
			sc, _, note2 := run()
			restart(sc, 2, note2, "a", "b")

			// Two checkpoints sealed, neither committed: a restart from
			// the second commits both.
			cfg := clusterWith(t, opts, "out:1")
			sc = kafka.SinkConfig{Config: cfg, Topic: "out"}
			s := kafka.Sink(sc, value)
			if err := s.Recover(0); err != nil {
				t.Fatal(err)
			}
			s.Write([]string{"a"})
			s.Prepare(1)
			s.Write([]string{"b"})
			note2, err := s.Prepare(2)
			if err != nil {
				t.Fatal(err)
			}
			restart(sc, 2, note2, "a", "b")
		})
	}
}
