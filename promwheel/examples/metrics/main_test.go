package main

import (
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/timewheel/timewheel"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// reading is what one scrape of each endpoint says of the wheel.
type reading struct {
	pending, fired         float64 // /metrics
	varsPending, varsFired uint64  // /debug/vars
}

func read(t *testing.T, client *http.Client, base string) reading {
	t.Helper()
	var r reading
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    *float64
	}{
		{"timewheel_timers_pending", &r.pending},
		{"timewheel_timers_fired_total", &r.fired},
	} {
		f := fams[c.name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("/metrics: %s is %v", c.name, f)
		}
		if m := f.Metric[0]; m.Gauge != nil {
			*c.v = m.Gauge.GetValue()
		} else {
			*c.v = m.Counter.GetValue()
		}
	}

	resp, err = client.Get(base + "/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	var vars struct{ Timewheel timewheel.Stats }
	err = json.NewDecoder(resp.Body).Decode(&vars)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("/debug/vars: %v", err)
	}
	r.varsPending, r.varsFired = uint64(vars.Timewheel.Pending), vars.Timewheel.Fired
	return r
}

// TestServes starts the example on a loopback port, scrapes /metrics and
// /debug/vars until both have shown the pending count move and the fired
// total grow, a bounded number of times.
func TestServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := start(ln)
	defer a.close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	base := "http://" + ln.Addr().String()

	first := read(t, client, base)
	var last reading
	pendings, varsPendings := map[float64]bool{}, map[uint64]bool{}
	for range 500 {
		last = read(t, client, base)
		pendings[last.pending] = true
		varsPendings[last.varsPending] = true
		if len(pendings) > 1 && len(varsPendings) > 1 && last.fired > first.fired && last.varsFired > first.varsFired {
			return
		}
		time.Sleep(10 * time.Millisecond) // lets the workload run; not a timing assertion
	}
	t.Fatalf("after 500 scrapes: first %+v, last %+v, pending seen %v and %v", first, last, pendings, varsPendings)
}
