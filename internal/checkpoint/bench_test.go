package checkpoint

import (
	"testing"
)

// BenchmarkWriteReadPart writes and reads back a part of 1,000 blobs of
// 1 KiB on the OS file system (fsyncs included). MB/s counts the blob bytes
// once per write+read.
func BenchmarkWriteReadPart(b *testing.B) {
	s, err := Open(OSFS(), b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	p := samplePart(1, 0, 1, 1000, 1024)
	b.SetBytes(1000 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.WritePart(p); err != nil {
			b.Fatal(err)
		}
		if _, err := s.ReadPart(1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeDecodePart is the same without the file system.
func BenchmarkEncodeDecodePart(b *testing.B) {
	p := samplePart(1, 0, 1, 1000, 1024)
	b.SetBytes(1000 * 1024)
	b.ReportAllocs()
	for b.Loop() {
		enc, err := EncodePart(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodePart(enc); err != nil {
			b.Fatal(err)
		}
	}
}
