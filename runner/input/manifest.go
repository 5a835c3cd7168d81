package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Manifest yields shard index (0-based) of count of the records of the
// manifest file at path, records separated by sep, reading only that
// shard's bytes: the shard is the byte range [size×index/count,
// size×(index+1)/count) of the file, and a record belongs to the shard in
// which its first byte lies, as Hadoop's TextInputFormat splits a file.
// Shard index seeks to its start and skips to the first record that starts
// there or after it (reading one byte before the start, to know whether a
// record starts right at it), then reads its records to the last one that
// starts before its end, to that record's separator. So the count shards
// are disjoint, cover every record, and each reads its share of the file
// (plus one record), in time proportional to its share whatever the
// file's size. The shards follow the bytes, not the records' values: a
// manifest rewritten with other records moves records between shards, so
// a run's manifest is written once and kept (see docs/kubernetes.md).
//
// Records are as Reader yields them. An empty file has no records. A count
// below 1 or an index outside [0, count) is an error.
func Manifest(path string, sep byte, index, count int) Seq {
	return func(yield func(string, error) bool) {
		if count < 1 || index < 0 || index >= count {
			yield("", fmt.Errorf("manifest %s: shard %d of %d does not exist", path, index, count))
			return
		}
		f, err := os.Open(path)
		if err != nil {
			yield("", fmt.Errorf("manifest: %w", err))
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			yield("", fmt.Errorf("manifest: %w", err))
			return
		}
		size := fi.Size()
		start, end := shardRange(size, index, count)
		if err := readShard(f, size, start, end, sep, yield); err != nil {
			yield("", fmt.Errorf("manifest %s: %w", path, err))
		}
	}
}

// shardRange is the byte range of shard index of count of size bytes.
func shardRange(size int64, index, count int) (start, end int64) {
	part := func(i int) int64 {
		// size×i/count without overflow for any size and count.
		q, r := size/int64(count), size%int64(count)
		return q*int64(i) + r*int64(i)/int64(count)
	}
	return part(index), part(index + 1)
}

// readShard yields the records of f that start in [start, end); the
// error is a read error.
func readShard(f io.ReaderAt, size, start, end int64, sep byte, yield func(string, error) bool) error {
	from := max(start-1, 0)
	br := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 64*1024)
	pos := from
	if start > 0 {
		// Skip to the first record that starts at start or after: the
		// byte before start ends a record exactly when one starts there.
		for {
			chunk, err := br.ReadSlice(sep)
			pos += int64(len(chunk))
			if err == nil {
				break
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return err
			}
		}
	}
	for pos < end {
		rec, err := br.ReadSlice(sep)
		if errors.Is(err, bufio.ErrBufferFull) {
			buf := append([]byte(nil), rec...)
			for errors.Is(err, bufio.ErrBufferFull) {
				rec, err = br.ReadSlice(sep)
				buf = append(buf, rec...)
			}
			rec = buf
		}
		pos += int64(len(rec))
		if err == nil {
			rec = rec[:len(rec)-1]
		}
		if len(rec) > 0 || err == nil {
			if !yield(string(rec), nil) {
				return nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}
