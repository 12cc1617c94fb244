package diagnose

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// signal, logHit and tokenCell are the rules' signal and its parts, built here.
type (
	signal    = rules.Signal
	logHit    = rules.LogHit
	tokenCell = rules.TokenCell
)

type logKey struct{ text, container string }

// groupLogLines makes a log signal of every line of a text; tests turn it off to compare with
// one signal per line without lines, which the rules read as they did before signals had lines.
var groupLogLines = true

// The rules read the tail of at most maxLogContainers logs, maxLogLinesPerContainer lines each,
// so chatty containers or hundreds of copies cannot make a diagnosis slow. A spec fault shows
// the same on every copy; twenty are plenty to see it.
const (
	maxLogLinesPerContainer = 300
	maxLogContainers        = 20
)

// failurePods are the copies whose failures the rules read: those of the current revision
// (the old ones of a stuck rollout still serve, and their old troubles are not this one), or
// all copies when the revision is not known.
func failurePods(w *workload) []*corev1.Pod {
	if len(w.CurrentPods) > 0 || w.CurrentRevision != "" {
		return w.CurrentPods
	}
	return w.Pods
}

// collectSignals gathers the failure messages of the workload's failing copies, its
// controller and its claims, from the workload's observations.
func collectSignals(w *workload) []*signal {
	var out []*signal
	obs := w.observe()
	pods := failurePods(w)
	podNames := make(map[string]bool, len(pods))
	for _, p := range pods {
		podNames[p.Name] = true
	}
	if cur := w.cls.Current; cur != nil {
		// A Job's pods removed at its deadline are copies of its current revision all the same.
		for _, e := range cur.GonePodEvents {
			podNames[e.InvolvedObject.Name] = true
		}
	}
	// The copies in the workload's order (failurePods is a part of it, or all of it).
	var idx []int
	for i, p := range w.Pods {
		if podNames[p.Name] {
			idx = append(idx, i)
			out = podSignals(obs, i, out)
		}
	}
	evs := obs.events
	for k := evs.from; k < evs.to; k++ {
		e := &obs.list[k]
		if !facts.EventFailing(e.Status, e.Reason, e.Text) {
			continue
		}
		pod := ""
		if e.Object.Kind == "Pod" {
			if !podNames[e.Object.Name] {
				continue
			}
			pod = e.Object.Name
		}
		out = append(out, w.texts.signal(signal{Reason: e.Reason, Text: e.Text, From: rules.FromEvent, Pod: pod, Container: e.Container(), Obs: int(k)}))
	}
	// The controller's ReplicaFailure condition carries the API server's refusal even when its
	// FailedCreate events expired or are not in the snapshot.
	if fc := w.cls.failedCreate; fc != "" {
		known := false
		for _, s := range out {
			known = known || s.Text == fc
		}
		if !known {
			out = append(out, w.texts.signal(signal{Reason: "FailedCreate", Text: fc, From: rules.FromController, Obs: -1}))
		}
	}
	// Every copy logs the same failures, each with its own time: a failing text is one signal
	// per container that logged it, carrying each of its lines (lines: the copy, the
	// observation, and the place a signal per line would have had among the signals), so the
	// rules read a text once however many copies logged it. A text is still taken once per
	// tail, its first line there, as the rules always read it. The signal's group is marked
	// on its text's facts (one per text and workload), which a map by text cost more than.
	var (
		seen    map[string]bool
		byKey   map[logKey]int32
		hits    []logHit
		groupOf []int32
	)
	obs.sigCall++
	call := obs.sigCall
	firstLog := len(out)
	// Room for every line the rules may take.
	read, lines := 0, 0
	for _, i := range idx {
		for _, t := range obs.tailsOf(i) {
			if read < maxLogContainers {
				read++
				lines += min(int(t.to-t.from), maxLogLinesPerContainer)
			}
		}
	}
	hits, groupOf = w.texts.logRoom(lines)
	read = 0
	for _, i := range idx {
		for _, t := range obs.tailsOf(i) {
			if read >= maxLogContainers {
				break
			}
			read++
			from := t.from
			if t.to-from > maxLogLinesPerContainer {
				from = t.to - maxLogLinesPerContainer
			}
			clear(seen)
			obs.tailMark++
			mark := obs.tailMark
			for k := from; k < t.to; k++ {
				o := &obs.list[k]
				lf := obs.lineAt(int(k))
				if lf != nil {
					if lf.tailMark == mark || !o.Failing() {
						continue
					}
					lf.tailMark = mark
				} else {
					if seen[o.Text] || !o.Failing() {
						continue
					}
					if seen == nil {
						seen = map[string]bool{}
					}
					seen[o.Text] = true
				}
				// The signal of the text's first container is on its facts; those of other
				// containers (and texts without facts) are in byKey.
				g := int32(-1)
				first := lf != nil && lf.groupCall != call
				if groupLogLines && !first {
					if lf != nil && out[lf.group].Container == o.Container() {
						g = lf.group
					} else if x, ok := byKey[logKey{o.Text, o.Container()}]; ok {
						g = x
					}
				}
				if g < 0 {
					out = append(out, w.texts.signal(signal{Text: o.Text, From: rules.FromLog, Pod: o.Object.Name, Container: o.Container(), Obs: int(k)}))
					g = int32(len(out) - 1)
					switch {
					case first:
						lf.groupCall, lf.group = call, g
					case groupLogLines:
						if byKey == nil {
							byKey = map[logKey]int32{}
						}
						byKey[logKey{o.Text, o.Container()}] = g
					}
				}
				hits = append(hits, logHit{Copy: int32(i), Obs: k, Ord: int32(firstLog + len(hits))})
				groupOf = append(groupOf, g)
			}
		}
	}
	// Each signal's lines in one slice, in the order read.
	if len(hits) > 0 {
		n := make([]int32, len(out)-firstLog+1)
		for _, g := range groupOf {
			n[int(g)-firstLog+1]++
		}
		for j := 1; j < len(n); j++ {
			n[j] += n[j-1]
		}
		lines := w.texts.hitRoom(len(hits))
		for j, g := range groupOf {
			at := &n[int(g)-firstLog]
			lines[*at] = hits[j]
			*at++
		}
		from := int32(0)
		for j := firstLog; j < len(out); j++ {
			to := n[j-firstLog]
			if groupLogLines {
				out[j].Lines = lines[from:to:to]
			}
			out[j].Ord = lines[from].Ord
			from = to
		}
	}
	for j := 0; j < firstLog; j++ {
		out[j].Ord = int32(j)
	}
	// One token cell per distinct text, all in one slice.
	cellOf := w.texts.cellIndex(len(out))
	cell := make([]int32, len(out))
	for j, s := range out {
		c, ok := cellOf[s.Text]
		if !ok {
			c = int32(len(cellOf))
			cellOf[s.Text] = c
		}
		cell[j] = c
	}
	cells := w.texts.cellRoom(len(cellOf))
	for j, s := range out {
		c := &cells[cell[j]]
		if c.Text == nil {
			c.Text = w.texts.get(s.Text)
		}
		s.Cell = c
	}
	return out
}

// containerOfFieldPath reads the container name from an event's fieldPath
// ("spec.containers{web}", "spec.initContainers{migrate}").
func containerOfFieldPath(fp string) string {
	i := strings.IndexByte(fp, '{')
	if i < 0 || !strings.HasSuffix(fp, "}") {
		return ""
	}
	return fp[i+1 : len(fp)-1]
}

// notFailures are waiting reasons of a container on its normal way up.
var notFailures = map[string]bool{"ContainerCreating": true, "PodInitializing": true, "": true}

// podSignals reads the failing container states and the unschedulable condition of copy i:
// per container its waiting or terminated state, then its last termination.
func podSignals(obs *observations, i int, out []*signal) []*signal {
	room := obs.w.texts
	base := int(obs.byPod[i].from)
	list := obs.pod(i)
	add := func(k int) {
		o := &list[k]
		switch o.Kind {
		case ObsPodCreated:
			// The kubelet evicted the copy: its message says which resource and limit.
			if o.Status == string(corev1.PodFailed) && o.Reason == rules.ReasonEvicted {
				out = append(out, room.signal(signal{Reason: o.Reason, Text: o.Text, From: rules.FromPodStatus, Pod: o.Object.Name, Obs: base + k}))
			}
		case ObsContainerWaiting:
			if !notFailures[o.Reason] {
				out = append(out, room.signal(signal{Reason: o.Reason, Text: o.Text, From: rules.FromPodStatus, Pod: o.Object.Name, Container: o.Container(), Obs: base + k}))
			}
		case ObsContainerTerminated:
			if o.Reason == "Completed" || (o.ExitCode == 0 && o.Reason == "") {
				return
			}
			out = append(out, room.signal(signal{
				Reason: o.Reason, Text: o.Text, From: rules.FromPodStatus, Pod: o.Object.Name,
				Container: o.Container(), ExitCode: o.ExitCode, Obs: base + k,
			}))
		}
	}
	for k := 0; k < len(list); k++ {
		o := &list[k]
		if o.Kind == ObsContainerTerminated && o.Last {
			// facts.AppendPod puts a container's last termination before its state.
			if n := k + 1; n < len(list) && list[n].Container() == o.Container() && list[n].Init == o.Init &&
				(list[n].Kind == ObsContainerWaiting || list[n].Kind == ObsContainerRunning || list[n].Kind == ObsContainerTerminated && !list[n].Last) {
				add(n)
				add(k)
				k++
				continue
			}
		}
		add(k)
	}
	for k := range list {
		if c := &list[k]; c.Kind == ObsConditionChanged && c.Type() == string(corev1.PodScheduled) && c.Status == string(corev1.ConditionFalse) && c.Text != "" {
			out = append(out, room.signal(signal{Reason: c.Reason, Text: c.Text, From: rules.FromPodStatus, Pod: c.Object.Name, Obs: base + k}))
		}
	}
	return out
}
