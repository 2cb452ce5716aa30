//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileID identifies a file whatever its names (hard or symbolic links).
type fileID struct{ dev, ino uint64 }

func idOf(st os.FileInfo) (fileID, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(s.Dev), uint64(s.Ino)}, true
}
