package live

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// internalError is kube-apiserver's answer when its storage fails a list: 500 InternalError.
func internalError(_ string) error {
	return apierrors.NewInternalError(errors.New("rpc error: code = Unavailable desc = etcdserver: leader changed"))
}

// TestAServerErrorOnAnAuxiliaryListIsVisibility: a 5xx or a timeout on events, slices, quotas
// or claims leaves the read partial and says so, as a 403 does; on pods it ends the read,
// naming the list and the namespace.
func TestAServerErrorOnAnAuxiliaryListIsVisibility(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, internalError("events")
	})
	client.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	})
	client.PrependReactor("list", "resourcequotas", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.DeadlineExceeded
	})
	snap, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v; the workloads and pods were listed, so the read is partial, not failed", err)
	}
	if len(snap.Deployments) != 1 {
		t.Errorf("deployments = %d, want 1", len(snap.Deployments))
	}
	want := map[string]string{
		"Event":         "the API server failed to list events: Error from server (InternalError): Internal error occurred: rpc error",
		"EndpointSlice": "the API server failed to list endpointslices: Error from server (ServiceUnavailable): the server is currently unable",
		"ResourceQuota": "the API server did not answer the list of resourcequotas within 10s",
	}
	for _, v := range snap.Visibility {
		if w, ok := want[v.Kind]; ok && v.Namespace == "telemetry" && strings.HasPrefix(v.Reason, w) {
			delete(want, v.Kind)
		}
	}
	if len(want) > 0 {
		t.Errorf("visibility %+v lacks %v", snap.Visibility, want)
	}

	t.Run("pods stay fatal, and the list is named", func(t *testing.T) {
		client := fake.NewClientset(deployment("telemetry", "ingester"))
		client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, internalError("pods")
		})
		_, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
		if err == nil || !strings.Contains(err.Error(), "list pods in namespace telemetry: Internal error occurred") {
			t.Errorf("err = %v, want the pods list and its namespace named", err)
		}
	})
	t.Run("workloads stay fatal", func(t *testing.T) {
		client := fake.NewClientset(deployment("telemetry", "ingester"))
		client.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewGenericServerResponse(502, "list", schema.GroupResource{Group: "apps", Resource: "deployments"}, "", "Bad Gateway", 0, true)
		})
		_, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
		if err == nil || !strings.Contains(err.Error(), "list deployments in namespace telemetry:") {
			t.Errorf("err = %v, want the deployments list named", err)
		}
	})
}

// TestWatchListsAgainAKindTheFirstReadLost: serve and the console go on after a 500 on events,
// and the events come in, and the warning goes, once the server lists them.
func TestWatchListsAgainAKindTheFirstReadLost(t *testing.T) {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "telemetry", Name: "ingester.18eafaef7806b2bd"},
		InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "telemetry", Name: "ingester"},
		Reason:         "ScalingReplicaSet", Message: "Scaled up replica set ingester-5967ddbf9 from 0 to 1", Type: "Normal",
	}
	client := fake.NewClientset(deployment("telemetry", "ingester"), ev)
	var failures atomic.Int64
	client.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		// The first read's list and the informer's first try fail; the next succeeds.
		if failures.Add(1) <= 2 {
			return true, nil, internalError("events")
		}
		return false, nil, nil
	})
	src := newForClient(client, Options{Namespaces: []string{"telemetry"}}, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, errs := src.Watch(ctx)
	deadline := time.After(30 * time.Second)
	first := true
	for {
		select {
		case err := <-errs:
			t.Fatalf("the lost kind was reported as a failed read: %v", err)
		case s := <-snaps:
			lost := false
			for _, v := range s.Visibility {
				lost = lost || v.Kind == "Event"
			}
			if first {
				if !lost || len(s.Events) != 0 || len(s.Deployments) != 1 {
					t.Fatalf("first snapshot: %d events, visibility %+v; want the deployment, no events, and the Event entry", len(s.Events), s.Visibility)
				}
				first = false
				continue
			}
			if !lost && len(s.Events) == 1 {
				return
			}
		case <-deadline:
			t.Fatalf("events never came in after %d failed lists", failures.Load())
		}
	}
}
