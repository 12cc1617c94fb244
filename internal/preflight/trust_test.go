package preflight

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestAliasesCannotExpandAManifestPastItsBound: 70 aliases of a 1 MiB anchor are 70 MiB of
// JSON from a 1 MB file; the read stops with the file and a line, not out of memory.
func TestAliasesCannotExpandAManifestPastItsBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  anchor: &a \"")
	b.WriteString(strings.Repeat("x", 1<<20))
	b.WriteString("\"\n  list:\n")
	for range 70 {
		b.WriteString("  - *a\n")
	}
	_, err := Read([]string{Stdin}, strings.NewReader("---\n"+b.String()), "default")
	var in *InputError
	if !errors.As(err, &in) || in.File != "stdin" || in.Line < 9 || in.Line > 9+70 ||
		!strings.Contains(in.Msg, "aliases expand the document past 64 MiB") {
		t.Fatalf("err = %v, want stdin:LINE naming a line of the aliases and the 64 MiB bound", err)
	}
}

// TestReferencesTheStreamCarriesAreNotLookedUp: the manifests create the Secret their
// Deployment names; --check-references must not ask the cluster for it (a lookup an identity
// may well be refused), and must say it took it from the manifests.
func TestReferencesTheStreamCarriesAreNotLookedUp(t *testing.T) {
	const stream = `apiVersion: v1
kind: Secret
metadata:
  name: api-db
  namespace: shop
stringData:
  password: not-read
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: registry.example/shop/api:1.4.2
        envFrom:
        - configMapRef: {name: api-config}
        env:
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef: {name: api-db, key: password}
`
	m, err := Read([]string{Stdin}, strings.NewReader(stream), "default")
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}},
		node("n1", "4", nil),
	)
	md := &refusingSecrets{fakeMetadata: fakeMetadata{exists: map[string]bool{"configmaps/api-config": true}}}
	f, err := Load(context.Background(), Clients{Kube: kube, Metadata: md}, m, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(md.asked, " ") != "configmaps/shop/api-config" {
		t.Errorf("looked up %v; want only the ConfigMap the manifests do not carry", md.asked)
	}
	got := findings(t, Check(m, f), CheckReferences)
	want := "2 referenced ConfigMaps and Secrets exist: 1 created by the manifests (not looked up), 1 looked up by metadata (no data read)"
	if len(got) != 1 || got[0].Result != ResultPass || got[0].Message != want {
		t.Errorf("findings %+v, want one pass: %s", got, want)
	}
}

// refusingSecrets refuses every Secret lookup, as an identity without get on secrets is.
type refusingSecrets struct{ fakeMetadata }

func (r *refusingSecrets) Get(ctx context.Context, resource, namespace, name string) error {
	if resource == "secrets" {
		r.asked = append(r.asked, resource+"/"+namespace+"/"+name)
		return apierrors.NewForbidden(corev1.Resource(resource), name, errors.New(`User "ci" cannot get resource "secrets"`))
	}
	return r.fakeMetadata.Get(ctx, resource, namespace, name)
}
