package diagnose

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/fieldpath"
)

func TestRankSuspectsStorageClass(t *testing.T) {
	sc := "fast-ssd"
	replicas := int32(3)
	tpl := stTemplate()
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: stNS},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas, Template: *tpl,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &sc},
			}},
		},
	}
	w := stWorkload(nil)
	w.Kind, w.Name, w.Object = "StatefulSet", "db", sts
	w.Template, w.VolumeClaimTemplates = &sts.Spec.Template, sts.Spec.VolumeClaimTemplates
	// pkg/controller/volume/persistentvolume/pv_controller.go records the class lister's NotFound.
	stEvent(w, "PersistentVolumeClaim", "data-db-0", "", "ProvisioningFailed", `storageclass.storage.k8s.io "fast-ssd" not found`)
	got := rankSuspects(w)
	rule, object, path := stTop(got)
	if rule != rules.RuleStorageClass || object != "StatefulSet/db" || path != "spec.volumeClaimTemplates[0].spec.storageClassName" {
		t.Fatalf("top suspect = %s %s %s", rule, object, path)
	}
	if got[0].Value != "fast-ssd" {
		t.Errorf("value = %q, want fast-ssd", got[0].Value)
	}
}

func TestRankSuspectsNodeAffinityValue(t *testing.T) {
	w := stWorkload(func(t *corev1.PodTemplateSpec) {
		t.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
				{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-west-1d"}},
			}}},
		}}}
	})
	w.Snap.Nodes = []*corev1.Node{
		stNode("a", map[string]string{"kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": "eu-west-1a"}),
		stNode("b", map[string]string{"kubernetes.io/arch": "amd64", "topology.kubernetes.io/zone": "eu-west-1b"}),
	}
	stEvent(w, "Pod", stPod(w).Name, "", "FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
	got := rankSuspects(w)
	want := "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values[0]"
	if _, _, path := stTop(got); path != want {
		t.Fatalf("top suspect path = %s, want %s", path, want)
	}
	if i := stRank(got, "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]"); i >= 0 {
		t.Errorf("the arch requirement that nodes meet is suspect %d", i)
	}
}

func TestRankSuspectsValues(t *testing.T) {
	w := stWorkload(nil)
	w.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "INGEST_ENDPOINT", Value: "telemetry-intake.internal:9443"}}
	stChanged(w, c0+".env[0].value", "telemetry-intake.internal:8443", func(p *corev1.PodTemplateSpec) {
		p.Spec.Containers[0].Env[0].Value = "telemetry-intake.internal:8443"
	})
	w.Shape = ShapeLiveButIdle
	stLog(w, `{"level":"warn","logger":"forwarder","msg":"upstream dial failed, will retry","endpoint":"telemetry-intake.internal:9443","error":"dial tcp 10.96.14.7:9443: connect: connection refused"}`)
	got := rankSuspects(w)
	if len(got) == 0 {
		t.Fatal("no suspects")
	}
	s := got[0]
	if s.Value != "telemetry-intake.internal:9443" || s.PreviousValue != "telemetry-intake.internal:8443" || s.Confidence != ConfidenceHigh {
		t.Errorf("suspect = value %q previous %q confidence %s", s.Value, s.PreviousValue, s.Confidence)
	}
	// The previous value comes from the previous template when no change names the path.
	w.Changes = nil
	got = rankSuspects(w)
	if got[0].PreviousValue != "telemetry-intake.internal:8443" || got[0].Confidence != ConfidenceMedium {
		t.Errorf("unchanged suspect = previous %q confidence %s", got[0].PreviousValue, got[0].Confidence)
	}
}

func TestRankSuspectsNotForWorkingShapes(t *testing.T) {
	for _, shape := range []Shape{ShapeHealthy, ShapeProgressing} {
		w := stWorkload(nil)
		w.Shape = shape
		stTerminated(w, "OOMKilled", 137, "")
		if got := rankSuspects(w); len(got) != 0 {
			t.Errorf("%s: %d suspects, want none", shape, len(got))
		}
	}
}

func TestRankSuspectsDeterministic(t *testing.T) {
	build := func() *workload {
		w := stWorkload(func(t *corev1.PodTemplateSpec) {
			t.Spec.Containers = append(t.Spec.Containers, corev1.Container{
				Name: "sidecar", Image: "registry.internal/shop/proxy:2.0.0",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
			})
		})
		stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: exceeded quota: compute, requested: limits.memory=512Mi, used: limits.memory=1792Mi, limited: limits.memory=2Gi`)
		return w
	}
	first := rankSuspects(build())
	if len(first) != 2 {
		t.Fatalf("%d suspects, want one per container", len(first))
	}
	if first[0].Score != first[1].Score || first[0].Path.String() > first[1].Path.String() {
		t.Errorf("equal scores must rank by path: %s, %s", first[0].Path, first[1].Path)
	}
	for range 20 {
		again := rankSuspects(build())
		for i := range first {
			if again[i].Path.String() != first[i].Path.String() {
				t.Fatalf("rank %d = %s, was %s", i, again[i].Path, first[i].Path)
			}
		}
	}
}

func TestValueAtRendersFields(t *testing.T) {
	tpl := stTemplate()
	root := field.NewPath("spec", "template")
	tests := []struct {
		path, want string
		ok         bool
	}{
		{c0 + ".image", "registry.internal/shop/api:1.4.0", true},
		{c0 + ".resources.limits.memory", "256Mi", true},
		{c0 + ".readinessProbe.httpGet.port", "http", true},
		{c0 + ".ports[0].containerPort", "8080", true},
		{"spec.template.metadata.labels", "app.kubernetes.io/name=api,app=api", true},
		{"spec.template.spec.imagePullSecrets", "", false},
		{c0 + ".env[0].value", "", false},
	}
	for _, tt := range tests {
		got, ok := fieldpath.ValueAt(root, tpl, stPath(tt.path))
		if got != tt.want || ok != tt.ok {
			t.Errorf("fieldpath.ValueAt(%s) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRankSuspectsIgnoreOldRevisionTroubles(t *testing.T) {
	w := stWorkload(nil)
	old := stPod(w)
	// An old-revision copy that was OOMKilled days ago; the current revision has no copies
	// because the quota refuses them.
	stTerminated(w, "OOMKilled", 137, "")
	w.CurrentPods, w.CurrentRevision, w.Pods = nil, "2", []*corev1.Pod{old}
	stEvent(w, "ReplicaSet", "api-6b7d9c5f4", "", "FailedCreate", `Error creating: pods "api-6b7d9c5f4-9xk2m" is forbidden: exceeded quota: compute, requested: requests.memory=128Mi, used: requests.memory=8064Mi, limited: requests.memory=8Gi`)
	got := rankSuspects(w)
	if rule, _, path := stTop(got); rule != rules.RuleQuotaExceeded || path != c0+".resources.requests.memory" {
		t.Errorf("top suspect = %s %s", rule, path)
	}
	if i := stRank(got, c0+".resources.limits.memory"); i >= 0 {
		t.Errorf("the old copy's OOM kill is suspect %d", i)
	}
}

func TestDependencyDespiteChange(t *testing.T) {
	down := `failed to pull and unpack image "%s": failed to resolve reference "%s": failed to do request: Head "https://registry.internal/v2/shop/api/manifests/1.5.0": dial tcp 10.42.0.40:443: i/o timeout`
	tests := []struct {
		name, previous, current string
		want                    bool
	}{
		{"new tag on the same registry", "registry.internal/shop/api:1.4.0", "registry.internal/shop/api:1.5.0", true},
		{"moved to another registry", "registry.old.internal/shop/api:1.4.0", "registry.internal/shop/api:1.4.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := stWorkload(nil)
			w.Template.Spec.Containers[0].Image = tt.current
			stChanged(w, image, tt.previous, nil)
			stWaiting(w, "ErrImagePull", strings.ReplaceAll(down, "%s", tt.current))
			got := rankSuspects(w)
			if rule, _, path := stTop(got); rule != rules.RuleImageRegistryDown || path != image {
				t.Fatalf("top suspect = %s %s", rule, path)
			}
			if d := dependencyDespiteChange(&got[0]); d != tt.want {
				t.Errorf("dependencyDespiteChange = %v, want %v", d, tt.want)
			}
		})
	}
	if rules.RegistryHost("nginx:1.27") != "docker.io" || rules.RegistryHost("localhost:5000/x") != "localhost:5000" {
		t.Error("registryHost misreads Docker Hub or a local registry")
	}
}
