package expiry

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/timewheel/timewheel/internal/nilarg"
	"github.com/timewheel/timewheel/internal/snapshot"
	"github.com/timewheel/timewheel/internal/ticks"
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

var format = snapshot.Format{
	Magic:   [8]byte{'T', 'W', 'E', 'X', 'P', 'I', 'R', 'Y'},
	Version: SnapshotVersion,
	Corrupt: ErrCorrupt,
	Unknown: ErrVersion,
}

// snapHeader is the first gob value of a snapshot.
type snapHeader struct {
	Saved int64 // wall clock at writing, Unix ns
	Count int   // entries that follow
}

// snapEntry is one entry of a snapshot.
type snapEntry[K comparable, V any] struct {
	Key      K
	Value    V
	Deadline int64 // wall clock, Unix ns; farDeadline past 2262
	TTL      int64 // ns, what Touch renews
}

// snapChunk is how many entries go in one gob value.
const snapChunk = 1024

// farDeadline is the Deadline written for a deadline that Unix nanoseconds
// cannot hold, past 2262-04-11, such as that of a TTL of math.MaxInt64.
// Restore reads it as the latest deadline a map holds, the one Set gives a
// TTL that reaches past the end of time: still far, not expired.
const farDeadline = math.MaxInt64

// farWall is the last time that Unix nanoseconds can hold.
var farWall = time.Unix(0, farDeadline)

// Snapshot writes the live entries, with their deadlines, to w, so that
// Restore can read them back after a restart. It returns:
//   - the error of w, if w fails;
//   - ErrClosed on a closed map, whose entries are gone;
//   - an error wrapping ErrUnencodable, naming the entry and the type, for
//     a key or value a snapshot cannot hold as it is (see ErrUnencodable).
//
// Snapshot's own checks find most such values before it writes anything.
// What gob alone refuses (an unregistered type in an interface) is found
// after a part of the snapshot is written; Restore refuses a part.
// Snapshot panics if w is nil or holds a nil pointer. The complexity is
// O(n), plus the size of the keys and values that hold interfaces or
// refer to themselves, which are looked into. The locks are held only
// while the entries are copied.
//
// The format, version 1, is:
//
//	magic    8 bytes  "TWEXPIRY"
//	version  4 bytes  big-endian uint32, 1
//	body     an encoding/gob stream: a header {Saved, Count int64/int}
//	         then Count entries {Key K, Value V, Deadline, TTL int64}
//	         in slices of at most 1024; Saved and Deadline are wall-clock
//	         Unix nanoseconds, TTL is nanoseconds; a Deadline past the
//	         range of Unix nanoseconds (2262) is written as the largest
//	         int64, which Restore reads as far in the future
//	checksum 4 bytes  big-endian CRC-32C (Castagnoli) of all the above
//
// Entries come in bucket order, as from All.
func (m *Map[K, V]) Snapshot(w io.Writer) error {
	m.notNil("Snapshot")
	if nilarg.Is(w) {
		panic("expiry: Snapshot called with a nil io.Writer" + nilarg.Type(w))
	}
	m.init()
	recs, err := m.records(true)
	if err != nil {
		return err
	}
	for i := range recs {
		at := int64(farDeadline)
		if t := m.epoch.Add(time.Duration(recs[i].Deadline)); t.Before(farWall) {
			at = t.UnixNano()
		}
		recs[i].Deadline = at
	}
	if err := checkRecords(recs); err != nil {
		return err
	}
	err = format.Write(w, func(enc *gob.Encoder) error {
		if err := enc.Encode(snapHeader{Saved: m.w.Now().UnixNano(), Count: len(recs)}); err != nil {
			return err
		}
		for off := 0; off < len(recs); off += snapChunk {
			chunk := recs[off:min(off+snapChunk, len(recs))]
			if err := enc.Encode(chunk); err != nil {
				if bad := locateEncodeError(chunk, off, len(recs)); bad != nil {
					return bad
				}
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrUnencodable):
		return err
	case err != nil:
		return fmt.Errorf("expiry: Snapshot: %w", err)
	}
	return nil
}

// Restore reads a snapshot written by Snapshot and sets its entries, each
// with the deadline it had, replacing the values of keys already present
// (Reason Replaced). An entry written with a deadline past 2262 gets the
// latest deadline the map holds, as a TTL of math.MaxInt64 would. Entries
// whose deadline has passed by the wheel's clock, say while the process
// was down, are not set: they are evicted at once with Reason Expired.
// With a capacity, entries beyond it are evicted as Set would.
//
// Restore reads the whole input before it changes anything. For input
// that is not a snapshot or is damaged it returns an error wrapping
// ErrCorrupt, and for an unknown format version one wrapping ErrVersion;
// the map is left as it was then. It returns ErrClosed on a closed map,
// and an error wrapping both ErrClosed and timewheel.ErrClosed if the
// map's wheel is closed. On a Map whose K or V no snapshot can hold, such
// as a func, it returns an error wrapping ErrUnencodable without reading
// r. Restore panics if r is nil or holds a nil pointer. The complexity is
// O(n) in the entries read.
func (m *Map[K, V]) Restore(r io.Reader) error {
	m.notNil("Restore")
	if nilarg.Is(r) {
		panic("expiry: Restore called with a nil io.Reader" + nilarg.Type(r))
	}
	m.init()
	if _, err := checkTypes[K, V](0); err != nil {
		return err
	}
	recs, err := readSnapshot[K, V](r)
	if err != nil {
		return err
	}
	if err := m.w.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	for _, rec := range recs {
		if err := m.tooHeavy(rec.Key, rec.Value); err != nil {
			return err
		}
	}
	now := m.now()
	nowWall := m.epoch.Add(time.Duration(now))
	m.lockAll()
	if m.shards[0].closed {
		m.unlockAll()
		return ErrClosed
	}
	kick := false
	for _, rec := range recs {
		s, h := m.locate(rec.Key)
		deadline := int64(math.MaxInt64) // as ticks.Add saturates
		if rec.Deadline != farDeadline {
			left := time.Unix(0, rec.Deadline).Sub(nowWall)
			if left <= 0 {
				s.queueLocked(rec.Key, rec.Value, Expired)
				kick = s.takeQueuedLocked() || kick
				continue
			}
			deadline = ticks.Add(now, int64(left))
		}
		s.setLocked(s.items.find(rec.Key, h), rec.Key, h, rec.Value, time.Duration(rec.TTL), deadline, now)
		kick = s.takeQueuedLocked() || kick
	}
	m.unlockAll()
	m.deliver(kick)
	return nil
}

// readSnapshot decodes and checks a whole snapshot.
func readSnapshot[K comparable, V any](r io.Reader) ([]snapEntry[K, V], error) {
	var recs []snapEntry[K, V]
	err := format.Read(r, func(dec *gob.Decoder) error {
		var h snapHeader
		if err := dec.Decode(&h); err != nil {
			return fmt.Errorf("%w: header: %v", ErrCorrupt, err)
		}
		if h.Count < 0 {
			return fmt.Errorf("%w: negative entry count %d", ErrCorrupt, h.Count)
		}
		recs = make([]snapEntry[K, V], 0, min(h.Count, 1<<16))
		for len(recs) < h.Count {
			var chunk []snapEntry[K, V]
			if err := dec.Decode(&chunk); err != nil {
				return fmt.Errorf("%w: entry %d of %d: %v", ErrCorrupt, len(recs), h.Count, err)
			}
			if len(chunk) == 0 || len(recs)+len(chunk) > h.Count {
				return fmt.Errorf("%w: %d entries, header says %d", ErrCorrupt, len(recs)+len(chunk), h.Count)
			}
			recs = append(recs, chunk...)
		}
		keys := keyKindOf(reflect.TypeFor[K]())
		for i, rec := range recs {
			if rec.TTL <= 0 {
				return fmt.Errorf("%w: entry %d: non-positive ttl %v", ErrCorrupt, i, time.Duration(rec.TTL))
			}
			if keys != plainKeys {
				if p := keyProblem(rec.Key, keys, true); p != "" {
					return fmt.Errorf("%w: entry %d of %d: %s", ErrCorrupt, i, len(recs), p)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}
