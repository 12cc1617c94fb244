package diagnose

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// RankedChange is a field a new pod template changes, with the risk the engine would give it
// if the revision it rolls out failed and nothing named a field.
type RankedChange struct {
	Change
	// Risk is high when the field is where such a failure usually lies (a probe, an env value
	// that names an endpoint, the image, the command), medium when it often is, low otherwise.
	Risk Confidence
	// Shape is the failure shape whose look implicates the field most; empty when none does.
	Shape Shape
	// Score orders the changes: higher first, then by path.
	Score int
}

// RankTemplateChanges lists the fields that differ between the live template prev and the
// new template cur (paths under root, usually spec.template) and ranks them as the engine
// ranks changed fields whose failing copies' logs it could not read: by what a live-but-idle
// or a starts-and-dies failure of the new revision would point at.
func RankTemplateChanges(root *field.Path, prev, cur *corev1.PodTemplateSpec) []RankedChange {
	if prev == nil || cur == nil {
		return nil
	}
	changes := diffTemplates(root, prev, cur)
	out := make([]RankedChange, 0, len(changes))
	for _, c := range changes {
		rc := RankedChange{Change: c, Risk: ConfidenceLow}
		best := 0
		for _, s := range []Shape{ShapeLiveButIdle, ShapeStartsAndDies} {
			if look := failureLook(s, c.Path.String(), c.Current); look > best {
				best, rc.Shape = look, s
			}
		}
		rc.Score = scoreUnnamed + best
		switch {
		case best >= lookStrong:
			rc.Risk = ConfidenceHigh
		case best >= lookFair:
			rc.Risk = ConfidenceMedium
		}
		out = append(out, rc)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Path.String() < out[j].Path.String()
	})
	return out
}

// SignalGapsOf lists the signal gaps of a workload spec not yet applied: obj is a workload's
// object (*appsv1.Deployment, ...), declared its number of copies (for a DaemonSet, the nodes
// it would run on) and services those that will select its template. It returns what the
// engine's signalGaps returns for the same workload when live, and nil for any other object.
func SignalGapsOf(obj any, declared int32, services []*corev1.Service) []SignalGap {
	k := kinds.Of(obj)
	if k == nil {
		return nil
	}
	m := obj.(metav1.Object)
	w := &workload{
		Kind: k.Kind, Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj, Declared: declared, Services: services,
		Template: k.Template(obj), TemplatePath: k.TemplatePath,
	}
	return signalGaps(w)
}
