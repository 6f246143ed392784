package dashboard_test

import (
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/timewheel/timewheel/durable"
	"github.com/timewheel/timewheel/durable/dashboard"
)

// requireAdmin stands for the program's own authentication: the
// dashboard has none.
func requireAdmin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "ops" || pass != "from a secret store" {
			w.Header().Set("WWW-Authenticate", `Basic realm="jobs"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A program mounts the dashboard of its queues behind its own
// authentication, with the actions on and the payloads hidden. (It needs
// a Redis server, so it is compiled, not run.)
func ExampleNew() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
	orders := durable.New(rdb, durable.WithName("orders"))
	emails := durable.New(rdb, durable.WithName("emails"))
	mux := http.NewServeMux()
	mux.Handle("/admin/jobs/", requireAdmin(dashboard.New(dashboard.Options{Actions: true}, orders, emails)))
	_ = http.ListenAndServe("127.0.0.1:8081", mux)
}
