package cron

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/timewheel/timewheel/internal/nilarg"
	"github.com/timewheel/timewheel/internal/snapshot"
)

// ErrCorrupt is returned, wrapped with what was wrong, by Restore for input
// that is not a snapshot or is damaged: wrong magic, truncated, undecodable,
// or failing its checksum. Nothing is restored from such an input.
var ErrCorrupt = errors.New("cron: corrupt snapshot")

// ErrVersion is returned, wrapped with the version found, by Restore for a
// snapshot written in a format version this build does not read, such as
// one from a newer release. Nothing is restored from such an input.
var ErrVersion = errors.New("cron: unsupported snapshot version")

// SnapshotVersion is the format version Snapshot writes, and the highest
// Restore reads.
const SnapshotVersion = 1

var format = snapshot.Format{
	Magic:   [8]byte{'T', 'W', 'C', 'R', 'O', 'N', 'J', 'B'},
	Version: SnapshotVersion,
	Corrupt: ErrCorrupt,
	Unknown: ErrVersion,
}

// snapJob is the record of one job in a snapshot.
type snapJob struct {
	Name string
	Spec string // as given to Add; "" for AddSchedule
	Zone string // the job's time zone name
	Next int64  // next run, wall clock Unix ns; 0 for none
	Runs int    // times fallen due, for WithLimitRuns; absent before it
}

// snapBody is the gob value of a snapshot.
type snapBody struct {
	Saved int64 // wall clock at writing, Unix ns
	Jobs  []snapJob
}

// Snapshot writes each job's next run to w, so that Restore can take the
// schedule up where it was after a restart. A run that falls due while the
// process is down then runs at once instead of being lost. Jobs are
// functions and are not written: they are named, and the program adds
// them again before it restores. Snapshot panics if w is nil or holds a
// nil pointer. The complexity is O(n log n) in the number of jobs.
//
// The format, version 1, is:
//
//	magic    8 bytes  "TWCRONJB"
//	version  4 bytes  big-endian uint32, 1
//	body     one encoding/gob value {Saved int64, Jobs []{Name, Spec,
//	         Zone string, Next int64, Runs int}}, jobs sorted by name;
//	         Saved and Next are wall-clock Unix nanoseconds, Next 0 for
//	         no run; Runs counts the times fallen due (WithLimitRuns),
//	         absent in snapshots of earlier releases
//	checksum 4 bytes  big-endian CRC-32C (Castagnoli) of all the above
func (s *Scheduler) Snapshot(w io.Writer) error {
	s.notNil("Snapshot")
	if nilarg.Is(w) {
		panic("cron: Snapshot called with a nil io.Writer" + nilarg.Type(w))
	}
	s.mu.Lock()
	s.readyLocked()
	body := snapBody{Saved: s.w.Now().UnixNano()}
	for _, j := range s.jobsLocked() {
		rec := snapJob{Name: j.name, Spec: j.set.spec, Zone: j.set.loc.String(), Runs: j.fired}
		if !j.next.IsZero() {
			rec.Next = j.next.UnixNano()
		}
		body.Jobs = append(body.Jobs, rec)
	}
	s.mu.Unlock()

	err := format.Write(w, func(enc *gob.Encoder) error { return enc.Encode(body) })
	if err != nil {
		return fmt.Errorf("cron: Snapshot: %w", err)
	}
	return nil
}

// Restore reads a snapshot written by Snapshot and gives each job found
// in it, by name, the next run it had. The runs whose time passed while
// the process was down are missed runs. At once, the job runs the first
// of them once, skips them or makes them all up, as its [OnMissed] policy
// says. (A run within the grace period, [WithGrace], runs as on time.) A
// job whose spec or zone changed since the snapshot, or that has no run
// recorded, keeps the schedule it has. Records of jobs not added are
// ignored.
//
// Restore reads the whole input before it changes anything. For input
// that is not a snapshot or is damaged it returns an error wrapping
// ErrCorrupt; for an unknown format version, one wrapping ErrVersion. The
// jobs are then left as they were. It returns ErrStopped after Stop or
// once the wheel is closed. Restore panics if r is nil or holds a nil
// pointer. The complexity is O(n) in the records read.
func (s *Scheduler) Restore(r io.Reader) error {
	s.notNil("Restore")
	if nilarg.Is(r) {
		panic("cron: Restore called with a nil io.Reader" + nilarg.Type(r))
	}
	body, err := readSnapshot(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.readyLocked()
	if err := s.stoppedLocked(); err != nil {
		return err
	}
	now := s.w.Now()
	for _, rec := range body.Jobs {
		j, ok := s.jobs[rec.Name]
		if !ok || rec.Spec != j.set.spec || rec.Zone != j.set.loc.String() {
			continue
		}
		if j.set.limit > 0 && rec.Runs > 0 {
			j.fired = rec.Runs
			if j.fired >= j.set.limit {
				j.setNextLocked(time.Time{}, now)
				continue
			}
		}
		if rec.Next != 0 {
			j.setNextLocked(time.Unix(0, rec.Next), now)
			if !now.Before(j.next.Add(j.delay)) {
				j.timer.Reset(0) // missed: fire at once
			}
		}
	}
	return nil
}

// readSnapshot decodes and checks a whole snapshot.
func readSnapshot(r io.Reader) (snapBody, error) {
	var body snapBody
	err := format.Read(r, func(dec *gob.Decoder) error {
		if err := dec.Decode(&body); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil
	})
	return body, err
}
