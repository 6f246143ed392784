// Package nilarg tells nil arguments apart, for the constructors and
// options of timewheel's packages that take an interface. An argument is
// nil if it is a nil interface, or holds a nil pointer, map, slice,
// channel or func (a nil *net.TCPConn passed as a net.Conn). Its methods
// would fail far from the mistake, so each caller panics at once, naming
// itself.
package nilarg

import (
	"fmt"
	"reflect"
)

// Is reports whether v is nil or holds a nil pointer, map, slice,
// channel or func.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}

// Type names, for a panic message, the type of the nil value v holds:
// " (a nil *net.TCPConn)", or "" for a nil interface.
func Type(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(" (a nil %T)", v)
}
