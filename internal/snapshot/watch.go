package snapshot

// WatchHooks are what the reader of a watch (a source that keeps a snapshot current) may ask of
// it besides its snapshots and errors. Every field may be zero.
type WatchHooks struct {
	// Progress is told how far the first read has got: a kind's plural and its count so far.
	Progress func(what string, n int)
	// Rows is handed a snapshot of the workloads alone as soon as they are listed, before their
	// pods, events and logs, so a console can list them while the rest is read.
	Rows func(*Snapshot)
	// Hold, when not nil, keeps the watch from following changes after its first snapshot until
	// it is closed. A live watch fills its informers' caches from the lists its first snapshot
	// was built from: thousands of objects stored and indexed while the reader diagnoses that
	// snapshot, on the same cores. A reader that shows the diagnosis waits for both, so it holds
	// the watch until its first diagnosis is done. Nothing is missed meanwhile, only seen later:
	// the watch follows changes from the resource version its first read was made at.
	Hold <-chan struct{}
}
