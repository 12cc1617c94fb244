// Package snapshot is the model every front end and the engine share: typed Kubernetes objects of
// one or more namespaces as one source read them, container log tails, the reference time, and
// what could not be read. Live and offline sources produce the same value, so the engine cannot
// tell them apart.
//
// Invariant: a Snapshot is read-only once Index has been called, but for the log tails,
// visibility and reference time a watch sets after indexing its objects and before handing it
// on; indexes are built once so that diagnosing is linear in the number of objects. A watch's
// snapshots come from a Tracker, which says what changed from one to the next, so that the next
// index is derived from the last and a reader's work follows the changes, not the namespace.
package snapshot
