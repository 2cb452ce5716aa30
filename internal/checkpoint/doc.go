// Package checkpoint stores the checkpoints of a master-less job: every
// process writes its own part of a checkpoint, any process may declare the
// checkpoint complete, and a restart loads the newest complete checkpoint
// that verifies.
//
// Checkpoints are taken at epoch boundaries every process knows in advance.
// When a process finishes such an epoch it writes its Part (the snapshots of
// its operator instances' keyed state, one blob per operator and key group,
// and the positions of its source instances) with WritePart, then calls
// Complete, which writes the MANIFEST once every part is there. Any process
// may call Complete; several may race.
//
//	s, err := checkpoint.Open(checkpoint.OSFS(), "/shared/job-7", logger)
//	...
//	err = s.WritePart(checkpoint.Part{Checkpoint: 42, Epoch: 42, Process: p, Processes: 4, State: blobs})
//	done, err := s.Complete(42, 4) // true once all four parts are in
//	if done {
//		err = s.Prune(3) // keep the newest 3 complete checkpoints
//	}
//
//	// On restart, every process:
//	n, ok, err := s.Latest()
//	parts, err := s.ReadAll(n) // take the key groups this process now owns
//	// and one process, before any new checkpoint is written:
//	err = s.DiscardAfter(n)
//
//	// One key group's blob of a complete checkpoint, without reading its part:
//	data, found, err := s.ReadBlob(42, "window", 17)
//
// # Layout and format
//
//	dir/chk-000000000042/part-0003.bin   process 3's part
//	dir/chk-000000000042/part-0003.idx   its index
//	dir/chk-000000000042/MANIFEST        present once the checkpoint is complete
//	dir/chk-000000000042/.tmp-*          a write in progress, or a crashed one
//
// A file is a 4-byte magic ("WRCP" for a part, "WRCI" for an index, "WRCM"
// for a manifest), a version byte (1), the fields as uvarints and
// uvarint-length-prefixed bytes, and a trailing CRC-32C (Castagnoli,
// little-endian) of everything before it. The manifest lists, per process,
// the part's file name, size and trailer CRC. Encoding is deterministic and
// canonical (minimal varints, meta sorted by key), so racing Completes write
// identical manifests, and a decoded file re-encodes to the same bytes.
//
// A part's index (PartIndex) names the part by its size and trailer CRC,
// as the manifest does, and gives each state blob's operator, key group,
// offset and length in the part and the CRC-32C of its bytes (operator
// names once each, in a table). With it ReadBlob reads one key group's
// blob of a complete checkpoint (what a live rescale reuses) for the cost
// of the blob, the manifest and the small indexes, which it keeps decoded
// for the newest few checkpoints it read: a part may be a GiB, and
// verifying it whole would read all of it. An index is written (atomically,
// as a part is) after its part's temporary file is synced and before it
// is renamed, so a part in place has its index beside it; a checkpoint written without indexes (by an older version)
// still restores, but ReadBlob reports it as not there.
//
// CRC-32C rather than SHA-256: the threat is accidental damage (torn or
// lost writes, truncation, bit rot, a stale file from another run), not an
// adversary who can write to the directory. CRC-32C detects every
// single-bit error and every burst of up to 32 bits at any length, every
// error of up to 3 bits in files up to 256 MiB (Hamming distance 4 up to
// 2^31 bits), and misses other random damage with probability 2^-32. It
// runs in hardware on amd64 and arm64 at many GB/s, so verifying a
// checkpoint costs about its read time; SHA-256 would be several times
// slower and buys nothing without a key.
//
// # Invariants
//
//   - A part or manifest is visible under its name only whole and synced:
//     it is written to a temporary file, fsynced, renamed into place, and
//     the directory fsynced. A failed or crashed write leaves at most a
//     .tmp- file, which readers ignore and Prune removes.
//   - A checkpoint is complete iff its MANIFEST decodes and every part it
//     lists has the recorded size and checksum, decodes, and names the
//     right checkpoint, process, process count and epoch. Latest checks
//     all of it; Prune checks all but the decoding of the blobs (a part
//     whose bytes match its checksum holds what its writer sealed),
//     reading each part a piece at a time, once per Store and manifest.
//     A checkpoint that fails is skipped (Latest logs a warning naming
//     the file and the problem) and never counts as complete.
//   - WritePart encodes a part straight into its file: it holds the
//     part's blobs, not a copy of its bytes. Complete reads a part whole
//     only when its index is missing or does not match it (its size,
//     trailer checksum and header); otherwise it reads the index and the
//     part's first and last bytes.
//   - Corruption is told apart from I/O errors: errors about bad bytes wrap
//     ErrCorrupt (CorruptError gives file and offset), missing files match
//     fs.ErrNotExist, and Latest returns any other error instead of
//     skipping, so processes do not diverge on a transient fault.
//   - DecodePart, DecodeIndex and DecodeManifest are pure functions of
//     their input that never panic, and allocate a bounded multiple of the input's size
//     whatever its lengths and counts claim (about 20 bytes per input byte
//     for a part of empty blobs, the worst case): each length and count is
//     checked against the bytes that remain before anything is allocated.
//     Decoded blobs alias the input.
//   - ReadBlob returns only bytes whose CRC-32C matches an index that
//     decodes and names the part the manifest records; damage gives an
//     error wrapping ErrCorrupt, a checkpoint that is incomplete, pruned
//     or has no indexes one matching fs.ErrNotExist.
//   - Writing a part of a complete checkpoint is refused; Prune keeps at
//     least one complete checkpoint.
//
// The store cannot tell a stale part from a failed run apart from a fresh
// one of the same checkpoint number, process count and epoch. A restart
// must therefore call DiscardAfter(n) before any process writes a newer
// checkpoint, an ordering the caller provides (say, no checkpoint epoch can
// complete before every process has restarted and discarded).
//
// Mem is an in-memory FS for tests that models what survives a crash
// (synced data, synced directory entries) and injects faults: fail the nth
// call of an operation, crash at it, truncate a file, flip a bit.
package checkpoint
