package diagnose

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// podRestarts adds up the restart counts of p's containers, init containers' included, from
// the pod itself: the oracle does not read the engine's record of it.
func podRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, css := range [2][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range css {
			n += css[i].RestartCount
		}
	}
	return n
}

// eagerCopy is the copy as the engine wrote it for every copy before Detail.Copies wrote the
// list on demand: the reference the rows are held to.
func eagerCopy(f *copyFacts) Copy {
	p := f.Pod
	c := Copy{
		Name: p.Name, Phase: string(p.Status.Phase), Ready: f.Ready, Serving: f.Serving,
		Restarts: podRestarts(p), Node: p.Spec.NodeName,
	}
	if !p.CreationTimestamp.IsZero() {
		c.AgeSeconds = ptr(int64(f.Age / time.Second))
	}
	if f.Rev != nil {
		c.Revision = strconv.FormatInt(f.Rev.Number, 10)
	}
	switch {
	case p.DeletionTimestamp != nil:
		c.Reason, c.Message = "Terminating", ""
	case f.NeverStarts != "":
		c.Reason, c.Message = f.NeverStarts, withContainer(f.Container, f.Message)
	case f.Dies != "":
		c.Reason, c.Message = f.Dies, withContainer(f.Container, f.Message)
	case !f.Active:
		c.Reason, c.Message = p.Status.Reason, p.Status.Message
		if c.Reason == "" {
			c.Reason = string(p.Status.Phase)
		}
	case f.Running && !f.Ready:
		c.Reason = "NotReady"
		for i := range p.Status.Conditions {
			if rc := &p.Status.Conditions[i]; rc.Type == corev1.PodReady {
				c.Message = rc.Message
				break
			}
		}
	case f.Ready && f.Dialing != nil:
		c.Reason, c.Message = "ConnectFailing", "Ready, but "+f.Dialing.detail()
	case f.Ready && !f.Serving:
		c.Reason, c.Message = "NotAnEndpoint", "Ready, but no Service meant for the workload has it as a ready endpoint"
	case !f.Ready:
		c.Reason = string(p.Status.Phase)
	default:
		c.Reason = "Ready"
		if f.LastTerminated != nil {
			since := f.Age - f.LastTerminated.At.Sub(p.CreationTimestamp.Time)
			c.Message = fmt.Sprintf("last restart %s ago: %s", humanDuration(since), f.LastTerminated.TerminationText())
		}
	}
	return c
}

// TestCopiesAsWrittenAtOnce: the copy list Detail.Copies writes from the report's rows is the
// list written from the copies' facts while the engine held them, order included, on every
// scenario (every reason a copy can show) and on synthetic clusters, broken and healthy.
func TestCopiesAsWrittenAtOnce(t *testing.T) {
	cases := map[string]func() *snapshot.Snapshot{
		"healthy 200x10": func() *snapshot.Snapshot { return syntheticHealthyClusterOf(200, 50, 10) },
		"synthetic 300":  func() *snapshot.Snapshot { return syntheticCluster(300, 300) },
	}
	cases["each case by hand"] = func() *snapshot.Snapshot {
		c := newCluster()
		d := c.deployment("web", 5, 1, reasonNewRSAvailable, 24*time.Hour)
		rs := c.replicaSet(d, 1, 5, 24*time.Hour, nil)
		c.pod(rs, "ready", 24*time.Hour, running(true))
		c.pod(rs, "restarted", 24*time.Hour, restartedOnce("OOMKilled", 2*time.Hour))
		c.pod(rs, "terminating", 24*time.Hour, func(p *corev1.Pod) {
			running(true)(p)
			p.DeletionTimestamp = agoPtr(10 * time.Second)
		})
		c.pod(rs, "evicted", 24*time.Hour, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
		})
		c.pod(rs, "pending", time.Minute, func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending })
		return c.s
	}
	for _, v := range verdictDirs(t) {
		cases[v.ID] = func() *snapshot.Snapshot { return loadDump(t, v.Dir, loadExpected(t, v.Dir)) }
	}
	reasons := map[string]bool{}
	for name, build := range cases {
		s := build()
		s.Index()
		for _, w := range collectWorkloads(s) {
			d := diagnoseWorkload(s, w)
			var want []Copy
			for _, f := range w.cls.copies {
				want = append(want, eagerCopy(f))
			}
			sortCopies(want, w.CurrentRevision)
			got := d.Detail.Copies()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s/%s: copies\n got %+v\nwant %+v", name, w.Kind, w.Name, got, want)
			}
			for _, c := range got {
				reasons[c.Reason] = true
				if strings.HasPrefix(c.Message, "last restart") {
					reasons["last restart"] = true
				}
			}
		}
	}
	// The rows' cases are all met: each reason a case writes appears somewhere.
	for _, r := range []string{"Terminating", "CrashLoopBackOff", "Evicted", "NotReady", "NotAnEndpoint", "Pending", "Ready", "last restart"} {
		if !reasons[r] {
			t.Errorf("no copy shows %s: the cases are not all held to the reference", r)
		}
	}
}
