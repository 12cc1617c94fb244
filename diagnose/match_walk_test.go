package diagnose

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

// The types the reference walk renders whole or keys by resource name, as the walk does.
var (
	walkIntOrStringType  = reflect.TypeFor[intstr.IntOrString]()
	walkQuantityType     = reflect.TypeFor[resource.Quantity]()
	walkTimeType         = reflect.TypeFor[metav1.Time]()
	walkResourceNameType = reflect.TypeFor[corev1.ResourceName]()
)

// walkObject is the reference walk that leaves and descend are held to: it visits every node of v (a typed API object or part of one) depth first, with its
// path under root in JSON field names. visit returns false to skip a node's children.
// Map keys are visited in sorted order, so the walk is deterministic.
func walkObject(v reflect.Value, p *field.Path, visit func(p *field.Path, v reflect.Value) bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		walkObject(v.Elem(), p, visit)
		return
	}
	if !visit(p, v) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		switch v.Type() {
		case walkIntOrStringType, walkQuantityType, walkTimeType:
			return
		}
		for _, f := range fieldpath.JSONFieldsOf(v.Type()) {
			child := p
			if !f.Inline {
				child = p.Child(f.Name)
			}
			walkObject(v.Field(f.Index), child, visit)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			walkObject(v.Index(i), p.Index(i), visit)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		resources := v.Type().Key() == walkResourceNameType
		for _, k := range keys {
			child := p.Key(k.String())
			if resources {
				child = fieldpath.ResourcePath(p, k.String())
			}
			walkObject(v.MapIndex(k), child, visit)
		}
	}
}

// valueAtByWalk is valueAt as a full walk of the object: the reference the targeted descent
// must agree with.
func valueAtByWalk(root *field.Path, obj any, path *field.Path) (string, bool) {
	want := path.String()
	var (
		found  reflect.Value
		exists bool
	)
	walkObject(reflect.ValueOf(obj), root, func(p *field.Path, v reflect.Value) bool {
		if exists {
			return false
		}
		s := ""
		if p != nil {
			s = p.String()
		}
		if s == want {
			found, exists = v, true
			return false
		}
		return true
	})
	if !exists {
		return "", false
	}
	return fieldpath.Render(found)
}

// TestValueAtAgreesWithWalk looks up every node of real objects, and paths beside them, both
// ways.
func TestValueAtAgreesWithWalk(t *testing.T) {
	tpl := stTemplate()
	c := &tpl.Spec.Containers[0]
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), "nvidia.com/gpu": resource.MustParse("1")}
	c.Args = []string{"--listen=:8080", "--config=/etc/app.yaml"}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
	tpl.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64"}
	tpl.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	replicas := int32(3)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: *tpl}}
	svc := stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))

	for _, tc := range []struct {
		name string
		root *field.Path
		obj  any
	}{
		{"template under spec.template", field.NewPath("spec", "template"), tpl},
		{"deployment at the root", nil, d},
		{"service at the root", nil, svc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var paths []*field.Path
			walkObject(reflect.ValueOf(tc.obj), tc.root, func(p *field.Path, _ reflect.Value) bool {
				if p != nil {
					paths = append(paths, p)
				}
				return true
			})
			if len(paths) < 20 {
				t.Fatalf("walked only %d nodes", len(paths))
			}
			check := func(p *field.Path) {
				t.Helper()
				got, gotOK := fieldpath.ValueAt(tc.root, tc.obj, p)
				want, wantOK := valueAtByWalk(tc.root, tc.obj, p)
				if got != want || gotOK != wantOK {
					t.Errorf("fieldpath.ValueAt(%s) = %q, %v; the walk finds %q, %v", p, got, gotOK, want, wantOK)
				}
			}
			for _, p := range paths {
				check(p)
				// Beside every node: a missing child, index and key.
				check(p.Child("nope"))
				check(p.Index(99))
				check(p.Key("nope"))
			}
			for _, s := range []string{
				"spec.template.spec.containers[0].resources.limits[memory]",
				"spec.template.spec.containers[0].resources.limits.nvidia.com/gpu", "spec.template.spec.containers[-1].name",
				"spec.template.spec.containers[00].name", "spec.template.spec.nodeSelector.kubernetes",
			} {
				if tc.root == nil || strings.HasPrefix(s, tc.root.String()) {
					check(stPath(s))
				}
			}
		})
	}
}

// leavesByWalk is leaves as a visit of walkObject: the reference leaves must agree with.
func leavesByWalk(root *field.Path, obj any) []fieldpath.Leaf {
	if obj == nil {
		return nil
	}
	var out []fieldpath.Leaf
	walkObject(reflect.ValueOf(obj), root, func(p *field.Path, v reflect.Value) bool {
		if s, text, ok := fieldpath.Scalar(v); ok {
			if s != "" {
				out = append(out, fieldpath.Leaf{Path: p, PathString: p.String(), Value: s, Text: text})
			}
			return false
		}
		return true
	})
	return out
}

// TestLeavesAsWalk holds leaves, which builds a path and its string only for a leaf it keeps,
// to the full walk and field.Path.String, with reflect.DeepEqual and the paths as strings: templates with resource names
// written as fields and as keys, IntOrString and quantities, maps, lists, inline volume
// sources, byte slices, unset and empty values; a Deployment and a Service at the nil root.
func TestLeavesAsWalk(t *testing.T) {
	tpl := stTemplate()
	c := &tpl.Spec.Containers[0]
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), "nvidia.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("0")}
	c.Args = []string{"--listen=:8080", "", "--config=/etc/app.yaml"}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
	c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}}
	tpl.Spec.NodeSelector = map[string]string{"kubernetes.io/arch": "arm64", "zone": ""}
	tpl.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	tpl.Spec.Volumes = append(tpl.Spec.Volumes,
		corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "a.yaml"}}}}},
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	tpl.Annotations = map[string]string{"a/b": "1", "c.d": "2"}
	replicas := int32(3)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: *tpl}}
	svc := stService("api", map[string]string{"app": "api"}, intstr.FromString("http"))
	secret := &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"s": "t"}}
	for _, tc := range []struct {
		name string
		root *field.Path
		obj  any
		min  int
	}{
		{"template under spec.template", field.NewPath("spec", "template"), tpl, 30},
		{"template under a CronJob's path", field.NewPath("spec", "jobTemplate", "spec", "template"), *tpl, 30},
		{"one container", field.NewPath("spec", "template", "spec", "containers").Index(0), c, 10},
		{"deployment at the root", nil, d, 30},
		{"service at the root", nil, svc, 5},
		{"byte slices skipped", field.NewPath("x"), secret, 1},
		{"an empty template", field.NewPath("spec", "template"), &corev1.PodTemplateSpec{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := fieldpath.Leaves(tc.root, tc.obj), leavesByWalk(tc.root, tc.obj)
			if len(want) < tc.min {
				t.Fatalf("the walk finds only %d leaves, want at least %d", len(want), tc.min)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("leaves = %v\nwalk   = %v", got, want)
			}
			for i := range got {
				if got[i].Path.String() != want[i].Path.String() {
					t.Errorf("leaf %d at %s, the walk says %s", i, got[i].Path, want[i].Path)
				}
			}
		})
	}
}
