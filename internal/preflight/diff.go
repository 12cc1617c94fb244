package preflight

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
	"github.com/kubediagnose/kubectl-diagnose/internal/kinds"
)

// liveTemplate is the pod template of a live workload: its current revision.
func liveTemplate(obj any) *corev1.PodTemplateSpec {
	if k := kinds.Of(obj); k != nil {
		return k.Template(obj)
	}
	return nil
}

// serverDefaults are the fields the API server fills in when a manifest leaves them unset
// (pkg/apis/core/v1/defaults.go), by their last path segment, with the value it sets ("" for
// a value that depends on other fields). A field the manifest leaves unset and the live object
// holds at its default is no change.
var serverDefaults = map[string]string{
	"terminationMessagePath":        "/dev/termination-log",
	"terminationMessagePolicy":      "File",
	"imagePullPolicy":               "",
	"protocol":                      "TCP",
	"dnsPolicy":                     "ClusterFirst",
	"restartPolicy":                 "Always",
	"schedulerName":                 "default-scheduler",
	"terminationGracePeriodSeconds": "30",
	"timeoutSeconds":                "1",
	"periodSeconds":                 "10",
	"successThreshold":              "1",
	"failureThreshold":              "3",
	"scheme":                        "HTTP",
	"enableServiceLinks":            "true",
	"defaultMode":                   "420",
	"apiVersion":                    "v1",
	"serviceAccount":                "",
	"securityContext":               "{}",
}

// changes diffs the manifest's template against the live current revision and ranks the
// changed fields by the risk the engine would give each if the revision failed.
func changes(s *subject) []Change {
	out := []Change{}
	if s.live == nil || s.live.Object == nil {
		return out
	}
	prev := liveTemplate(s.live.Object)
	for _, c := range diagnose.RankTemplateChanges(field.NewPath("spec", "template"), prev, s.w.Template) {
		p := c.Path.String()
		if c.Current == "" && defaulted(fieldpath.Of(c.Path), c.Previous) {
			continue
		}
		out = append(out, Change{Path: p, Value: c.Current, PreviousValue: c.Previous, Risk: c.Risk, Shape: c.Shape})
	}
	return out
}

// defaulted reports a field the API server defaults, removed from the manifest while the live
// revision holds its default: the server writes it back, so it is no change.
func defaulted(path []fieldpath.Segment, previous string) bool {
	if len(path) == 0 || path[len(path)-1].Sub != "" {
		return false
	}
	def, ok := serverDefaults[path[len(path)-1].Name]
	return ok && (def == "" || def == previous)
}

// signalGaps are the engine's signal gaps of the new spec, with the Services that will select
// it after the apply.
func signalGaps(s *subject) []diagnose.SignalGap {
	var svcs []*corev1.Service
	tpl := labels.Set(s.w.Template.Labels)
	for _, svc := range s.servicesAfterApply() {
		if len(svc.Spec.Selector) > 0 && labels.SelectorFromSet(svc.Spec.Selector).Matches(tpl) {
			svcs = append(svcs, svc)
		}
	}
	declared := int32(1)
	switch o := s.w.Object.(type) {
	case *appsv1.Deployment:
		declared = replicas(o.Spec.Replicas)
	case *appsv1.StatefulSet:
		declared = replicas(o.Spec.Replicas)
	case *appsv1.DaemonSet:
		if n := len(s.f.Nodes); n > 0 {
			declared = int32(n)
		}
	}
	gs := diagnose.SignalGapsOf(s.w.Object, declared, svcs)
	if gs == nil {
		gs = []diagnose.SignalGap{}
	}
	return gs
}
