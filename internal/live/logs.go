package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// A sample of each failing workload's copies has its logs read: the same fault repeats in every
// copy of a spec fault, so two alike copies show it as well as all of them; copies that fail in
// different ways (another reason, exit code or revision) may be different faults, so up to four
// are read, one of each way first.
const (
	copiesPerWorkload      = 2
	copiesPerMixedWorkload = 4
)

// maxLogRequests bounds the log requests of one snapshot, so a cluster with hundreds of broken
// workloads is still read in seconds. Every failing workload gets one copy read before any gets a
// second, so the bound only leaves a workload unread when more than this many are failing.
const maxLogRequests = 500

// maxReadyLogWorkloads bounds the healthy-looking workloads a read takes one log tail of, after
// every failing workload: a Ready copy can still do no work while it keeps failing to reach the
// endpoint its own env names (a sweeper whose REDIS_ADDR refuses), which only its log shows. A
// copy is a candidate only when a plain env value of it holds a host:port or a URL with a port.
const maxReadyLogWorkloads = 100

// maxNamedWorkloads bounds how many workloads one visibility sentence names; the rest are counted.
const maxNamedWorkloads = 25

// logRequest is one container log tail to fetch.
type logRequest struct {
	namespace, pod, container string
	previous                  bool
}

// workloadRef names the workload a copy belongs to as the report does: its controller, with a
// ReplicaSet's Deployment in place of the ReplicaSet.
type workloadRef struct {
	namespace, kind, name string
}

func (w workloadRef) String() string { return w.kind + "/" + w.name }

// failingWorkload is one workload's failing copies that have a log to read, and how many of them
// the plan reads; or, ready, its Ready copies whose env names an endpoint, of which one is read.
type failingWorkload struct {
	ref    workloadRef
	copies int
	picked [][]logRequest // per picked copy, in the order they are read
	read   int
	ready  bool
}

// logPlan is the log tails one read fetches and the workloads they were chosen from: failing
// ones, then ones whose copies are Ready and name an endpoint in their env.
type logPlan struct {
	reqs      []logRequest
	workloads []*failingWorkload
	ready     []*failingWorkload
	limit     int
}

// failingLogRequests picks the containers whose logs can explain a failure: containers of copies
// that are not ready, waiting or restarted. A container that never ran has no log to read, so
// only a running or terminated instance (current) or a terminated last instance (previous) is
// asked for. Copies are sampled per workload and the workloads taken in rounds, so that every
// failing workload has one copy read before any has a second, up to limit requests.
func failingLogRequests(pods []*corev1.Pod, rss []*appsv1.ReplicaSet, limit int) logPlan {
	rsByUID := make(map[types.UID]*appsv1.ReplicaSet, len(rss))
	for _, rs := range rss {
		rsByUID[rs.UID] = rs
	}
	byWorkload := map[workloadRef][]candidate{}
	for _, p := range pods {
		c, ok := candidateOf(p, func(uid types.UID) *appsv1.ReplicaSet { return rsByUID[uid] })
		if ok {
			byWorkload[c.ref] = append(byWorkload[c.ref], c)
		}
	}
	plan := logPlan{limit: limit}
	for ref, cands := range byWorkload {
		w := sampleWorkload(ref, cands)
		if w.ready {
			plan.ready = append(plan.ready, &w)
		} else {
			plan.workloads = append(plan.workloads, &w)
		}
	}
	sort.Slice(plan.workloads, func(i, j int) bool { return refLess(plan.workloads[i].ref, plan.workloads[j].ref) })
	sort.Slice(plan.ready, func(i, j int) bool { return refLess(plan.ready[i].ref, plan.ready[j].ref) })
	plan.readRounds()
	plan.readReady()
	return plan
}

// sampleWorkload picks the copies of a workload whose logs are read: a sample of its failing
// copies, or, when none fails, the first of its Ready candidates by name.
func sampleWorkload(ref workloadRef, cands []candidate) failingWorkload {
	var failing, ready []candidate
	for _, c := range cands {
		if c.ready {
			ready = append(ready, c)
		} else {
			failing = append(failing, c)
		}
	}
	if len(failing) > 0 {
		return failingWorkload{ref: ref, copies: len(failing), picked: pickCopies(failing)}
	}
	first := ready[0]
	for _, c := range ready[1:] {
		if c.pod.Name < first.pod.Name {
			first = c
		}
	}
	return failingWorkload{ref: ref, copies: len(ready), picked: [][]logRequest{first.reqs}, ready: true}
}

// candidate is a copy whose logs may be read: a failing one, or a Ready one whose env names an
// endpoint (ready).
type candidate struct {
	pod   *corev1.Pod
	ref   workloadRef
	sig   string
	reqs  []logRequest
	ready bool
}

// candidateOf says whether a copy's logs can explain a failure and which, with its workload;
// rsByUID finds the copy's ReplicaSet.
func candidateOf(p *corev1.Pod, rsByUID func(types.UID) *appsv1.ReplicaSet) (candidate, bool) {
	if p.Spec.NodeName == "" {
		return candidate{}, false
	}
	ready := !failing(p)
	if ready && (p.Status.Phase != corev1.PodRunning || len(facts.EnvEndpoints(&p.Spec)) == 0) {
		return candidate{}, false
	}
	reqs := containerLogRequests(p)
	if len(reqs) == 0 {
		return candidate{}, false
	}
	ref, revision := workloadOf(p, rsByUID)
	if ready {
		return candidate{p, ref, "", reqs, true}, true
	}
	return candidate{p, ref, failureSignature(p, revision), reqs, false}, true
}

// pickCopies samples one workload's failing copies, one of each way of failing first.
func pickCopies(cands []candidate) [][]logRequest {
	groups := map[string][]candidate{}
	var sigs []string
	for _, c := range cands {
		if _, seen := groups[c.sig]; !seen {
			sigs = append(sigs, c.sig)
		}
		groups[c.sig] = append(groups[c.sig], c)
	}
	// The commonest way of failing first, then a fixed order, so the same copies are read
	// from one snapshot to the next and a watch finds their tails cached.
	sort.Slice(sigs, func(i, j int) bool {
		if a, b := len(groups[sigs[i]]), len(groups[sigs[j]]); a != b {
			return a > b
		}
		return sigs[i] < sigs[j]
	})
	for _, sig := range sigs {
		g := groups[sig]
		sort.Slice(g, func(i, j int) bool { return g[i].pod.Name < g[j].pod.Name })
	}
	quota := copiesPerWorkload
	if len(sigs) > 1 {
		quota = copiesPerMixedWorkload
	}
	var picked [][]logRequest
	for round := 0; len(picked) < quota && len(picked) < len(cands); round++ {
		for _, sig := range sigs {
			if g := groups[sig]; round < len(g) && len(picked) < quota {
				picked = append(picked, g[round].reqs)
			}
		}
	}
	return picked
}

func refLess(a, b workloadRef) bool {
	if a.namespace != b.namespace {
		return a.namespace < b.namespace
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.name < b.name
}

// readRounds takes the picked copies of the plan's workloads, in order, in rounds: every
// failing workload has one copy read before any has a second, up to the plan's limit.
func (p *logPlan) readRounds() {
	for round := 0; ; round++ {
		more, cut := false, false
		for _, w := range p.workloads {
			if round >= len(w.picked) {
				continue
			}
			if len(p.reqs)+len(w.picked[round]) > p.limit {
				// A copy of many containers that does not fit leaves room for the others'
				// smaller ones in this round.
				cut = true
				continue
			}
			p.reqs = append(p.reqs, w.picked[round]...)
			w.read++
			more = true
		}
		// Strict rounds: a workload's second copy never takes the place of another's first.
		if !more || cut {
			return
		}
	}
}

// readReady takes one copy of each Ready workload in order, after every failing workload's, up
// to maxReadyLogWorkloads and the plan's limit.
func (p *logPlan) readReady() {
	taken := 0
	for _, w := range p.ready {
		if taken >= maxReadyLogWorkloads {
			return
		}
		if len(p.reqs)+len(w.picked[0]) > p.limit {
			continue
		}
		p.reqs = append(p.reqs, w.picked[0]...)
		w.read++
		taken++
	}
}

// failing reports whether a copy is not ready, has a waiting container, or has restarted.
func failing(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded {
		return false
	}
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil || cs.RestartCount > 0 {
			return true
		}
	}
	return false
}

// containerLogRequests lists the tails of one copy that exist: a running or terminated current
// instance, a terminated previous one.
func containerLogRequests(p *corev1.Pod) []logRequest {
	var reqs []logRequest
	for _, cs := range containerStatuses(p) {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			reqs = append(reqs, logRequest{p.Namespace, p.Name, cs.Name, false})
		}
		if cs.LastTerminationState.Terminated != nil || cs.RestartCount > 0 {
			reqs = append(reqs, logRequest{p.Namespace, p.Name, cs.Name, true})
		}
	}
	return reqs
}

func containerStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

// workloadOf names the copy's workload and its revision (the ReplicaSet, or the controller's
// revision hash). A ReplicaSet the snapshot does not hold stands for its own workload.
func workloadOf(p *corev1.Pod, rsByUID func(types.UID) *appsv1.ReplicaSet) (workloadRef, string) {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return workloadRef{p.Namespace, "Pod", p.Name}, ""
	}
	if ref.Kind == "ReplicaSet" {
		if rs := rsByUID(ref.UID); rs != nil {
			if owner := metav1.GetControllerOf(rs); owner != nil && owner.Kind == "Deployment" {
				return workloadRef{p.Namespace, owner.Kind, owner.Name}, ref.Name
			}
		}
		return workloadRef{p.Namespace, ref.Kind, ref.Name}, ref.Name
	}
	return workloadRef{p.Namespace, ref.Kind, ref.Name}, p.Labels[appsv1.ControllerRevisionHashLabelKey]
}

// failureSignature says how a copy fails, so that copies failing alike can be told from copies
// failing differently. It reads what stays put while a container crash-loops (the last exit's
// reason and code, not the Running/CrashLoopBackOff state that flips with each restart).
func failureSignature(p *corev1.Pod, revision string) string {
	var b strings.Builder
	b.WriteString(revision)
	for _, cs := range containerStatuses(p) {
		b.WriteString("|")
		b.WriteString(cs.Name)
		b.WriteString("=")
		b.WriteString(containerFailure(cs))
	}
	return b.String()
}

func containerFailure(cs corev1.ContainerStatus) string {
	exited := cs.State.Terminated
	if exited == nil {
		exited = cs.LastTerminationState.Terminated
	}
	switch {
	case exited != nil:
		return fmt.Sprintf("exited %s %d", exited.Reason, exited.ExitCode)
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == "ErrImagePull":
		// The kubelet alternates ErrImagePull and ImagePullBackOff for one failing pull.
		return "ImagePullBackOff"
	case cs.State.Waiting != nil:
		return cs.State.Waiting.Reason
	case !cs.Ready:
		return "not ready"
	}
	return ""
}

// visibility says, per namespace, which failing workloads the request bound cut: by name those
// that had no log read, with counts those that had fewer copies read than their sample. Copies
// beyond a workload's sample are left by design, as the fault they show is in the copies read,
// and are not listed: a crash-looping Deployment of ten copies is no gap in what was seen.
func (p logPlan) visibility(vis []snapshot.Visibility) []snapshot.Visibility {
	var namespaces []string
	byNS := map[string][]*failingWorkload{}
	for _, w := range p.workloads {
		if w.read == len(w.picked) {
			continue
		}
		if _, seen := byNS[w.ref.namespace]; !seen {
			namespaces = append(namespaces, w.ref.namespace)
		}
		byNS[w.ref.namespace] = append(byNS[w.ref.namespace], w)
	}
	vis = p.readyVisibility(vis)
	for _, ns := range namespaces {
		var none, short []*failingWorkload
		for _, w := range byNS[ns] {
			if w.read == 0 {
				none = append(none, w)
			} else {
				short = append(short, w)
			}
		}
		var parts []string
		if len(none) > 0 {
			parts = append(parts, fmt.Sprintf("read no log of %s, over the bound of %d log requests per read: %s",
				plural(len(none), "failing workload", "failing workloads"), p.limit, unreadList(none)))
		}
		if len(short) > 0 {
			parts = append(parts, fmt.Sprintf("read fewer copies than the sample of %d per workload (%d where they fail differently), over the bound of %d log requests per read; not read: %s",
				copiesPerWorkload, copiesPerMixedWorkload, p.limit, sampleList(short)))
		}
		vis = append(vis, snapshot.Visibility{Kind: "pods/log", Namespace: ns, Reason: strings.Join(parts, "; ")})
	}
	return vis
}

// readyVisibility says how many Ready workloads whose env names an endpoint had no log read,
// by namespace: a copy of theirs may be failing to reach that endpoint unseen.
func (p logPlan) readyVisibility(vis []snapshot.Visibility) []snapshot.Visibility {
	var namespaces []string
	unread := map[string]int{}
	for _, w := range p.ready {
		if w.read > 0 {
			continue
		}
		if unread[w.ref.namespace] == 0 {
			namespaces = append(namespaces, w.ref.namespace)
		}
		unread[w.ref.namespace]++
	}
	for _, ns := range namespaces {
		vis = append(vis, snapshot.Visibility{Kind: "pods/log", Namespace: ns, Reason: fmt.Sprintf(
			"read no log of %s whose copies are Ready and whose env names an endpoint, over the bound of %d such workloads and %d log requests per read: a copy that keeps failing to reach its endpoint is not seen there",
			plural(unread[ns], "workload", "workloads"), maxReadyLogWorkloads, p.limit)})
	}
	return vis
}

// sampleList counts the unread copies per workload, naming together the workloads with the same
// counts ("8 of 10 failing copies of Deployment/web, Deployment/api").
func sampleList(ws []*failingWorkload) string {
	type counts struct{ unread, copies int }
	var keys []counts
	names := map[counts][]string{}
	for _, w := range ws {
		k := counts{w.copies - w.read, w.copies}
		if _, seen := names[k]; !seen {
			keys = append(keys, k)
		}
		names[k] = append(names[k], w.ref.String())
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].unread != keys[j].unread {
			return keys[i].unread > keys[j].unread
		}
		return keys[i].copies > keys[j].copies
	})
	var parts []string
	named := 0
	for i, k := range keys {
		if named >= maxNamedWorkloads {
			rest, copies := 0, 0
			for _, k := range keys[i:] {
				rest += len(names[k])
				copies += len(names[k]) * k.unread
			}
			parts = append(parts, fmt.Sprintf("and %d copies of %d more workloads", copies, rest))
			break
		}
		ns := names[k]
		shown := ns
		if named+len(ns) > maxNamedWorkloads {
			shown = ns[:maxNamedWorkloads-named]
		}
		named += len(shown)
		text := fmt.Sprintf("%d of %d failing copies of %s", k.unread, k.copies, strings.Join(shown, ", "))
		if len(shown) < len(ns) {
			text += fmt.Sprintf(" and %d more such workloads", len(ns)-len(shown))
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}

// unreadList names the workloads with their failing copies, at most maxNamedWorkloads of them,
// and counts the rest.
func unreadList(ws []*failingWorkload) string {
	var names []string
	rest, copies := 0, 0
	for i, w := range ws {
		if i >= maxNamedWorkloads {
			rest++
			copies += w.copies
			continue
		}
		names = append(names, fmt.Sprintf("%s (%s)", w.ref, plural(w.copies, "copy", "copies")))
	}
	text := strings.Join(names, ", ")
	if rest > 0 {
		text += fmt.Sprintf(" and %d more workloads (%d copies)", rest, copies)
	}
	return text
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// readLogs fetches the tails of failing copies' containers. A log the kubelet cannot give
// (forbidden, node gone) is recorded once per namespace in the visibility list and the read goes on.
func (s *Source) readLogs(ctx context.Context, pods []*corev1.Pod, rss []*appsv1.ReplicaSet, vis []snapshot.Visibility, prog *progress) ([]snapshot.ContainerLog, []snapshot.Visibility) {
	plan := failingLogRequests(pods, rss, maxLogRequests)
	logs, errs := s.fetchLogs(ctx, plan.reqs, prog)
	return collectLogs(plan.reqs, logs, errs, plan.visibility(vis))
}

// fetchLogs fetches the tails in parallel; logs[i] or errs[i] answers reqs[i]. Each tail read
// is reported to prog (which may be nil) as one more of "logs".
func (s *Source) fetchLogs(ctx context.Context, reqs []logRequest, prog *progress) ([]*snapshot.ContainerLog, []error) {
	tail, limit := s.opts.LogTailLines, s.opts.LogLimitBytes
	if tail <= 0 {
		tail = DefaultLogTailLines
	}
	if limit <= 0 {
		limit = DefaultLogLimitBytes
	}
	logs := make([]*snapshot.ContainerLog, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelism)
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			raw, err := s.client.CoreV1().Pods(r.namespace).GetLogs(r.pod, &corev1.PodLogOptions{
				Container:  r.container,
				Previous:   r.previous,
				TailLines:  &tail,
				LimitBytes: &limit,
			}).DoRaw(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			logs[i] = &snapshot.ContainerLog{
				Namespace: r.namespace, Pod: r.pod, Container: r.container, Previous: r.previous,
				Lines: splitLines(raw),
			}
			prog.add("logs", 1)
		}()
	}
	wg.Wait()
	return logs, errs
}

// collectLogs keeps the tails that were read and folds the failures into one visibility entry
// per namespace.
func collectLogs(reqs []logRequest, logs []*snapshot.ContainerLog, errs []error, vis []snapshot.Visibility) ([]snapshot.ContainerLog, []snapshot.Visibility) {
	var out []snapshot.ContainerLog
	failed := map[string][]string{}
	var failedNS []string
	for i, r := range reqs {
		if logs[i] != nil {
			out = append(out, *logs[i])
			continue
		}
		if errs[i] == nil || apierrors.IsBadRequest(errs[i]) || apierrors.IsNotFound(errs[i]) {
			// The container restarted or the copy went away between the list and this request.
			continue
		}
		if _, seen := failed[r.namespace]; !seen {
			failedNS = append(failedNS, r.namespace)
		}
		failed[r.namespace] = append(failed[r.namespace], fmt.Sprintf("%s/%s: %s", r.pod, r.container, reason(errs[i])))
	}
	for _, ns := range failedNS {
		msgs := failed[ns]
		v := snapshot.Visibility{Kind: "pods/log", Namespace: ns}
		if len(msgs) == 1 {
			v.Reason = "could not read the log of " + msgs[0]
		} else {
			v.Reason = fmt.Sprintf("could not read %d container logs, first %s", len(msgs), msgs[0])
		}
		vis = append(vis, v)
	}
	return out, vis
}

func reason(err error) string {
	if apierrors.IsForbidden(err) {
		return forbiddenReason(err)
	}
	return oneLine(err)
}

func splitLines(raw []byte) []string {
	text := strings.TrimRight(string(raw), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
