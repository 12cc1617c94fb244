package snapshot

import (
	"context"
	"sync"
)

// A live watch publishes its first snapshot and then fills its informers' caches from the lists
// that snapshot was built from: thousands of objects stored and indexed while the reader
// diagnoses the snapshot, on the same cores. A reader that shows the diagnosis waits for both.
// WithChangesHeld lets it say when the watch may start following changes: once its first
// diagnosis is done. Nothing is missed meanwhile, only seen later: the watch follows changes
// from the resource version its first read was made at.

type holdKey struct{}

// WithChangesHeld returns a context under which a watch follows changes after its first snapshot
// only once release is called or ctx ends. release may be called more than once.
func WithChangesHeld(ctx context.Context) (context.Context, func()) {
	held := make(chan struct{})
	var once sync.Once
	return context.WithValue(ctx, holdKey{}, (<-chan struct{})(held)), func() { once.Do(func() { close(held) }) }
}

// ChangesHeld is the channel a watch under ctx waits on before it follows changes; nil (never
// waited on) when ctx holds nothing.
func ChangesHeld(ctx context.Context) <-chan struct{} {
	held, _ := ctx.Value(holdKey{}).(<-chan struct{})
	return held
}
