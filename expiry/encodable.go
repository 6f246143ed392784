package expiry

import (
	"encoding"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unsafe"
)

// ErrUnencodable is returned, wrapped with the position of the entry and
// the type, by Snapshot for a key or value that a snapshot cannot hold as
// it is. Snapshot returns it rather than write what Restore would read
// back as something else. Restore returns it for a Map whose K or V no
// snapshot can hold. A snapshot cannot hold:
//   - a func, a chan or an unsafe.Pointer, anywhere in the value;
//   - a struct field that encoding/gob leaves out (an unexported one,
//     unless it is blank or of size zero);
//   - a value that refers to itself (gob would follow the cycle for ever);
//   - a pointer in a key: a key is compared by address, and Restore would
//     make new addresses, which no lookup finds;
//   - what gob itself refuses, such as an interface holding a type not
//     registered with gob.Register.
//
// A type with its own GobEncode, MarshalBinary or MarshalText method is
// taken as it encodes itself: that is how to put a type with unexported
// fields in a snapshot.
var ErrUnencodable = errors.New("expiry: snapshot cannot hold")

// encodability is what a snapshot can make of the values of one type.
type encodability struct {
	problem string // why no value of the type can be held; "" if values can be
	walk    bool   // values must be looked at too: the type holds an interface or refers to itself
}

// checkTypes returns the error for K or V if no snapshot can hold values
// of them, and whether their values must be walked. n is the number of
// entries, for the position (the first one) in the error.
func checkTypes[K comparable, V any](n int) (walk bool, err error) {
	for _, part := range [...]struct {
		what string
		t    reflect.Type
	}{{"key", reflect.TypeFor[K]()}, {"value", reflect.TypeFor[V]()}} {
		e := typeEncodability(part.t, part.what == "key")
		if e.problem != "" {
			where := ""
			if n > 0 {
				where = fmt.Sprintf("entry 0 of %d: ", n)
			}
			return false, fmt.Errorf("%w %s%s of type %v: %s", ErrUnencodable, where, part.what, part.t, e.problem)
		}
		walk = walk || e.walk
	}
	return walk, nil
}

// checkRecords returns an error wrapping ErrUnencodable for the first
// record a snapshot cannot hold. The complexity is O(1) for types without
// interfaces or self-reference, and O(size of the values) for the others.
func checkRecords[K comparable, V any](recs []snapEntry[K, V]) error {
	walk, err := checkTypes[K, V](len(recs))
	if err != nil || !walk {
		return err
	}
	onPath := map[visit]bool{}
	for i := range recs {
		for _, part := range [...]struct {
			what string
			v    reflect.Value
		}{{"key", reflect.ValueOf(&recs[i].Key).Elem()}, {"value", reflect.ValueOf(&recs[i].Value).Elem()}} {
			if problem := walkValue(part.v, onPath, part.what == "key"); problem != "" {
				return fmt.Errorf("%w entry %d of %d: %s of type %v%s", ErrUnencodable, i, len(recs), part.what, part.v.Type(), problem)
			}
		}
	}
	return nil
}

// locateEncodeError returns the error for the first of recs (from
// position off of n) that gob fails to encode on its own. It returns nil
// if each one encodes: then err, the error of encoding them together,
// came from the writer.
func locateEncodeError[K comparable, V any](recs []snapEntry[K, V], off, n int) error {
	for i := range recs {
		if err := gob.NewEncoder(io.Discard).Encode(recs[i : i+1]); err != nil {
			return fmt.Errorf("%w entry %d of %d: %v", ErrUnencodable, off+i, n, err)
		}
	}
	return nil
}

var (
	gobEncoder = reflect.TypeFor[gob.GobEncoder]()
	binEncoder = reflect.TypeFor[encoding.BinaryMarshaler]()
	txtEncoder = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodesItself reports whether gob encodes t with t's own method, as it
// does when t or *t has one.
func encodesItself(t reflect.Type) bool {
	for _, i := range [...]reflect.Type{gobEncoder, binEncoder, txtEncoder} {
		if t.Implements(i) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(i)) {
			return true
		}
	}
	return false
}

// typeEncodability returns what a snapshot can make of t's values, as
// keys of the map if key is set.
func typeEncodability(t reflect.Type, key bool) encodability {
	var e encodability
	e.problem = typeProblem(t, key, map[reflect.Type]bool{}, &e.walk)
	return e
}

// typeProblem returns why no value of t can be held, or "". A key cannot
// hold a pointer: it is compared by address, and a snapshot keeps no
// addresses (Restore makes new ones, which no lookup would find). It sets
// *walk if t holds an interface or refers to itself; onPath holds the
// types being checked, outside t.
func typeProblem(t reflect.Type, key bool, onPath map[reflect.Type]bool, walk *bool) string {
	if onPath[t] {
		*walk = true // t refers to itself: a value may too
		return ""
	}
	if encodesItself(t) {
		return ""
	}
	onPath[t] = true
	defer delete(onPath, t)
	switch t.Kind() {
	case reflect.Func, reflect.Chan:
		return "gob cannot encode a " + t.Kind().String()
	case reflect.UnsafePointer:
		return "gob cannot encode an unsafe.Pointer"
	case reflect.Interface:
		*walk = true
	case reflect.Pointer:
		if key {
			return "a key's pointer is compared by address, which a snapshot cannot keep"
		}
		return typeProblem(t.Elem(), key, onPath, walk)
	case reflect.Array:
		if t.Len() == 0 {
			return ""
		}
		return step("element", t.Elem(), typeProblem(t.Elem(), key, onPath, walk))
	case reflect.Slice:
		return step("element", t.Elem(), typeProblem(t.Elem(), key, onPath, walk))
	case reflect.Map:
		if p := typeProblem(t.Key(), key, onPath, walk); p != "" {
			return step("map key", t.Key(), p)
		}
		return step("map value", t.Elem(), typeProblem(t.Elem(), key, onPath, walk))
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case f.Name == "_" || (!f.IsExported() && f.Type.Size() == 0):
			case !f.IsExported():
				return fmt.Sprintf("field %s is unexported, and gob drops it", f.Name)
			default:
				if p := typeProblem(f.Type, key, onPath, walk); p != "" {
					return step("field "+f.Name, f.Type, p)
				}
			}
		}
	}
	return ""
}

// step puts the part of a value where a problem lies in front of it.
func step(what string, t reflect.Type, problem string) string {
	if problem == "" {
		return ""
	}
	return fmt.Sprintf("%s of type %v: %s", what, t, problem)
}

// visit is a pointer, map or slice being walked, with its type.
type visit struct {
	p unsafe.Pointer
	t reflect.Type
}

// walkValue returns why v, a key if key is set, cannot be held, as
// ": problem" after the description of v, or "". It looks into
// interfaces, and for cycles: onPath holds what is being walked, outside
// v. A value shared by two parts of v is no cycle (gob writes it twice).
func walkValue(v reflect.Value, onPath map[visit]bool, key bool) string {
	t := v.Type()
	if encodesItself(t) {
		return ""
	}
	switch t.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return ""
		}
		d := v.Elem()
		if e := typeEncodability(d.Type(), key); e.problem != "" {
			return fmt.Sprintf(" holding %v: %s", d.Type(), e.problem)
		} else if !e.walk {
			return ""
		}
		if p := walkValue(d, onPath, key); p != "" {
			return fmt.Sprintf(" holding %v%s", d.Type(), p)
		}
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() || (t.Kind() == reflect.Slice && v.Len() == 0) {
			return ""
		}
		at := visit{v.UnsafePointer(), t}
		if onPath[at] {
			return ": a cycle, which gob would follow for ever"
		}
		onPath[at] = true
		defer delete(onPath, at)
		switch t.Kind() {
		case reflect.Pointer:
			return walkValue(v.Elem(), onPath, key)
		case reflect.Slice:
			return walkElems(v, onPath, key)
		}
		for it := v.MapRange(); it.Next(); {
			if p := walkValue(it.Key(), onPath, key); p != "" {
				return fmt.Sprintf(": map key of type %v%s", t.Key(), p)
			}
			if p := walkValue(it.Value(), onPath, key); p != "" {
				return fmt.Sprintf(": map value of type %v%s", t.Elem(), p)
			}
		}
	case reflect.Array:
		return walkElems(v, onPath, key)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				if p := walkValue(v.Field(i), onPath, key); p != "" {
					return fmt.Sprintf(": field %s of type %v%s", f.Name, f.Type, p)
				}
			}
		}
	}
	return ""
}

// walkElems walks the elements of an array or slice.
func walkElems(v reflect.Value, onPath map[visit]bool, key bool) string {
	for i := range v.Len() {
		if p := walkValue(v.Index(i), onPath, key); p != "" {
			return fmt.Sprintf(": element of type %v%s", v.Type().Elem(), p)
		}
	}
	return ""
}
