package metamorph

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// readyWas is how far past a copy's start its Ready condition must have turned False for the
// copy to have been Ready in between: the kubelet writes Ready=False at start.
const readyWas = 5 * time.Second

// appNotReady is the kubelet's message for an HTTP probe the program answered with a server
// error (k8s.io/kubernetes/pkg/probe/http: "HTTP probe failed with statuscode: %d").
var appNotReady = regexp.MustCompile(`HTTP probe failed with statuscode: 5\d\d\b`)

// StretchReady returns a copy of s in which the copies of w's current revision, every one of
// them failing from its start and not Ready now, were Ready for d longer before they stopped
// being Ready: by d longer than they were, or for d where they never were.
//
// The history is dilated, not cut: from the moment E a copy showed its first failure to the
// moment C just before its first readiness failure, every time of its own (its status, the
// events about it, its log lines) is moved back along [E-d, C], so its failing lines keep
// coming through the longer Ready period; everything before E (the rollout, its start-up and
// first failure) moves back by d whole, so it still fails from its first seconds; everything
// from C on stays, as does the reference time. The other objects' times are dilated alike
// between the earliest E and the earliest C. Where the dilation spreads a copy's failing
// lines further apart than its retry loop logged them, its last failing line is repeated at
// that interval (keepFailing), so the failure is as continuous as it was. The copies'
// Ready conditions then turn False where the probe failures say they did, and a Deployment's
// conditions follow: its rollout completed (Progressing NewReplicaSetAvailable) while the
// copies were Ready, and it became unavailable when they stopped being Ready.
func StretchReady(s *snapshot.Snapshot, w Workload, d time.Duration) (*snapshot.Snapshot, error) {
	pods := w.Pods(s)
	if w.Kind == "Deployment" {
		rss := w.ReplicaSets(s)
		if len(rss) == 0 {
			return nil, notApplicable("no ReplicaSet of the Deployment in the snapshot")
		}
		cur := rss[len(rss)-1]
		pods = pods[:0:0]
		for _, p := range w.Pods(s) {
			if ownedBy(p, cur.UID) {
				pods = append(pods, p)
			}
		}
	}
	if len(pods) == 0 {
		return nil, notApplicable("no copy of the current revision in the snapshot")
	}
	type target struct {
		name string
		// early is the copy's first failure signal; fail its first readiness failure (or
		// the end of its Ready period); off when its Ready condition turned False.
		start, early, fail, off time.Time
		wasReady                bool
		probe                   *corev1.Probe
	}
	var targets []target
	for _, p := range pods {
		ready := condition(p, corev1.PodReady)
		switch {
		case ready == nil:
			return nil, notApplicable("copy %s has no Ready condition: it never started", p.Name)
		case ready.Status == corev1.ConditionTrue:
			return nil, notApplicable("copy %s is Ready now", p.Name)
		case len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Running == nil:
			return nil, notApplicable("copy %s is not running: its Ready period cannot be stretched without rewriting its runs", p.Name)
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > 0 {
				return nil, notApplicable("copy %s restarted: its Ready period cannot be stretched without rewriting its runs", p.Name)
			}
		}
		first, ok := firstFailure(s, p)
		if !ok {
			return nil, notApplicable("copy %s shows no failure in its first %s", p.Name, earlyWindow)
		}
		t := target{name: p.Name, start: podStart(p), early: first, off: ready.LastTransitionTime.Time}
		t.wasReady = t.off.Sub(t.start) > readyWas
		for _, e := range podEvents(s, p) {
			if e.Reason != "Unhealthy" || !strings.HasPrefix(e.Message, "Readiness probe") {
				continue
			}
			// A copy never Ready can be given a Ready period only where its probe reached the
			// program and the program answered that it was not ready (a 5xx): a probe that
			// finds no port, no path or no answer fails on the spec itself, however long.
			if !t.wasReady && !appNotReady.MatchString(e.Message) {
				return nil, notApplicable("copy %s was never Ready, and its readiness probe could not have passed: %s", p.Name, e.Message)
			}
			if t.fail.IsZero() || eventFirst(e).Before(t.fail) {
				t.fail = eventFirst(e)
			}
		}
		if t.wasReady && (t.fail.IsZero() || t.off.Before(t.fail)) {
			t.fail = t.off
		}
		if t.fail.IsZero() {
			return nil, notApplicable("copy %s was never Ready and no readiness probe failure dates when it would have stopped", p.Name)
		}
		for _, c := range p.Spec.Containers {
			if c.ReadinessProbe != nil {
				t.probe = c.ReadinessProbe
				break
			}
		}
		targets = append(targets, t)
	}
	// Each copy's own facts (its status, the events about it, its log) are dilated between
	// its own first failure and its own first readiness failure; everything else between the
	// earliest of the first and the earliest of the second.
	copyDilation := map[string]func(time.Time) time.Time{}
	var early, cut time.Time
	for i, t := range targets {
		e, c := t.early.Add(time.Millisecond), t.fail.Add(-time.Second)
		if !c.After(e) {
			return nil, notApplicable("copy %s failed its readiness probe at its first failure", t.name)
		}
		copyDilation[t.name] = dilation(e, c, d)
		if i == 0 || e.Before(early) {
			early = e
		}
		if i == 0 || c.Before(cut) {
			cut = c
		}
	}
	if !cut.After(early) {
		return nil, notApplicable("a copy failed its readiness probe before another showed its first failure")
	}
	dilate := dilation(early, cut, d)
	c := Clone(s)
	c.Each(func(o runtime.Object) {
		f := dilate
		switch o := o.(type) {
		case *corev1.Pod:
			if o.Namespace == w.Namespace && copyDilation[o.Name] != nil {
				f = copyDilation[o.Name]
			}
		case *corev1.Event:
			if o.InvolvedObject.Kind == "Pod" && o.InvolvedObject.Namespace == w.Namespace && copyDilation[o.InvolvedObject.Name] != nil {
				f = copyDilation[o.InvolvedObject.Name]
			}
		}
		mapObjectTimes(o, f)
	})
	windows := map[string][2]time.Time{}
	for _, t := range targets {
		windows[t.name] = [2]time.Time{t.early, t.fail.Add(-time.Second)}
	}
	for i := range c.Logs {
		l := &c.Logs[i]
		f := dilate
		win, target := windows[l.Pod]
		if l.Namespace == w.Namespace && target {
			f = copyDilation[l.Pod]
		}
		every := retryInterval(l.Lines, win[0], win[1])
		for j, line := range l.Lines {
			l.Lines[j] = mapLineTimes(line, f)
		}
		if l.Namespace == w.Namespace && target && !l.Previous {
			l.Lines = keepFailing(l.Lines, f(win[0]), win[1], every)
		}
	}
	mapMetricTimes(c, dilate)

	// Each copy stops being Ready where the probe says: failureThreshold failures after the
	// first (the kubelet's defaults where the probe leaves them unset).
	var firstOff, lastStart time.Time
	for _, t := range targets {
		off := t.off
		if !t.wasReady {
			threshold, period := int32(3), int32(10)
			if t.probe != nil {
				threshold, period = max(t.probe.FailureThreshold, 1), max(t.probe.PeriodSeconds, 1)
			}
			off = t.fail.Add(time.Duration(threshold-1) * time.Duration(period) * time.Second)
		}
		for _, p := range c.Pods {
			if p.Namespace != w.Namespace || p.Name != t.name {
				continue
			}
			for _, ct := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady} {
				if cond := condition(p, ct); cond != nil && cond.Status != corev1.ConditionTrue {
					cond.LastTransitionTime = metav1.NewTime(off)
				}
			}
		}
		if firstOff.IsZero() || off.Before(firstOff) {
			firstOff = off
		}
		lastStart = maxTime(lastStart, copyDilation[t.name](t.start))
	}
	if dep := w.deployment(c); dep != nil {
		rss := w.ReplicaSets(c)
		completed(dep, rss[len(rss)-1].Name, lastStart.Add(15*time.Second))
		if cond := deploymentCondition(dep, appsv1.DeploymentAvailable); cond != nil && cond.Status != corev1.ConditionTrue && cond.LastTransitionTime.Time.Before(firstOff) {
			cond.LastTransitionTime = metav1.NewTime(firstOff.Add(time.Second))
			cond.LastUpdateTime = cond.LastTransitionTime
		}
	}
	return c, nil
}

// retryInterval is how often a copy logged its failure between its first failure and its
// first readiness failure: the longest gap between two failing lines there, held to 5-30 s.
func retryInterval(lines []string, from, to time.Time) time.Duration {
	gap := 5 * time.Second
	var last time.Time
	for _, line := range lines {
		at, ok := failingLine(line)
		if !ok || at.Before(from) || at.After(to) {
			continue
		}
		if !last.IsZero() && at.Sub(last) > gap {
			gap = at.Sub(last)
		}
		last = at
	}
	return min(gap, 30*time.Second)
}

// keepFailing fills the gaps the dilation opened between failing lines in [from, to]: the
// last failing line is logged again every 'every', as the copy's retry loop would have while
// it stayed Ready. Without the repeats, a stretched tail would hold quiet minutes in which the
// copy, Ready and silent, would have served.
func keepFailing(lines []string, from, to time.Time, every time.Duration) []string {
	out := make([]string, 0, len(lines))
	var prev string
	var prevAt time.Time
	fill := func(until time.Time) {
		if prev == "" {
			return
		}
		for k := 1; ; k++ {
			at := prevAt.Add(time.Duration(k) * every)
			if !at.Before(until) || at.After(to) {
				return
			}
			out = append(out, mapLineTimes(prev, func(t time.Time) time.Time { return t.Add(at.Sub(prevAt)) }))
		}
	}
	for _, line := range lines {
		at, ok := failingLine(line)
		if !ok {
			out = append(out, line)
			continue
		}
		if !at.Before(from) {
			fill(at)
		}
		out = append(out, line)
		prev, prevAt = line, at
		if at.Before(from) || at.After(to) {
			prev = ""
		}
	}
	fill(to)
	return out
}

// dilation moves every time before early back by d, stretches [early, cut) over
// [early-d, cut), and leaves the rest.
func dilation(early, cut time.Time, d time.Duration) func(time.Time) time.Time {
	k := float64(cut.Sub(early)+d) / float64(cut.Sub(early))
	return func(t time.Time) time.Time {
		switch {
		case t.Before(early):
			return t.Add(-d)
		case t.Before(cut):
			return cut.Add(-time.Duration(float64(cut.Sub(t)) * k))
		}
		return t
	}
}

func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// completed records on d that its rollout of rs completed at 'at', as the deployment
// controller writes it (pkg/controller/deployment/progress.go): Progressing True,
// NewReplicaSetAvailable, its transition time kept where it was True already.
func completed(d *appsv1.Deployment, rs string, at time.Time) {
	cond := deploymentCondition(d, appsv1.DeploymentProgressing)
	if cond == nil {
		return
	}
	if cond.Reason == "NewReplicaSetAvailable" {
		return
	}
	if cond.Status != corev1.ConditionTrue {
		cond.LastTransitionTime = metav1.NewTime(at)
	}
	cond.Status, cond.Reason = corev1.ConditionTrue, "NewReplicaSetAvailable"
	cond.Message = fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs)
	cond.LastUpdateTime = metav1.NewTime(at)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
