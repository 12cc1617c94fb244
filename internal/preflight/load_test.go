package preflight

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

func TestMetadataReaderAsksForMetadataAlone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Accept"); got != metadataAccept {
			t.Errorf("Accept %q, want %q alone", got, metadataAccept)
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/shop/secrets/db":
			_, _ = w.Write([]byte(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"db","namespace":"shop"}}`))
		case "/api/v1/namespaces/shop/secrets/full":
			// A server that ignores the Accept header.
			_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"full"},"data":{"k":"dg=="}}`))
		case "/api/v1/namespaces/shop/secrets/locked":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"secrets \"locked\" is forbidden: User \"u\" cannot get resource \"secrets\""}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"secrets \"gone\" not found"}`))
		}
	}))
	defer srv.Close()
	m, err := NewMetadataReader(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.Get(ctx, "secrets", "shop", "db"); err != nil {
		t.Errorf("existing: %v", err)
	}
	if err := m.Get(ctx, "secrets", "shop", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("missing: %v, want NotFound", err)
	}
	if err := m.Get(ctx, "secrets", "shop", "locked"); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot get resource "secrets"`) {
		t.Errorf("forbidden: %v, want the server's Forbidden", err)
	}
	if err := m.Get(ctx, "secrets", "shop", "full"); err == nil || !strings.Contains(err.Error(), `"Secret", not its metadata alone`) {
		t.Errorf("full object: %v, want it refused", err)
	}
}

// fakeMetadata records the lookups and answers from a set of names.
type fakeMetadata struct {
	exists map[string]bool
	asked  []string
}

func (f *fakeMetadata) Get(_ context.Context, resource, namespace, name string) error {
	f.asked = append(f.asked, resource+"/"+namespace+"/"+name)
	if f.exists[resource+"/"+name] {
		return nil
	}
	return apierrors.NewNotFound(corev1.Resource(resource), name)
}

func TestLoadReadsOnlyWhatTheChecksNeed(t *testing.T) {
	d := apiDeployment()
	withRefs(d)
	m := manifests(d)
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}},
		node("n1", "4", nil),
	}
	for _, refs := range []bool{false, true} {
		kube := fake.NewClientset(objs...)
		kube.PrependReactor("list", "resourcequotas", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource("resourcequotas"), "", errors.New("no RBAC"))
		})
		md := &fakeMetadata{exists: map[string]bool{"configmaps/api-config": true}}
		f, err := Load(context.Background(), Clients{Kube: kube, Metadata: md}, m, refs)
		if err != nil {
			t.Fatal(err)
		}
		nf := f.Namespaces[ns]
		if len(f.Nodes) != 1 || nf.Namespace == nil || !nf.ServiceAccounts["default"] || nf.QuotasUnread == "" {
			t.Errorf("facts %+v %+v", f, nf)
		}
		if live := nf.Live[Key("Deployment", "api")]; live == nil || live.Object != nil || live.Unread != "" {
			t.Errorf("a workload the cluster lacks: %+v", live)
		}
		for _, a := range kube.Actions() {
			if v := a.GetVerb(); v != "get" && v != "list" {
				t.Errorf("Load sent a %s", v)
			}
			if r := a.GetResource().Resource; r == "secrets" || r == "configmaps" {
				t.Errorf("Load read %s through the typed client", r)
			}
		}
		if !refs && len(md.asked) != 0 {
			t.Errorf("without --check-references it looked up %v", md.asked)
		}
		if refs {
			if strings.Join(md.asked, " ") != "secrets/shop/api-db configmaps/shop/api-config" {
				t.Errorf("looked up %v", md.asked)
			}
			if !nf.ConfigMaps["api-config"] || nf.Secrets["api-db"] {
				t.Errorf("configmaps %v secrets %v", nf.ConfigMaps, nf.Secrets)
			}
		}
	}
}
