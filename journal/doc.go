// Package journal keeps a run's plain files on disk: the append-only event
// journal (events.jsonl), the optional fold snapshot (snapshot.json), the
// stage manifest (manifest.yaml, changed only by compare-and-swap) and the run
// lock (run.lock). See DESIGN.md, "The spine" and "A run on disk", and
// requirement DA-A4 in SEEDS.md.
//
// # Records
//
// The journal is generic over records: a record is one JSON value encoded on
// a single line. The caller encodes its own events; the journal only checks
// that each record is non-empty, contains no '\n' and is valid JSON
// (json.Valid), and writes it followed by '\n'.
//
// # Durability contract
//
//   - Durable when it returns. When [Log.Append] or [Pending.Wait] returns nil,
//     the records were written and the file was synced (fdatasync by default),
//     so they survive a crash or power loss of the host. Concurrent appenders
//     share one write and one sync per group commit (see [Log.Enqueue]).
//   - Order. Records of one Enqueue/Append are contiguous in the file, and the
//     order of Enqueue calls is the order in the file.
//   - Never pretend. If a write or a sync fails, that Append returns the error
//     and the Log is broken: every later Enqueue, Wait and Append returns the
//     same error. Records whose Append failed may or may not be in the file
//     after a crash (the journal tries to cut them off again); a caller that
//     retries after reopening must tolerate finding them.
//   - Torn tail repaired. A crash during a write can leave a partial last line
//     (bytes after the last '\n'). Its Append never returned, so it was never
//     acknowledged: [Open] truncates the file to the end of the last complete
//     line, even if the partial bytes happen to be valid JSON, and reports the
//     number of bytes dropped through [Log.Repaired].
//   - Corruption refused. A complete line that is not valid JSON (an empty line
//     included) is never skipped or repaired: [Open] and [ReadFile] fail with a
//     [*CorruptError] naming the line and its byte offset, and the file is left
//     byte-for-byte unchanged, so a person can look at it.
//
// Readers in another process (status, verify) use [ReadFile], which never
// writes and ignores a trailing partial line, because it may be an append in
// progress.
//
// # Snapshots, manifest and run lock
//
// A [Snapshot] is only a cache of a fold up to a byte offset of the journal;
// [ReadSnapshot] reports [ErrNoSnapshot] or [ErrBadSnapshot] and the caller then
// refolds from offset zero. The [Manifest] records the run's stage and a version
// that [SwapStage] advances by compare-and-swap under an exclusive flock, so
// two processes can never both move a run from the same stage. [LockRun] takes
// the run's exclusive lock for a writer process; the kernel drops it when the
// process dies, which is what lets a crashed run be resumed.
//
// Files are replaced atomically (temporary file in the same directory, fsync,
// rename, fsync of the directory), so a reader sees the old or the new
// content, never a mixture.
package journal
