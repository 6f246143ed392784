package expiry

import (
	"bufio"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"
)

// ErrCorrupt is returned, wrapped with what was wrong, by Restore for input
// that is not a snapshot or is damaged: wrong magic, truncated, undecodable,
// or failing its checksum. Nothing is restored from such an input.
var ErrCorrupt = errors.New("expiry: corrupt snapshot")

// ErrVersion is returned, wrapped with the version found, by Restore for a
// snapshot written in a format version this build does not read, such as
// one from a newer release. Nothing is restored from such an input.
var ErrVersion = errors.New("expiry: unsupported snapshot version")

// SnapshotVersion is the format version Snapshot writes, and the highest
// Restore reads.
const SnapshotVersion = 1

var magic = [8]byte{'T', 'W', 'E', 'X', 'P', 'I', 'R', 'Y'}

// snapHeader is the first gob value of a snapshot.
type snapHeader struct {
	Saved int64 // wall clock at writing, Unix ns
	Count int   // entries that follow
}

// snapEntry is one entry of a snapshot.
type snapEntry[K comparable, V any] struct {
	Key      K
	Value    V
	Deadline int64 // wall clock, Unix ns
	TTL      int64 // ns, what Touch renews
}

// snapChunk is how many entries go in one gob value.
const snapChunk = 1024

// Snapshot writes the live entries, with their deadlines, to w, so that
// Restore can read them back after a restart. It returns an error if w
// fails or gob cannot encode a key or value. The complexity is O(n); the
// lock is held only while the entries are copied.
//
// The format, version 1, is:
//
//	magic    8 bytes  "TWEXPIRY"
//	version  4 bytes  big-endian uint32, 1
//	body     an encoding/gob stream: a header {Saved, Count int64/int}
//	         then Count entries {Key K, Value V, Deadline, TTL int64}
//	         in slices of at most 1024; Saved and Deadline are wall-clock
//	         Unix nanoseconds, TTL is nanoseconds
//	checksum 4 bytes  big-endian CRC-32C (Castagnoli) of all the above
//
// Entries come in bucket order, as from All.
func (m *Map[K, V]) Snapshot(w io.Writer) error {
	recs := m.records()
	bw := bufio.NewWriter(w)
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	out := io.MultiWriter(bw, crc)
	var head [12]byte
	copy(head[:], magic[:])
	binary.BigEndian.PutUint32(head[8:], SnapshotVersion)
	out.Write(head[:]) // errors surface at Flush
	enc := gob.NewEncoder(out)
	if err := enc.Encode(snapHeader{Saved: m.w.Now().UnixNano(), Count: len(recs)}); err != nil {
		return fmt.Errorf("expiry: Snapshot: %w", err)
	}
	for len(recs) > 0 {
		n := min(len(recs), snapChunk)
		if err := enc.Encode(recs[:n]); err != nil {
			return fmt.Errorf("expiry: Snapshot: %w", err)
		}
		recs = recs[n:]
	}
	bw.Write(crc.Sum(nil))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("expiry: Snapshot: %w", err)
	}
	return nil
}

// records copies the live entries for a snapshot.
func (m *Map[K, V]) records() []snapEntry[K, V] {
	now := m.now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	recs := make([]snapEntry[K, V], 0, len(m.items))
	for _, b := range m.sortedBucketsLocked() {
		for e := b.head; e != nil; e = e.next {
			if e.deadline > now {
				at := m.epoch.Add(time.Duration(e.deadline)).UnixNano()
				recs = append(recs, snapEntry[K, V]{e.key, e.val, at, int64(e.ttl)})
			}
		}
	}
	return recs
}

// Restore reads a snapshot written by Snapshot and sets its entries, each
// with the deadline it had, replacing the values of keys already present
// (Reason Replaced). Entries whose deadline has passed by the wheel's
// clock, say while the process was down, are not set: they are evicted at
// once with Reason Expired. With a capacity, entries beyond it are evicted
// as Set would.
//
// Restore reads the whole input before it changes anything: for input that
// is not a snapshot or is damaged it returns an error wrapping ErrCorrupt,
// for an unknown format version one wrapping ErrVersion, and the map is
// left as it was. It returns ErrClosed on a closed map. The complexity is
// O(n) in the entries read.
func (m *Map[K, V]) Restore(r io.Reader) error {
	recs, err := readSnapshot[K, V](r)
	if err != nil {
		return err
	}
	now := m.now()
	nowWall := m.epoch.Add(time.Duration(now))
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	for _, rec := range recs {
		left := time.Unix(0, rec.Deadline).Sub(nowWall)
		if left <= 0 {
			m.queueLocked(rec.Key, rec.Value, Expired)
			continue
		}
		m.setLocked(rec.Key, rec.Value, time.Duration(rec.TTL), addSat(now, int64(left)), now)
	}
	kick := m.kickLocked()
	m.mu.Unlock()
	m.deliver(kick)
	return nil
}

// readSnapshot decodes and checks a whole snapshot.
func readSnapshot[K comparable, V any](r io.Reader) ([]snapEntry[K, V], error) {
	br := bufio.NewReader(r)
	cr := &crcReader{r: br, h: crc32.New(crc32.MakeTable(crc32.Castagnoli))}
	var head [12]byte
	if _, err := io.ReadFull(cr, head[:]); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if [8]byte(head[:8]) != magic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, head[:8], magic[:])
	}
	switch v := binary.BigEndian.Uint32(head[8:]); {
	case v == 0:
		return nil, fmt.Errorf("%w: version 0", ErrCorrupt)
	case v > SnapshotVersion:
		return nil, fmt.Errorf("%w %d: this build reads versions 1 to %d", ErrVersion, v, SnapshotVersion)
	}
	dec := gob.NewDecoder(cr) // cr is an io.ByteReader: gob reads no further than its values
	var h snapHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if h.Count < 0 {
		return nil, fmt.Errorf("%w: negative entry count %d", ErrCorrupt, h.Count)
	}
	recs := make([]snapEntry[K, V], 0, min(h.Count, 1<<16))
	for len(recs) < h.Count {
		var chunk []snapEntry[K, V]
		if err := dec.Decode(&chunk); err != nil {
			return nil, fmt.Errorf("%w: entry %d of %d: %v", ErrCorrupt, len(recs), h.Count, err)
		}
		if len(chunk) == 0 || len(recs)+len(chunk) > h.Count {
			return nil, fmt.Errorf("%w: %d entries, header says %d", ErrCorrupt, len(recs)+len(chunk), h.Count)
		}
		recs = append(recs, chunk...)
	}
	for i, rec := range recs {
		if rec.TTL <= 0 {
			return nil, fmt.Errorf("%w: entry %d: non-positive ttl %v", ErrCorrupt, i, time.Duration(rec.TTL))
		}
	}
	sum := cr.h.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return nil, fmt.Errorf("%w: checksum: %v", ErrCorrupt, err)
	}
	if got := binary.BigEndian.Uint32(tail[:]); got != sum {
		return nil, fmt.Errorf("%w: checksum %08x, computed %08x", ErrCorrupt, got, sum)
	}
	return recs, nil
}

// crcReader hashes the bytes read through it. It is an io.ByteReader, so
// that a gob.Decoder reads through it exactly the bytes of its values.
type crcReader struct {
	r   *bufio.Reader
	h   hash.Hash32
	one [1]byte
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	return n, err
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.one[0] = b
		c.h.Write(c.one[:])
	}
	return b, err
}
