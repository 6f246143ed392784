package durable

import (
	"time"

	"github.com/timewheel/timewheel/internal/lockcheck"
)

// A clockMap maps Redis's clock onto the wheel's. Each claim measures
// the offset: the server's TIME in the script, less the wheel's clock
// once the reply is back. Since the reply left Redis before that, each
// measurement is at most the true offset. The map keeps the largest, the
// tightest, less drift since it was measured at maxDrift: the true
// offset moves slower than that (NTP slews a clock by 500 ppm at most),
// so a time mapped with it is never early.
type clockMap struct {
	base time.Time // the wheel's clock at the first measurement
	off  int64     // the best offset: server µs less µs since base
	at   int64     // µs since base when off was measured
	ok   bool
}

// maxDrift is the rate, in µs a second, at which a measured offset is
// taken to age: twice NTP's largest slew.
const maxDrift = 1000

// measure notes an offset: the server read server µs before local.
func (c *clockMap) measure(server int64, local time.Time) {
	if !c.ok {
		*c = clockMap{base: local, off: server, ok: true}
		return
	}
	l := local.Sub(c.base).Microseconds()
	if off := server - l; off >= c.offset(l) {
		c.off, c.at = off, l
	}
}

// offset returns the offset at l µs since base, aged since measured.
func (c *clockMap) offset(l int64) int64 {
	return c.off - (l-c.at)*maxDrift/1_000_000
}

// localLocked returns when Redis's clock reads us, on the wheel's clock. mu is
// held.
func (w *worker) localLocked(us int64) time.Time {
	lockcheck.Held(&w.mu, "localLocked")
	l := w.wheel.Since(w.clk.base).Microseconds()
	d := min(max(us-w.clk.offset(l), -1<<40), 1<<40)
	return w.clk.base.Add(time.Duration(d) * time.Microsecond)
}

// serverNowLocked returns Redis's clock now, as the worker knows it: never
// ahead of it. mu is held.
func (w *worker) serverNowLocked() int64 {
	lockcheck.Held(&w.mu, "serverNowLocked")
	l := w.wheel.Since(w.clk.base).Microseconds()
	return l + w.clk.offset(l)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
