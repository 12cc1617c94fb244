package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// hostileSource is a source whose kubeconfig points at srv, reading namespace telemetry.
func hostileSource(t testing.TB, srv *httptest.Server) *Source {
	t.Helper()
	return hostileSourceWithTimeout(t, srv, "5s")
}

// hostileSourceWithTimeout is hostileSource with --request-timeout set to timeout.
func hostileSourceWithTimeout(t testing.TB, srv *httptest.Server, timeout string) *Source {
	t.Helper()
	return kubeconfigSource(t, srv.URL, "", timeout)
}

// kubeconfigSource is a source whose kubeconfig's one context reaches server (its cluster entry
// extended by clusterExtra, e.g. ", insecure-skip-tls-verify: true"), reading namespace telemetry.
func kubeconfigSource(t testing.TB, server, clusterExtra, timeout string) *Source {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q%s}
users:
- name: u
  user: {token: abc}
contexts:
- name: hostile
  context: {cluster: c, user: u, namespace: telemetry}
current-context: hostile
`, server, clusterExtra)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.Timeout = &timeout
	src, err := New(flags, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return src
}

// statusBody is a metav1.Status as kube-apiserver writes it for a refused list.
func forbiddenStatus(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	group := ""
	if parts[0] == "apis" {
		group = parts[1]
	}
	qualified := resource
	if group != "" {
		qualified += "." + group
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s is forbidden: User \"system:anonymous\" cannot list resource \"%s\" in API group \"%s\" in the namespace \"telemetry\"","reason":"Forbidden","details":{"group":%q,"kind":%q},"code":403}`+"\n",
		qualified, resource, group, group, resource)
}

func TestHostileServersFailTheReadInOneLine(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{
			// A web server or a proxy on the wrong port: Go's own 404 page.
			name:    "404 to every request",
			handler: http.NotFound,
			want:    []string{"is not a Kubernetes API server", "the server could not find the requested resource"},
		},
		{
			// A web server's catch-all page.
			name: "HTML page to every request",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = fmt.Fprint(w, "<html><body>It works!</body></html>\n")
			},
			want: []string{"is not a Kubernetes API server", "text/html"},
		},
		{
			// A JSON health endpoint answering every path: decodes as an empty list.
			name: "200 JSON to every request",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = fmt.Fprint(w, `{"status":"ok"}`+"\n")
			},
			want: []string{"is not a Kubernetes API server: it answered the list of", "with no resourceVersion"},
		},
		{
			// A proxy whose backend fails, with its multi-line error page (client-go quotes it).
			name: "500 error page to every request",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = fmt.Fprint(w, "<html>\n<head><title>500 Internal Server Error</title></head>\n<body>\n<center><h1>500 Internal Server Error</h1></center>\n</body>\n</html>\n")
			},
			want: []string{"read from http://", "an error on the server", "has prevented the request from succeeding"},
		},
		{
			// A reverse proxy that refuses everything with a plain-text 403.
			name: "plain 403 to every request",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "Forbidden", http.StatusForbidden)
			},
			want: []string{"cannot list any workload in namespace telemetry", "Forbidden"},
		},
		{
			// An API server that grants nothing: kube-apiserver's own Forbidden status.
			name:    "API server forbidding every list",
			handler: forbiddenStatus,
			want:    []string{"cannot list any workload in namespace telemetry", `deployments.apps is forbidden: User "system:anonymous" cannot list resource "deployments"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			snap, err := hostileSource(t, srv).Snapshot(context.Background())
			if err == nil {
				t.Fatalf("Snapshot succeeded with %d deployments and visibility %+v; want an error", len(snap.Deployments), snap.Visibility)
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") || strings.Contains(msg, "forbidden: forbidden") {
				t.Errorf("error = %q, want one line", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error = %q, want it to contain %q", msg, w)
				}
			}
		})
	}
}

func TestForbiddenReasonSaysForbiddenOnce(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "kube-apiserver's RBAC refusal",
			err:  apierrors.NewForbidden(gr, "", errors.New(`User "bob" cannot list resource "deployments" in API group "apps" in the namespace "telemetry"`)),
			want: `forbidden: User "bob" cannot list resource "deployments" in API group "apps" in the namespace "telemetry"`,
		},
		{
			// What client-go makes of a proxy's text/plain 403.
			name: "a proxy's bare Forbidden",
			err:  apierrors.NewGenericServerResponse(403, "get", gr, "", "Forbidden", 0, true),
			want: "forbidden (get deployments.apps)",
		},
		{
			// kube-apiserver's refusal of a non-resource path starts with the word itself.
			name: "a message that starts with forbidden",
			err:  &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: `forbidden: User "bob" cannot get path "/apis"`}},
			want: `forbidden: User "bob" cannot get path "/apis"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := forbiddenReason(tt.err); got != tt.want {
				t.Errorf("forbiddenReason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPodsNotFoundMeansNotAKubernetesAPIServer(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
	})
	_, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), "is not a Kubernetes API server") {
		t.Fatalf("err = %v, want it to say the server is not a Kubernetes API server", err)
	}
}

func TestSomeWorkloadKindsForbiddenIsAPartialRead(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	for _, r := range []string{"statefulsets", "daemonsets", "replicasets"} {
		client.PrependReactor("list", r, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: r}, "", errors.New("no"))
		})
	}
	snap, err := newForClient(client, Options{Namespaces: []string{"telemetry"}}, fixedNow).Snapshot(context.Background())
	if err != nil {
		t.Fatalf("Snapshot: %v; deployments were listed, so the read is partial, not failed", err)
	}
	if len(snap.Deployments) != 1 || len(snap.Visibility) != 3 {
		t.Errorf("deployments = %d, visibility = %+v; want 1 and the three refused kinds", len(snap.Deployments), snap.Visibility)
	}
}

func TestNoWorkloadKindListedFailsTheRead(t *testing.T) {
	client := fake.NewClientset(deployment("telemetry", "ingester"))
	for _, r := range []string{"deployments", "statefulsets", "daemonsets", "replicasets", "cronjobs", "jobs"} {
		group := "apps"
		if strings.HasSuffix(r, "jobs") {
			group = "batch"
		}
		client.PrependReactor("list", r, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: r}, "", errors.New(`User "bob" cannot list resource "`+r+`"`))
		})
	}
	_, err := newForClient(client, Options{AllNamespaces: true}, fixedNow).Snapshot(context.Background())
	want := `cannot list any workload in any namespace: Error from server (Forbidden): deployments.apps is forbidden: User "bob" cannot list resource "deployments"; check the kubeconfig user's permissions with: kubectl auth can-i list deployments.apps -A`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestMissingKubeconfigNamesThePathTried(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("KUBECONFIG", missing)
	_, err := New(genericclioptions.NewConfigFlags(false), Options{})
	want := "no kubeconfig found at " + missing + " (from KUBECONFIG); set KUBECONFIG or pass --kubeconfig"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
