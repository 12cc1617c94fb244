// Package dump reads and writes offline snapshots: the output of `kubectl get ... -o json|yaml`,
// of `kubectl cluster-info dump` (to a directory or concatenated on stdout), and the layout
// Write produces, which is the cluster-info dump layout plus the kinds kubectl leaves out.
//
// Input forms, recognised by content, never by file name: a single object, a List or *List,
// multi-document YAML, a stream of JSON documents one after another, any of them gzipped, and
// container log blocks:
//
//	==== START logs for container C of pod NS/POD ====
//	...lines...
//	==== END logs for container C of pod NS/POD ====
//
// exactly as kubectl writes them (the block may be empty or hold the kubelet's "Request log
// error: ..." line, and the END line may follow the last log line without a newline). For the log
// tail of a container's previous instance, which kubectl does not dump, this package writes and
// reads the same block with " (previous)" after the pod name:
//
//	==== START logs for container C of pod NS/POD (previous) ====
//
// A container can print marker lines itself. Write appends a mark to such a line, so that its
// block cannot end early and open another pod's; on reading, a block in another pod's
// NS/POD/logs.txt is noted in Visibility and yields to the pod's own, and a second block of the
// same container is noted, never dropped in silence.
//
// events.k8s.io/v1 Events are converted to core/v1 Events the way the API server converts them,
// so the same event reads the same through either API. Kinds the snapshot does not model are
// skipped and counted in Snapshot.Source.Skipped; managedFields are dropped (a Service keeps them). A controller that
// owns objects in the dump but is missing from it (kubectl cluster-info dump writes no
// StatefulSets) is listed in Snapshot.Visibility, and so is a dump that holds controllers but no
// pod list (`kubectl get deploy -o yaml`, pods pruned): Pod, "not in the dump"; so is a dump
// with a Pending claim but no PersistentVolume list (PersistentVolume, "not in the dump", in the
// claim's namespace). Write leaves out the pod list of a namespace whose pods the snapshot could
// not read, and the volume list the snapshot could not read, so the gap survives.
//
// The reference time is the newest timestamp the objects carry: creation times, controller,
// pod, claim and node conditions (node heartbeats included), container start and finish times,
// event first/last/event/series times. It is never later than the moment of the dump and, with
// live nodes, within their five-minute status report of it. One object's clock cannot move it:
// timestamps more than six minutes past the nodes' newest heartbeat (without nodes, the few
// objects an hour or more newer than the rest) are left out and named in Visibility, which
// suggests --at.
//
// A directory's .json, .yaml, .yml, .txt and .log files (and those names with .gz) are read if
// they are regular files or links to one; a named pipe (unless Options.WaitForPipes: the console
// waits for its writer, saying so), a socket or a device, and files of other names, are left out
// and named in Visibility. Names from the file system are quoted in errors
// when they hold anything a terminal would act on.
//
// Files are read as a stream: a list's items are decoded one at a time, so memory holds the
// objects kept, not the bytes read. The files of a directory are read several at once and filed
// in the order of the walk (workload lists first), so the snapshot, its notes, progress and
// any error are those of a read of one file after the other. Options.MaxObjectSize bounds one object (a list item, a YAML
// document that is not a list) and Options.MaxDumpSize all bytes read; past either the read
// fails with the file and offset. Log lines are kept up to 64 KiB and event messages up to
// 16 KiB, each cut with a mark saying how many bytes were dropped; of each container's log the
// last 1 MiB and 10,000 lines are kept, and the logs cut are listed in Visibility (pods/log). An object without
// metadata.namespace is read into Options.Namespace, else "default", as kubectl reads it. An
// object read twice with the same content is read once; with different content, the newer
// (by resourceVersion, then timestamps) is kept and the duplicate is listed in Visibility, as
// are files whose nodes report moments far apart and an Options.At before every object.
//
// Invariant: the package only reads files and writes the directory it is given; it never talks
// to a cluster. A read either returns a complete snapshot or an error naming the file and the
// position of the fault; it never returns part of a dump as if it were the whole.
package dump
