package exchange

import (
	"testing"

	"github.com/weirstream/weir/internal/progress"
)

// Markers keep their flags across processes; a flag byte with an unknown
// bit is refused.
func TestMarkerWire(t *testing.T) {
	for _, m := range []progress.Marker{
		{Epoch: 0, Watermark: progress.NoWatermark},
		{Epoch: 7, Watermark: -3, Cut: 99, Idle: true},
		{Epoch: 1 << 40, Watermark: progress.MaxWatermark, Cut: 1, Final: true},
		{Epoch: 2, Watermark: 5, Final: true, Idle: true},
	} {
		buf := appendMarker(nil, m)
		got, err := decodeMarker(&Reader{B: buf[1:]})
		if err != nil || got != m {
			t.Errorf("decodeMarker(appendMarker(%v)) = %v, %v; want it back", m, got, err)
		}
	}
	buf := appendMarker(nil, progress.Marker{Epoch: 1})
	for _, f := range []byte{4, 0x80, 0xff} {
		buf[len(buf)-1] = f
		if m, err := decodeMarker(&Reader{B: buf[1:]}); err == nil {
			t.Errorf("flags %#x decoded as %v; want an error", f, m)
		}
	}
}
