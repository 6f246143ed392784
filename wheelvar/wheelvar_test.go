package wheelvar_test

import (
	"encoding/json"
	"expvar"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/wheelvar"
)

// TestPublish: the published variable is the wheel's Stats as JSON, read
// anew at each request of /debug/vars.
func TestPublish(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	wheelvar.Publish("test_wheel", w)
	for range 5 {
		w.AfterFunc(time.Second, func() {})
	}
	w.AfterFunc(time.Hour, func() {}).Stop()
	clk.Advance(time.Second)

	rec := httptest.NewRecorder()
	expvar.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/vars", nil))
	var vars struct {
		Wheel timewheel.Stats `json:"test_wheel"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &vars); err != nil {
		t.Fatalf("/debug/vars: %v\n%s", err, rec.Body)
	}
	if got, want := vars.Wheel, w.Stats(); got != want {
		t.Fatalf("published %+v, want %+v", got, want)
	}
	if st := vars.Wheel; st.Started != 6 || st.Stopped != 1 || st.Fired != 5 || st.Lateness.Tick != time.Millisecond {
		t.Fatalf("published %+v", st)
	}
}

// Publishing the default wheel, as a service does once at start-up.
func ExamplePublish() {
	wheelvar.Publish("timewheel_default", timewheel.Default())
	timewheel.AfterFunc(time.Hour, func() {}).Stop()
	var st timewheel.Stats
	json.Unmarshal([]byte(expvar.Get("timewheel_default").String()), &st)
	fmt.Println("started", st.Started, "stopped", st.Stopped)
	// Output: started 1 stopped 1
}
