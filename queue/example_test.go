package queue_test

import (
	"fmt"

	"github.com/timewheel/timewheel/queue"
)

// A Wheel counts in ticks and reads no clock: the caller says what tick it
// is by calling Expire.
func Example() {
	w := queue.NewWheel()
	e := w.Schedule(5) // due at tick 5
	w.Expire(4, func(*queue.Entry) { fmt.Println("early") })
	w.Expire(5, func(*queue.Entry) { fmt.Println("fired at tick", w.Now()) })
	fmt.Println(w.Cancel(e)) // false: it has fired
	// Output:
	// fired at tick 5
	// false
}
