package fieldpath

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func fuzzTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"disk": "ssd"},
		Containers: []corev1.Container{{
			Name: "web", Image: "registry.internal/web:1.0",
			Env:            []corev1.EnvVar{{Name: "A", Value: "1"}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
		}},
	}}
}

// FuzzDescend walks the field-path walker down a pod template along any path text: it must
// never panic, whatever brackets, dots and indexes the text holds.
func FuzzDescend(f *testing.F) {
	for _, s := range []string{
		".spec.containers[0].image", ".spec.nodeSelector[disk]", ".spec.containers[0].resources.requests[cpu]",
		".spec.containers[9]", "[", ".spec.containers[-1]", ".spec.containers[0].readinessProbe.httpGet.port", "..", ".spec.containers[0",
	} {
		f.Add(s)
	}
	tmpl := fuzzTemplate()
	root := field.NewPath("spec", "template")
	f.Fuzz(func(_ *testing.T, rest string) {
		descend(reflect.ValueOf(tmpl), rest)
		ValueAt(root, tmpl, field.NewPath("spec", "template").Child(rest))
	})
}
