package wheelvar_test

import (
	"encoding/json"
	"expvar"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/wheelvar"
)

// TestPublish: the published variable is the wheel's Stats as JSON, read
// anew at each request of /debug/vars.
func TestPublish(t *testing.T) {
	name := fresh("test_wheel")
	clk := clock.NewVirtual(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	wheelvar.Publish(name, w)
	for range 5 {
		w.AfterFunc(time.Second, func() {})
	}
	w.AfterFunc(time.Hour, func() {}).Stop()
	clk.Advance(time.Second)

	rec := httptest.NewRecorder()
	expvar.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/vars", nil))
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &vars); err != nil {
		t.Fatalf("/debug/vars: %v\n%s", err, rec.Body)
	}
	var st timewheel.Stats
	if err := json.Unmarshal(vars[name], &st); err != nil {
		t.Fatalf("/debug/vars[%q]: %v\n%s", name, err, rec.Body)
	}
	if want := w.Stats(); st != want {
		t.Fatalf("published %+v, want %+v", st, want)
	}
	if st.Started != 6 || st.Stopped != 1 || st.Fired != 5 || st.Lateness.Tick != time.Millisecond {
		t.Fatalf("published %+v", st)
	}
}

// publishDefault publishes the default wheel once per process.
var publishDefault sync.Once

// Publishing the default wheel, as a service does once at start-up: a
// name is published once per process, hence the sync.Once.
func ExamplePublish() {
	publishDefault.Do(func() { wheelvar.Publish("timewheel_default", timewheel.Default()) })
	read := func() (st timewheel.Stats) {
		json.Unmarshal([]byte(expvar.Get("timewheel_default").String()), &st)
		return st
	}
	before := read()
	timewheel.AfterFunc(time.Hour, func() {}).Stop()
	after := read()
	fmt.Println("started", after.Started-before.Started, "stopped", after.Stopped-before.Stopped)
	// Output: started 1 stopped 1
}
