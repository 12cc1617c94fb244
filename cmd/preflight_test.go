package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubediagnose/kubectl-diagnose/internal/preflight"
)

func parsePreflight(argv ...string) (*PreflightOptions, error) {
	var got *PreflightOptions
	streams, _, _, _ := genericiooptions.NewTestIOStreams()
	cmd := newRootCmd(streams, hooks{runPreflight: func(o *PreflightOptions) error { got = o; return nil }})
	cmd.SetArgs(argv)
	err := cmd.ExecuteContext(context.Background())
	return got, err
}

func TestPreflightFlags(t *testing.T) {
	tests := []struct {
		name    string
		argv    string
		check   func(t *testing.T, o *PreflightOptions)
		wantErr string
	}{
		{name: "defaults", argv: "preflight -f deploy.yaml", check: func(t *testing.T, o *PreflightOptions) {
			if strings.Join(o.Filenames, ",") != "deploy.yaml" || o.CheckReferences || o.Output != "table" {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{name: "every flag", argv: "preflight -f a.yaml,dir -f - --check-references -o json -n shop", check: func(t *testing.T, o *PreflightOptions) {
			if strings.Join(o.Filenames, ",") != "a.yaml,dir,-" || !o.CheckReferences || o.Output != "json" || o.Source.Namespace != "shop" {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "no manifests", argv: "preflight", wantErr: "preflight needs manifests: pass -f FILE, -f DIR or -f -"},
		{name: "stdin twice", argv: "preflight -f - -f -", wantErr: "-f - can be given once: standard input is read once"},
		{name: "bad output", argv: "preflight -f a.yaml -o wide", wantErr: `unknown output format "wide"; use one of table, json, yaml, markdown`},
		{name: "a dump", argv: "preflight -f a.yaml --dump ./incident", wantErr: "preflight checks against a live cluster; --dump cannot be used"},
		{name: "all namespaces", argv: "preflight -f a.yaml -A", wantErr: "--all-namespaces cannot be used"},
		{name: "a reference time", argv: "preflight -f a.yaml --at 2026-11-24T14:32:10Z", wantErr: "--at cannot be used"},
		{name: "arguments", argv: "preflight deploy.yaml", wantErr: "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parsePreflight(strings.Fields(tt.argv)...)
			if tt.wantErr != "" {
				var usage *UsageError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &usage) {
					t.Fatalf("error %v, want a usage error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

func TestPreflightReadsOneCluster(t *testing.T) {
	_, err := parsePreflight("preflight", "-f", "a.yaml", "--context", "a,b", "--kubeconfig", fleetKubeconfig(t, "x,y"))
	var usage *UsageError
	if !errors.As(err, &usage) || err.Error() != `preflight reads one cluster; --context takes one name here, not "a,b"` {
		t.Errorf("error %v, want the one-cluster usage error", err)
	}
}

type noMetadata struct{}

func (noMetadata) Get(_ context.Context, resource, _, name string) error {
	return apierrors.NewNotFound(corev1.Resource(resource), name)
}

const preflightManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      nodeSelector:
        pool: %s
      containers:
      - name: api
        image: registry.example/api@sha256:4f1d7c3ab1a7c2e0d6f8b4a1c9e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0
`

func TestPreflightRun(t *testing.T) {
	cluster := func() preflight.Clients {
		return preflight.Clients{Kube: fake.NewClientset(
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "shop"}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "web"}}, Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")},
			}},
		), Metadata: noMetadata{}}
	}
	tests := []struct {
		name, pool, stdin string
		argv              []string
		code              int
		stdout, stderr    string
	}{
		{name: "passes", pool: "web", argv: []string{"-o", "json"}, code: ExitOK, stdout: `"result": "pass"`},
		{name: "fails with 6", pool: "gpu", argv: []string{"-o", "json"}, code: ExitPreflightFailed, stdout: `"check": "node-fit",
          "result": "fail"`},
		{name: "table", pool: "gpu", code: ExitPreflightFailed, stdout: "1 workload: 1 failed"},
		{name: "unreadable input exits 1", stdin: "apiVersion: apps/v1\nkind: [\n", code: ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdin := tt.stdin
			if stdin == "" {
				stdin = strings.Replace(preflightManifest, "%s", tt.pool, 1)
			}
			h := hooks{runPreflight: func(o *PreflightOptions) error {
				o.connect = func(*PreflightOptions) (preflight.Clients, string, error) { return cluster(), "shop", nil }
				return o.Run(context.Background())
			}}
			out, _, err := run(t, []byte(stdin), h, append([]string{"preflight", "-f", "-"}, tt.argv...)...)
			if code := ExitCode(err); code != tt.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tt.code, out)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout does not hold %q:\n%s", tt.stdout, out)
			}
			if strings.Join(tt.argv, " ") == "-o json" {
				var doc map[string]any
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Errorf("not JSON: %v", err)
				}
			}
			if tt.code == ExitError && (err == nil || !strings.Contains(err.Error(), "stdin:2: invalid YAML")) {
				t.Errorf("error %v, want it placed at stdin:2", err)
			}
		})
	}
}
