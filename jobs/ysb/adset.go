package ysb

import (
	"encoding/binary"
	"math/bits"
)

// adSet answers "does this ad have a campaign?" for the file job's
// validation of every event, faster than a map: ad ids are UUIDs, whose
// first eight bytes are already random, so the set hashes only those (and
// the length) and compares the whole id on a match. It is read-only after
// newAdSet and safe for concurrent use.
type adSet struct {
	slots []string
	shift uint
}

func newAdSet(c Campaigns) *adSet {
	size := 16
	for size < 4*len(c) {
		size *= 2
	}
	s := &adSet{slots: make([]string, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
	for ad := range c {
		if ad == "" {
			continue // never stored: the empty slot marker
		}
		i := s.slot(ad)
		for s.slots[i] != "" {
			i = (i + 1) & (len(s.slots) - 1)
		}
		s.slots[i] = ad
	}
	return s
}

func (s *adSet) slot(ad string) int {
	var x uint64
	if len(ad) >= 8 {
		x = binary.LittleEndian.Uint64([]byte(ad[:8]))
	} else {
		var b [8]byte
		copy(b[:], ad)
		x = binary.LittleEndian.Uint64(b[:])
	}
	return int((x ^ uint64(len(ad))) * 0x9e3779b97f4a7c15 >> s.shift)
}

// has reports whether ad is in the set.
func (s *adSet) has(ad string) bool {
	if ad == "" {
		return false
	}
	for i := s.slot(ad); ; i = (i + 1) & (len(s.slots) - 1) {
		switch s.slots[i] {
		case ad:
			return true
		case "":
			return false
		}
	}
}
