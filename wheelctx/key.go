package wheelctx

import "context"

// cancelCtxKey is package context's private key with which context.Cause
// and context.WithCancel ask a context for the *cancelCtx it derives from.
// It is learned once, by offering context.Cause a context that records the
// key it is asked for. (context.Cause has asked done contexts this way since Go
// 1.20; a test pins it.) If the probe learns nothing, Value never sees the key
// and contexts lose only their custom causes, which then read as Err.
var cancelCtxKey = func() any {
	var key any
	context.Cause(keyProbe{Context: context.Background(), key: &key})
	return key
}()

type keyProbe struct {
	context.Context
	key *any
}

// Err reports the probe done: context.Cause asks Value only of a done
// context.
func (keyProbe) Err() error { return context.Canceled }

// Value records the key it is asked for.
func (p keyProbe) Value(k any) any {
	*p.key = k
	return nil
}
