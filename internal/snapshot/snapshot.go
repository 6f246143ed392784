// Package snapshot is the framing shared by timewheel's snapshot formats
// (expiry's map, cron's jobs): an 8-byte magic, a big-endian uint32
// format version, a body of encoding/gob values, and a big-endian CRC-32C
// (Castagnoli) of all that precedes it.
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
func (f Format) Read(r io.Reader, body func(*gob.Decoder) error) error {
	br := bufio.NewReader(r)
	cr := &crcReader{r: br, h: crc32.New(castagnoli)}
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
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return fmt.Errorf("%w: checksum: %v", f.Corrupt, err)
	}
	if got := binary.BigEndian.Uint32(tail[:]); got != sum {
		return fmt.Errorf("%w: checksum %08x, computed %08x", f.Corrupt, got, sum)
	}
	return nil
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
