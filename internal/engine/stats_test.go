package engine

import (
	"testing"

	"github.com/weirstream/weir/internal/exchange"
)

// No edge channel is the summaries' channel.
func TestReservedChannels(t *testing.T) {
	for _, e := range []int{0, 1, 4093, 4094} {
		for _, s := range []int{0, 1023} {
			for _, r := range []int{0, 1023} {
				ch, err := exchange.ChannelID(e, s, r)
				if err != nil {
					t.Fatalf("ChannelID(%d, %d, %d): %v", e, s, r, err)
				}
				if ch == summaryChannel {
					t.Fatalf("ChannelID(%d, %d, %d) = %#x, a reserved channel", e, s, r, ch)
				}
			}
		}
	}
	if _, err := exchange.ChannelID(4095, 1023, 1023); err == nil {
		t.Fatal("edge 4095 was accepted")
	}
}
