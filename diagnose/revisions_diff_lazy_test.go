package diagnose

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// diffByChild is the diff as it was written before its paths were built lazily: a
// *field.Path for every node visited. TestDiffLazyPathsAsChild holds diffTemplates to it.
func diffByChild(p *field.Path, a, b reflect.Value, out *[]Change) {
	az, bz := isEmpty(a), isEmpty(b)
	switch {
	case az && bz:
		return
	case az || bz:
		*out = append(*out, Change{Path: p, Previous: diffRender(a), Current: diffRender(b)})
		return
	}
	t := a.Type()
	if t == quantityType {
		if qa, qb := a.Interface().(resource.Quantity), b.Interface().(resource.Quantity); qa.Cmp(qb) != 0 {
			*out = append(*out, Change{Path: p, Previous: diffRender(a), Current: diffRender(b)})
		}
		return
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) && t.Kind() == reflect.Struct {
		if ra, rb := diffRender(a), diffRender(b); ra != rb {
			*out = append(*out, Change{Path: p, Previous: ra, Current: rb})
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		diffByChild(p, a.Elem(), b.Elem(), out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, inline := refJSONName(f)
			if name == "-" {
				continue
			}
			child := p
			if !inline {
				child = p.Child(name)
			}
			diffByChild(child, a.Field(i), b.Field(i), out)
		}
	case reflect.Map:
		keys := map[string]reflect.Value{}
		for _, k := range a.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = k
		}
		for _, k := range b.MapKeys() {
			keys[fmt.Sprint(k.Interface())] = k
		}
		names := make([]string, 0, len(keys))
		for n := range keys {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			k := keys[n]
			diffByChild(p.Key(n), mapIndex(a, k), mapIndex(b, k), out)
		}
	case reflect.Slice, reflect.Array:
		n := max(a.Len(), b.Len())
		for i := 0; i < n; i++ {
			diffByChild(p.Index(i), index(a, i), index(b, i), out)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, Change{Path: p, Previous: diffRender(a), Current: diffRender(b)})
		}
	}
}

// TestDiffLazyPathsAsChild compares diffTemplates with diffByChild on pairs of templates that
// differ in random ways (scalars, quantities, IntOrString, map entries added, removed and
// changed, lists grown and shrunk, inline volume sources, whole fields set on one side, changes
// side by side under one parent), under two roots, with reflect.DeepEqual on the changes.
func TestDiffLazyPathsAsChild(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	mutations := []func(*corev1.PodTemplateSpec){
		func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = fmt.Sprintf("web:%d", rng.Intn(9)) },
		func(t *corev1.PodTemplateSpec) {
			if len(t.Spec.Containers[0].Env) > 0 {
				t.Spec.Containers[0].Env[0].Value = "other"
			}
		},
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Env = append(t.Spec.Containers[0].Env, corev1.EnvVar{Name: "X", Value: "1"})
		},
		func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Env = nil },
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("65536Ki"), corev1.ResourceCPU: resource.MustParse("250m")}
		},
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
		},
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}}, PeriodSeconds: 5}
		},
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "sidecar", Image: "sidecar:1", Ports: []corev1.ContainerPort{{ContainerPort: 9090}}})
		},
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Volumes = append(t.Spec.Volumes, corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("cfg-%d", rng.Intn(3))}}}})
		},
		func(t *corev1.PodTemplateSpec) { t.Labels[fmt.Sprintf("k%d", rng.Intn(4))] = "v" },
		func(t *corev1.PodTemplateSpec) { delete(t.Labels, "app") },
		func(t *corev1.PodTemplateSpec) { t.Annotations = map[string]string{"a": fmt.Sprint(rng.Intn(3))} },
		func(t *corev1.PodTemplateSpec) { t.Spec.NodeSelector = map[string]string{"zone": "b"} },
		func(t *corev1.PodTemplateSpec) { t.Spec.ServiceAccountName = "robot" },
		func(t *corev1.PodTemplateSpec) {
			t.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
		},
	}
	roots := []*field.Path{field.NewPath("spec", "template"), field.NewPath("spec", "jobTemplate", "spec", "template")}
	compared, changed := 0, 0
	for i := 0; i < 400; i++ {
		prev := basicTemplate("web")
		cur := *prev.DeepCopy()
		for _, side := range []*corev1.PodTemplateSpec{&prev, &cur} {
			for n := rng.Intn(4); n > 0; n-- {
				mutations[rng.Intn(len(mutations))](side)
			}
		}
		root := roots[i%len(roots)]
		got := diffTemplates(root, &prev, &cur)
		var want []Change
		diffByChild(root, reflect.ValueOf(&prev).Elem(), reflect.ValueOf(&cur).Elem(), &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: lazy paths give %v, Child gives %v", i, got, want)
		}
		for k := range got {
			if got[k].Path.String() != want[k].Path.String() {
				t.Fatalf("case %d: change %d at %s, want %s", i, k, got[k].Path, want[k].Path)
			}
		}
		compared++
		if len(want) > 1 {
			changed++
		}
	}
	if changed < 100 {
		t.Fatalf("only %d of %d cases had more than one change: the mutations do not exercise shared parents", changed, compared)
	}
}

// TestSpecOfAsChild: the shared spec path under spec.template is the path Child builds, and
// any other template path gets its own.
func TestSpecOfAsChild(t *testing.T) {
	for _, tp := range []*field.Path{specTemplate, field.NewPath("spec", "template"), field.NewPath("spec", "jobTemplate", "spec", "template")} {
		got, want := specOf(tp), tp.Child("spec")
		if !reflect.DeepEqual(got, want) || got.String() != want.String() {
			t.Errorf("specOf(%s) = %s, want %s", tp, got, want)
		}
	}
	if specOf(specTemplate) != specOf(specTemplate) { //nolint:staticcheck // two calls: the same pointer when it is not built per call
		t.Error("the spec path under specTemplate is built per call")
	}
}

// refJSONName reads a field's tag as encoding/json does: an embedded field without a name is
// inlined, and any other field is its tag's name or its own.
func refJSONName(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" && f.Anonymous {
		return "", true
	}
	if name == "" {
		return f.Name, false
	}
	return name, false
}
