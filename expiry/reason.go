package expiry

import "strconv"

// Reason says why an entry left the map.
type Reason uint8

const (
	// Expired: the entry's deadline passed.
	Expired Reason = iota + 1
	// Deleted: Delete removed the entry.
	Deleted
	// Replaced: Set stored a new value under the key; the callback gets
	// the old value.
	Replaced
	// Capacity: the map was full and a new key needed the room.
	Capacity
)

var reasonNames = [...]string{Expired: "expired", Deleted: "deleted", Replaced: "replaced", Capacity: "capacity"}

// String returns the reason in lower case: "expired", "deleted",
// "replaced" or "capacity".
func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}
