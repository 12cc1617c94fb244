package live

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
	"k8s.io/utils/ptr"
)

// benchPodList is a namespace's PodList as an API server encodes it: n pods of 2,000 templates,
// each with what a scheduled, running copy carries (a container with requests, environment and
// mounts, tolerations, conditions, statuses).
func benchPodList(b testing.TB, n int) []byte {
	b.Helper()
	at := metav1.NewTime(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC))
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "12345"}}
	secs := int64(300)
	for i := range n {
		app, hash := fmt.Sprintf("cart-%04d", i/10%2000), fmt.Sprintf("%010x", i/10%2000*7919)
		name := fmt.Sprintf("%s-%s-%05d", app, hash, i)
		p := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: "scale", UID: types.UID(fmt.Sprintf("0c5e2a4b-1f0d-4c9e-9a7b-%012d", i)),
				ResourceVersion: fmt.Sprint(1000 + i), CreationTimestamp: at, GenerateName: app + "-" + hash + "-",
				Labels: map[string]string{"app": app, "pod-template-hash": hash, "topology.kubernetes.io/zone": "sim-1a"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
					UID: types.UID(fmt.Sprintf("rs-%d", i/10)), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Spec: corev1.PodSpec{
				NodeName: fmt.Sprintf("sim-node-%03d", i%200), ServiceAccountName: "default", SchedulerName: "default-scheduler",
				RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, TerminationGracePeriodSeconds: &secs,
				Containers: []corev1.Container{{
					Name: "app", Image: "registry.example.com/shop/" + app + ":1.4.2", ImagePullPolicy: corev1.PullIfNotPresent,
					Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Env:   []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "UPSTREAM", Value: "http://inventory:8080"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
					},
					VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				}},
				Tolerations: []corev1.Toleration{
					{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
					{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
				},
			},
			Status: corev1.PodStatus{
				Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: fmt.Sprintf("10.244.%d.%d", i/250%250, i%250), StartTime: &at,
				QOSClass: corev1.PodQOSBurstable,
				Conditions: []corev1.PodCondition{
					{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
				},
				ContainerStatuses: []corev1.ContainerStatus{{
					Name: "app", Ready: true, Started: ptr.To(true), Image: "registry.example.com/shop/" + app + ":1.4.2",
					ImageID:     "registry.example.com/shop/" + app + "@sha256:9f2c1e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e",
					ContainerID: fmt.Sprintf("containerd://%064x", i), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
				}},
			},
		}
		l.Items = append(l.Items, p)
	}
	raw, err := l.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkPodList20k lists a 20,000-pod namespace from a server answering in protobuf, as an
// API server does, through the read's page function (the typed client's List, its pods then
// taken apart) and through the typed client's List alone, which is what taking them apart costs.
func BenchmarkPodList20k(b *testing.B) {
	var pb bytes.Buffer
	list := &corev1.PodList{}
	if err := list.Unmarshal(benchPodList(b, 20000)); err != nil {
		b.Fatal(err)
	}
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &pb); err != nil {
		b.Fatal(err)
	}
	body := pb.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		ContentType: runtime.ContentTypeProtobuf, AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON,
	}}
	c, err := newGroupsClient(cfg, srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	typed := pageFunc(c.CoreV1().Pods("scale").List)
	for _, bc := range []struct {
		name string
		page pager.ListPageFunc
	}{
		{"read", kindCalls["Pod"].list(c, "scale")},
		{"typed", typed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for range b.N {
				l, err := bc.page(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
				if err != nil || meta.LenList(l) != 20000 {
					b.Fatal(err, meta.LenList(l))
				}
			}
		})
	}
}
