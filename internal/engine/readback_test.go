package engine

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir/internal/checkpoint"
)

// A restart whose newest checkpoint passes Latest's checks (sizes,
// checksums, headers) but holds a part that does not decode goes back to
// the checkpoint before rather than fail every restart; a checkpoint the
// job was told to start from is not replaced.
func TestReadBackFallsBack(t *testing.T) {
	mem := checkpoint.MemFS()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := checkpoint.Open(mem, "/ck", log)
	if err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= 2; n++ {
		p := checkpoint.Part{Checkpoint: n, Epoch: n, Process: 0, Processes: 1,
			State: []checkpoint.StateBlob{{Operator: "op", KeyGroup: 3, Data: []byte{byte(n), 1, 2}}}}
		if err := store.WritePart(p); err != nil {
			t.Fatal(err)
		}
		if ok, err := store.Complete(n, 1); !ok || err != nil {
			t.Fatalf("complete %d: %v %v", n, ok, err)
		}
	}
	// Bytes after the last blob, with the part's checksum and the
	// manifest's record made to match: only decoding finds them.
	dir := filepath.Join(store.Dir(), "chk-000000000002")
	part := filepath.Join(dir, "part-0000.bin")
	b, err := mem.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	body := append(b[:len(b)-4:len(b)-4], 0x7f, 0x7f, 0x7f)
	b = binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	mb, err := mem.ReadFile(filepath.Join(dir, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.DecodeManifest(mb)
	if err != nil {
		t.Fatal(err)
	}
	m.Parts[0].Size, m.Parts[0].CRC = int64(len(b)), binary.LittleEndian.Uint32(b[len(b)-4:])
	if mb, err = checkpoint.EncodeManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(part, b); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(filepath.Join(dir, "MANIFEST"), mb); err != nil {
		t.Fatal(err)
	}

	other, err := checkpoint.Open(mem, "/ck", log) // as after a restart
	if err != nil {
		t.Fatal(err)
	}
	n, ok, err := other.Latest()
	if n != 2 || !ok || err != nil {
		t.Fatalf("Latest = %d, %v, %v; want 2: the damage passes its checks", n, ok, err)
	}
	if _, err := other.ReadAll(2); !checkpoint.Unusable(err) {
		t.Fatalf("ReadAll(2): %v; want a corrupt part", err)
	}
	parts, n, ok, err := readBack(other, other, n, ok, log)
	if err != nil || !ok || n != 1 || len(parts) != 1 || parts[0].State[0].Data[0] != 1 {
		t.Fatalf("readBack = checkpoint %d, %v, %v; want checkpoint 1", n, ok, err)
	}
	// Told to start from a checkpoint (another directory): no going back.
	chosen, err := checkpoint.Open(mem, "/ck", log)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := checkpoint.Open(mem, "/other", log)
	if err != nil {
		t.Fatal(err)
	}
	// What readBack discarded, back.
	if err := mem.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(part, b); err != nil {
		t.Fatal(err)
	}
	if err := mem.WriteFile(filepath.Join(dir, "MANIFEST"), mb); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readBack(fresh, chosen, 2, true, log); !checkpoint.Unusable(err) || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readBack of a chosen checkpoint that does not decode: %v; want that error", err)
	}
}
