// Package file reads streams from files of lines and writes streams to
// files.
//
// # Sources
//
// JSONLines and CSV are inputs over a list of files that hold one record
// per line. The files are read in parallel: their bytes, laid end to end,
// are split into equal shares, one per reader instance, so that two
// instances over one file each read half of it. A reader owns the lines
// that start in its share. If its share starts in the middle of a line, it
// skips to after the next newline, and it reads on past the end of its
// share to finish the line that crosses it. Every line is thus read by
// exactly one instance, and the instances together read the files in
// order.
//
// A line is handed to the decoder without its "\n" or "\r\n". Empty lines
// are skipped, and Options.Header skips the first line of each file.
// Reading does not allocate per record: a reader reads big chunks, converts
// each chunk to a string once, and hands the decoder substrings of it, so
// a record may keep substrings of its line without copying. A record that
// does keep them keeps its whole chunk alive.
//
// A line the decoder rejects fails the job with an error that names the
// file and the line:
//
//	file: events.jsonl:17: missing field "ad_id"
//
// unless Options.DeadLetter is set: then the line is written there, as a
// Letter that says where it was and why it was rejected, and the reader
// goes on. A file that cannot be opened fails Open:
//
//	file: open events.jsonl: no such file or directory
//
// The readers implement weir.Seekable, for checkpoints: a position is a
// segment of the reader's share, the byte offset in its file of the next
// line to read, and the line count, so that errors after Seek still name
// the right line and Header still skips only the first line of a file.
// Seek refuses a position taken on other files: another list of paths,
// or a file whose size changed (named in the error). A file rewritten in
// place with the same size is not noticed. Lines the decoder rejected
// between the position and the crash are rejected again: a DeadLetter of
// OpenDeadLetter skips them, since their positions are in its files, so
// that each bad line is written once; one of NewDeadLetter writes them
// again.
//
// They also implement weir.Rescalable: SeekSplits resumes, with another
// parallelism, from the positions of all the old readers. A new reader
// reads, in order, the lines that start in its share of the bytes and
// that no old reader had read; errors name the right line, and Header
// skips a file's first line if it was left unread.
//
// # Sinks
//
// CSVWriter, JSONLinesWriter and Stdout write one line per record (Stdout
// with the field names of structs, as %+v prints them). They
// buffer their output and flush it at the end of each epoch and on Close;
// they are safe for concurrent use, so one sink value can serve several
// sink instances. They never close the writer they are given.
//
// # Usage
//
//	dead, err := file.OpenDeadLetter("rejects.jsonl")
//	...
//	defer dead.Close()
//	src := file.JSONLines(paths, decodeEvent, file.Options{DeadLetter: dead})
//	out := file.CSVWriter(w, []string{"ad_id", "count"}, func(c AdCount, row []string) []string {
//		return append(row, c.AdID, strconv.FormatInt(c.Count, 10))
//	})
package file
