package diagnose

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// signalGaps lists what the spec leaves the platform unable to see: for such a workload the
// count of copies is all anyone gets, so these are where correctness checks must live when the
// control loop cannot provide them. Ordered by path.
func signalGaps(w *workload) []SignalGap {
	if w == nil || w.Template == nil {
		return nil
	}
	r := newGapRanker(w)
	r.readinessBehindService()
	r.identicalProbes()
	r.updateStrategy()
	r.minReadySeconds()
	sortStable(r.gaps, func(a, b SignalGap) bool { return a.Path < b.Path })
	return r.gaps
}

type gapFinder struct {
	*ranker
	gaps []SignalGap
}

func newGapRanker(w *workload) *gapFinder {
	tp := w.TemplatePath
	if tp == nil {
		tp = field.NewPath("spec", "template")
	}
	// The gap checks read the spec only; they need no signals, and record no suspect until
	// one does (record makes found then).
	g := w.texts.gapFinder()
	*g.ranker = ranker{w: w, in: specInput(w), tplPath: tp, specPath: specOf(tp)}
	g.object = g.in.Object
	return g
}

// tplString is the template path as field.Path.String writes it.
func (g *gapFinder) tplString() string {
	if g.tplPath == specTemplate {
		return specTemplateString
	}
	return g.tplPath.String()
}

// specTemplateString is specTemplate.String().
var specTemplateString = specTemplate.String()

func (g *gapFinder) add(p *field.Path, format string, args ...any) {
	g.gaps = append(g.gaps, SignalGap{Object: g.object, Path: p.String(), Message: fmt.Sprintf(format, args...)})
}

// readinessBehindService: a container that serves a Service's port without a readiness probe
// is counted as serving the moment it starts, whether it can answer or not.
func (g *gapFinder) readinessBehindService() {
	svcs := g.in.MatchedServices()
	if len(svcs) == 0 {
		return
	}
	for i := range g.w.Template.Spec.Containers {
		c := &g.w.Template.Spec.Containers[i]
		if c.ReadinessProbe != nil {
			continue
		}
		svc, ok := servedBy(c, svcs)
		if !ok {
			continue
		}
		// Most workloads of a cluster have this gap: its path and message are written
		// directly, as field.Path.String and fmt.Sprintf would write them.
		g.gaps = append(g.gaps, SignalGap{
			Object:  g.object,
			Path:    g.tplString() + ".spec.containers[" + strconv.Itoa(i) + "].readinessProbe",
			Message: "container " + c.Name + " serves Service " + svc + " but has no readiness probe: it receives traffic as soon as it starts, ready or not",
		})
	}
}

// servedBy names the Service a container serves: one whose targetPort it declares, or any when
// the container declares no ports (it may listen on them anyway).
func servedBy(c *corev1.Container, svcs []*corev1.Service) (string, bool) {
	for _, s := range svcs {
		if len(c.Ports) == 0 {
			return s.Name, true
		}
		for _, sp := range s.Spec.Ports {
			target := sp.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(sp.Port)
			}
			if d, _ := rules.DeclaresPort(c, target); d {
				return s.Name, true
			}
		}
	}
	return "", false
}

// identicalProbes: a readiness probe that asks exactly what the liveness probe asks cannot
// take a copy out of rotation before liveness kills it, and says nothing liveness does not.
func (g *gapFinder) identicalProbes() {
	for i := range g.w.Template.Spec.Containers {
		c := &g.w.Template.Spec.Containers[i]
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			continue
		}
		if equality.Semantic.DeepEqual(c.ReadinessProbe.ProbeHandler, c.LivenessProbe.ProbeHandler) {
			g.add(g.specPath.Child("containers").Index(i).Child("readinessProbe"),
				"container %s's readiness probe checks the same thing as its liveness probe: a copy that cannot serve is restarted rather than taken out of rotation, and readiness reports nothing about what the copy depends on", c.Name)
		}
	}
}

// updateStrategy: a strategy that lets every copy go unready at once turns a bad revision into
// a full outage before any signal can stop it.
func (g *gapFinder) updateStrategy() {
	n := int(g.w.Declared)
	if n <= 0 {
		return
	}
	k := kinds.Of(g.w.Object)
	if k == nil {
		return
	}
	st := k.Strategy(g.w.Object)
	if st.Recreate {
		g.add(st.Path, "Recreate stops all %d copies before starting any of the new revision: a bad revision is a full outage", n)
		return
	}
	if st.MaxUnavailable == nil {
		return
	}
	// Rounded as the kind's controller rounds it: a Deployment's down
	// (pkg/controller/deployment/util.ResolveFenceposts), a DaemonSet's and a StatefulSet's up
	// (pkg/controller/daemon/util.UnavailableCount).
	if v, err := intstr.GetScaledValueFromIntOrPercent(st.MaxUnavailable, n, st.RoundUp); err == nil && v >= n {
		copies := fmt.Sprintf("all %d copies", n)
		if g.w.Kind == kinds.DaemonSet.Kind {
			copies = fmt.Sprintf("the copies on all %d nodes", n)
		}
		g.add(st.Path, "maxUnavailable %s lets %s be unavailable at once during a rollout", st.MaxUnavailable.String(), copies)
	}
}

// minReadySeconds: without it a DaemonSet or StatefulSet rollout moves on the instant a copy
// reports Ready, so a copy that fails a minute later has already been counted as good.
func (g *gapFinder) minReadySeconds() {
	var mrs int32
	switch o := g.w.Object.(type) {
	case *appsv1.DaemonSet:
		mrs = o.Spec.MinReadySeconds
	case *appsv1.StatefulSet:
		mrs = o.Spec.MinReadySeconds
	default:
		return
	}
	if mrs == 0 {
		g.add(field.NewPath("spec", "minReadySeconds"),
			"no minReadySeconds: the %s rollout moves to the next copy the instant one reports Ready, so a copy that fails a minute later was already counted as good", g.w.Kind)
	}
}
