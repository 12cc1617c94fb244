package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestStatefulSetWhoseClaimCannotBeProvisioned: the StatefulSet's volumeClaimTemplate names a
// StorageClass the cluster does not have. The statefulset controller makes the claim, the PV
// controller says it cannot provision it, and the scheduler keeps pod 0 off every node; pod 1
// is never made (OrderedReady). The tool must name the template's storageClassName.
func TestStatefulSetWhoseClaimCannotBeProvisioned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	labels := map[string]string{"app": "metrics-db"}
	pod := ingester("metrics-db", 1, reachableIntake).Spec.Template.Spec
	pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/metrics"}}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-db", Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](2),
			ServiceName: "metrics-db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template:    corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To("fast-ssd"),
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("20Gi")},
					},
				},
			}},
		},
	}
	if _, err := e.cs.AppsV1().StatefulSets(e.ns).Create(context.Background(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	want := verdict{
		kind: "StatefulSet", name: "metrics-db", shape: "never-starts", cause: "spec",
		suspect: "spec.volumeClaimTemplates[0].spec.storageClassName",
	}
	// The scheduler's message comes with the first pod; the PV controller's ProvisioningFailed
	// event on its own sync of the claim, which may be a moment later: wait for both.
	words := []string{"pod has unbound immediate PersistentVolumeClaims", `storageclass.storage.k8s.io "fast-ssd" not found`}
	deadline := time.Now().Add(90 * time.Second)
	var w *workload
	for {
		r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns}, want)
		w = r.find("StatefulSet", "metrics-db")
		var lacking []string
		for _, word := range words {
			if !hasEvidence(w, word) {
				lacking = append(lacking, word)
			}
		}
		if len(lacking) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("evidence lacks %q:\n%s", lacking, w)
		}
		time.Sleep(2 * time.Second)
	}
	if w.Counts.Declared != 2 || w.Counts.Serving != 0 {
		t.Errorf("counts = %+v, want 2 declared and none serving", w.Counts)
	}
}

// TestClaimLargerThanEveryVolume: a Deployment's claim asks 5Gi of a pre-made volume
// (storageClassName "") and the only such volume has 1Gi. The real PV controller finds no match
// and records FailedBinding on the claim; the scheduler keeps the pod off every node. With the
// volumes read, the tool must name the claim's storage request, not its class.
func TestClaimLargerThanEveryVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, world())
	ctx := context.Background()
	volumeName := "e2e-" + e.ns + "-nfs"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: volumeName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "",
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				NFS: &corev1.NFSVolumeSource{Server: "10.42.7.20", Path: "/exports/" + e.ns},
			},
		},
	}
	if _, err := e.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.cs.CoreV1().PersistentVolumes().Delete(context.Background(), volumeName, metav1.DeleteOptions{}) // best effort: the control plane is thrown away
	})
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "uploads"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(""),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			},
		},
	}
	if _, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := ingester("uploader", 1, reachableIntake)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "uploads", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "uploads"},
	}}}
	d.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "uploads", MountPath: "/uploads"}}
	e.create(t, d, false)

	want := verdict{
		name: "uploader", shape: "never-starts", cause: "spec",
		object: "PersistentVolumeClaim/uploads", suspect: "spec.resources.requests[storage]",
	}
	// The PV controller's FailedBinding comes on its own sync of the claim, the scheduler's
	// message with the pod: wait for both, so the verdict rests on the real controller's word.
	words := []string{"pod has unbound immediate PersistentVolumeClaims", "no persistent volumes available for this claim"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns}, want)
		w := r.find("Deployment", "uploader")
		var lacking []string
		for _, word := range words {
			if !hasEvidence(w, word) && !strings.Contains(w.Suspects[0].Reason, word) {
				lacking = append(lacking, word)
			}
		}
		if len(lacking) == 0 {
			if !strings.Contains(w.Suspects[0].Reason, "1Gi") {
				t.Errorf("the suspect's reason does not name the volume's 1Gi: %s", w.Suspects[0].Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("evidence lacks %q:\n%s", lacking, w)
		}
		time.Sleep(2 * time.Second)
	}
}
