// Package snapshot is the framing shared by timewheel's snapshot formats
// (expiry's map, cron's jobs). A snapshot is an 8-byte magic, a big-endian
// uint32 format version, and a body of encoding/gob values. A big-endian
// CRC-32C (Castagnoli) of all that precedes it ends it.
package snapshot

import (
	"bufio"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Format is one snapshot format. The zero Format is not usable.
type Format struct {
	Magic   [8]byte
	Version uint32 // written by Write; the highest Read accepts
	Corrupt error  // wrapped in the errors for damaged input
	Unknown error  // wrapped in the error for a version above Version
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Write writes the header, the gob values body encodes, and the checksum
// to w. It returns the first error of body or of w.
func (f Format) Write(w io.Writer, body func(*gob.Encoder) error) error {
	bw := bufio.NewWriter(w)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)
	var head [12]byte
	copy(head[:], f.Magic[:])
	binary.BigEndian.PutUint32(head[8:], f.Version)
	out.Write(head[:]) // errors surface at Flush
	if err := body(gob.NewEncoder(out)); err != nil {
		return err
	}
	bw.Write(crc.Sum(nil))
	return bw.Flush()
}

// Read checks the header of a snapshot on r, lets body decode the gob
// values, and checks the checksum. Errors for damaged input wrap
// f.Corrupt, for a newer version f.Unknown; an error of body is returned
// as it is.
//
// Read takes from r exactly the bytes of the snapshot, so that snapshots
// can follow each other on one stream or in one file. It reads an
// io.ByteReader (a bytes.Buffer, a bufio.Reader) directly. It reads an
// io.Seeker that can seek (a file) through a buffer, then seeks back over
// what the buffer holds beyond the snapshot. It reads any other reader a
// gob message at a time, with no buffer.
func (f Format) Read(r io.Reader, body func(*gob.Decoder) error) (err error) {
	cr := &crcReader{r: r, h: crc32.New(castagnoli)}
	cr.br, _ = r.(io.ByteReader)
	if s, ok := r.(io.Seeker); ok && cr.br == nil && seekable(s) {
		b := bufio.NewReader(r)
		cr.r, cr.br = b, b
		defer func() {
			if _, serr := s.Seek(-int64(b.Buffered()), io.SeekCurrent); serr != nil && err == nil {
				err = fmt.Errorf("snapshot: seeking back to the end of the snapshot: %w", serr)
			}
		}()
	}
	var head [12]byte
	if _, err := io.ReadFull(cr, head[:]); err != nil {
		return fmt.Errorf("%w: header: %v", f.Corrupt, err)
	}
	if [8]byte(head[:8]) != f.Magic {
		return fmt.Errorf("%w: magic %q, want %q", f.Corrupt, head[:8], f.Magic[:])
	}
	switch v := binary.BigEndian.Uint32(head[8:]); {
	case v == 0:
		return fmt.Errorf("%w: version 0", f.Corrupt)
	case v > f.Version:
		return fmt.Errorf("%w %d: this build reads versions 1 to %d", f.Unknown, v, f.Version)
	}
	// cr is an io.ByteReader: gob reads no further than its values.
	if err := body(gob.NewDecoder(cr)); err != nil {
		return err
	}
	sum := cr.h.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(cr.r, tail[:]); err != nil {
		return fmt.Errorf("%w: checksum: %v", f.Corrupt, err)
	}
	if got := binary.BigEndian.Uint32(tail[:]); got != sum {
		return fmt.Errorf("%w: checksum %08x, computed %08x", f.Corrupt, got, sum)
	}
	return nil
}

// seekable reports whether s can seek: a pipe's *os.File is an io.Seeker
// that cannot.
func seekable(s io.Seeker) bool {
	_, err := s.Seek(0, io.SeekCurrent)
	return err == nil
}

// crcReader hashes the bytes read through it. It is an io.ByteReader, so
// that a gob.Decoder reads through it exactly the bytes of its values
// (and does not wrap it in a buffer that reads ahead).
type crcReader struct {
	r   io.Reader
	br  io.ByteReader // r's own ReadByte, if it has one
	h   hash.Hash32
	one [1]byte
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	return n, err
}

// ReadByte reads one byte: with r's ReadByte if it has one, else with
// one Read.
func (c *crcReader) ReadByte() (byte, error) {
	if c.br == nil {
		if _, err := io.ReadFull(c.r, c.one[:]); err != nil {
			return 0, err
		}
		c.h.Write(c.one[:])
		return c.one[0], nil
	}
	b, err := c.br.ReadByte()
	if err == nil {
		c.one[0] = b
		c.h.Write(c.one[:])
	}
	return b, err
}
