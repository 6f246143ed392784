package snapshot

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var (
	errCorrupt = errors.New("corrupt")
	errVersion = errors.New("version")
	format     = Format{Magic: [8]byte{'T', 'E', 'S', 'T', 'S', 'N', 'A', 'P'}, Version: 2, Corrupt: errCorrupt, Unknown: errVersion}
)

func write(t *testing.T, f Format, v string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f.Write(&buf, func(enc *gob.Encoder) error { return enc.Encode(v) }); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func read(f Format, data []byte) (string, error) {
	var v string
	err := f.Read(bytes.NewReader(data), func(dec *gob.Decoder) error {
		if err := dec.Decode(&v); err != nil {
			return errors.Join(f.Corrupt, err)
		}
		return nil
	})
	return v, err
}

func TestRoundTrip(t *testing.T) {
	got, err := read(format, write(t, format, "hello"))
	if err != nil || got != "hello" {
		t.Fatalf("read %q, %v; want hello", got, err)
	}
}

// TestDamage cuts the input at every length and flips every byte: each
// must be refused as corrupt, never read as a value.
func TestDamage(t *testing.T) {
	data := write(t, format, "a value long enough to matter")
	for n := range len(data) {
		if _, err := read(format, data[:n]); !errors.Is(err, errCorrupt) {
			t.Fatalf("cut at %d: %v, want corrupt", n, err)
		}
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		_, err := read(format, bad)
		if !errors.Is(err, errCorrupt) && !(i >= 8 && i < 12 && errors.Is(err, errVersion)) {
			t.Fatalf("byte %d flipped: %v, want corrupt", i, err)
		}
	}
}

func TestNewerVersion(t *testing.T) {
	newer := format
	newer.Version = 3
	if _, err := read(format, write(t, newer, "x")); !errors.Is(err, errVersion) {
		t.Fatalf("newer version: %v, want the version error", err)
	}
	older := format
	older.Version = 1
	if got, err := read(format, write(t, older, "x")); err != nil || got != "x" {
		t.Fatalf("older version: %q, %v", got, err)
	}
}

// TestTwoOnOneStream writes two snapshots to one stream and reads both
// back, from a bytes.Buffer (an io.ByteReader), a file (an io.Seeker) and
// a reader that is neither: Read must stop at the end of its snapshot.
// It used to read ahead through a bufio.Reader, so the first Read
// emptied a buffer and the second failed with "header: EOF".
func TestTwoOnOneStream(t *testing.T) {
	first, second := write(t, format, "first"), write(t, format, "second")
	both := append(bytes.Clone(first), second...)
	file := func(t *testing.T) io.Reader {
		f, err := os.Create(filepath.Join(t.TempDir(), "snapshots"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Write(both); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name   string
		stream func(*testing.T) io.Reader
	}{
		{"bytes.Buffer", func(*testing.T) io.Reader { return bytes.NewBuffer(bytes.Clone(both)) }},
		{"file", file},
		{"plain reader", func(*testing.T) io.Reader { return struct{ io.Reader }{bytes.NewReader(both)} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.stream(t)
			for i, want := range []string{"first", "second"} {
				var got string
				err := format.Read(r, func(dec *gob.Decoder) error { return dec.Decode(&got) })
				if err != nil || got != want {
					t.Fatalf("snapshot %d: %q, %v; want %q", i+1, got, err, want)
				}
				if f, ok := r.(*os.File); ok && i == 0 {
					if at, _ := f.Seek(0, io.SeekCurrent); at != int64(len(first)) {
						t.Errorf("the file is at %d after the first snapshot, which ends at %d", at, len(first))
					}
				}
			}
			if n, _ := io.Copy(io.Discard, r); n != 0 {
				t.Errorf("%d bytes left after both snapshots", n)
			}
		})
	}
}
