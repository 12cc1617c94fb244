package preflight

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// helmOutput is shaped as `helm template` writes: a comment per source, documents split by
// "---", an empty document where a template rendered nothing.
const helmOutput = `---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: api
---
# Source: shop/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: api-db
stringData:
  password: hunter2
---
# Source: shop/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector:
    app: api
  ports:
  - port: 80
    targetPort: http
---
# Source: shop/templates/hpa.yaml
---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      serviceAccountName: api
      containers:
      - name: api
        image: registry.example/shop/api:1.4.2
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: api
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadHelmOutput(t *testing.T) {
	m, err := Read([]string{Stdin}, strings.NewReader(helmOutput), "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Workloads) != 1 || m.Workloads[0].Namespace != "shop" || m.Workloads[0].Origin != "stdin:30" {
		t.Fatalf("workloads %+v, want deployment/api in shop from stdin:30 (its document starts at the Source comment)", m.Workloads[0])
	}
	if len(m.Services) != 1 || m.Services[0].Namespace != "default" || len(m.ServiceAccounts) != 1 {
		t.Errorf("services %d, accounts %d; the Service must take -n's namespace", len(m.Services), len(m.ServiceAccounts))
	}
	if len(m.Secrets) != 1 || m.Secrets[0].Name != "api-db" {
		t.Errorf("secrets %+v, want api-db by name", m.Secrets)
	}
	if m.Skipped["HorizontalPodAutoscaler"] != 1 {
		t.Errorf("skipped %v, want the HPA counted", m.Skipped)
	}
}

func TestReadJSONListAndDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a/list.json", `{"apiVersion":"v1","kind":"List","items":[
  {"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db"},"spec":{"template":{"spec":{"containers":[{"name":"db","image":"postgres:16"}]}}}},
  {"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"agent:1"}]}}}}
]}`)
	writeFile(t, dir, "b/deep/web.yml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:2\n")
	writeFile(t, dir, "README.md", "not: [a manifest")
	writeFile(t, dir, ".hidden/x.yaml", "not: [a manifest")
	m, err := Read([]string{dir}, nil, "team")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range m.Workloads {
		got = append(got, w.Namespace+"/"+strings.ToLower(w.Kind)+"/"+w.Name)
	}
	want := "team/statefulset/db team/daemonset/agent team/deployment/web"
	if strings.Join(got, " ") != want {
		t.Errorf("workloads %v, want %s", got, want)
	}
}

func TestReadErrorsNameTheFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, content string
		line          int
		msg           string
	}{
		{"bad.yaml", "apiVersion: apps/v1\nkind: Deployment\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [x\n", 7, "invalid YAML"},
		{"bad.json", "{\n  \"apiVersion\": \"apps/v1\",\n  \"kind\": \"Deployment\"\n  \"metadata\": {}\n}\n", 4, "invalid JSON"},
		{"nokind.yaml", "metadata:\n  name: x\n", 1, "without apiVersion and kind"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, dir, tt.name, tt.content)
			_, err := Read([]string{p}, nil, "default")
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			if ie.File != p || ie.Line != tt.line || !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("error %q at %s:%d, want %s at line %d", ie.Msg, ie.File, ie.Line, tt.msg, tt.line)
			}
		})
	}
	if _, err := Read([]string{filepath.Join(dir, "missing.yaml")}, nil, "default"); err == nil {
		t.Error("a missing file must be an error")
	}
	if _, err := Read([]string{writeFile(t, dir, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n")}, nil, "default"); err == nil || !strings.Contains(err.Error(), "no Deployment") {
		t.Errorf("a stream without workloads: %v", err)
	}
}
