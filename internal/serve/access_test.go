package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
	"github.com/kubediagnose/kubectl-diagnose/internal/redact"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
	"github.com/kubediagnose/kubectl-diagnose/test/testbed/secretdump"
)

// fakeCluster answers TokenReviews and SubjectAccessReviews as an API server with RBAC would
// for three tokens: an admin (every namespace), a reader of one namespace and a ServiceAccount
// without rights. It counts the reviews it answered.
type fakeCluster struct {
	tokens, access atomic.Int32
}

func (c *fakeCluster) reviewer(readerNamespace string) *Reviewer {
	users := map[string]string{
		"admin-token":  "admin",
		"reader-token": "system:serviceaccount:" + readerNamespace + ":reader",
		"nobody-token": "system:serviceaccount:" + readerNamespace + ":nobody",
	}
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c.tokens.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		if u, ok := users[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: u, Groups: []string{"system:authenticated"}}}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c.access.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		at := sar.Spec.ResourceAttributes
		readOnly := at.Resource == "pods" && (at.Verb == "list" && at.Subresource == "" || at.Verb == "get" && at.Subresource == "log")
		sar.Status.Allowed = readOnly && (sar.Spec.User == "admin" || sar.Spec.User == users["reader-token"] && at.Namespace == readerNamespace)
		return true, sar, nil
	})
	return &Reviewer{Tokens: cs.AuthenticationV1().TokenReviews(), Access: cs.AuthorizationV1().SubjectAccessReviews()}
}

// twoNamespaces is the report of the secret dump beside another namespace's, as serve -A holds
// it, redacted as serve's Follower makes it.
func twoNamespaces(t *testing.T) (*diagnose.Report, *snapshot.Snapshot) {
	t.Helper()
	dir, err := secretdump.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := dump.Read(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := scenario(t, "dev-ingester")
	r := diagnose.Diagnose(s)
	r.Workloads = append(r.Workloads, other.Workloads...)
	return redact.New().Report(r, s), s
}

func request(t *testing.T, h http.Handler, path, token, host string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func namespacesOf(t *testing.T, body string) map[string]int {
	t.Helper()
	var r struct {
		Workloads []struct{ Namespace string } `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := map[string]int{}
	for _, w := range r.Workloads {
		out[w.Namespace]++
	}
	return out
}

func TestReportIsOffUnlessAsked(t *testing.T) {
	p := &Picture{}
	r, _ := twoNamespaces(t)
	p.Update(r, time.Second)
	h := Handler(p, NewCollector(p, nil), io.Discard, Options{})
	if rec := request(t, h, "/report", "", ""); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "--report") {
		t.Errorf("/report without --report: %d %q, want 404 naming --report", rec.Code, rec.Body)
	}
	if rec := request(t, h, "/", "", ""); strings.Contains(rec.Body.String(), "/report") {
		t.Errorf("/ lists /report while it is off: %q", rec.Body)
	}
}

// Each caller reads the namespaces where it may list pods and get their logs; a token the API
// server does not accept, or none, reads nothing.
func TestReportChecksEachCaller(t *testing.T) {
	p := &Picture{}
	r, _ := twoNamespaces(t)
	p.Update(r, time.Second)
	c := &fakeCluster{}
	h := Handler(p, NewCollector(p, nil), io.Discard, Options{Report: true, Reviewer: c.reviewer(secretdump.Namespace)})

	for _, tt := range []struct {
		name, token string
		code        int
		namespaces  map[string]int
	}{
		{"no token", "", http.StatusUnauthorized, nil},
		{"a token the API server refuses", "forged", http.StatusUnauthorized, nil},
		{"a ServiceAccount without rights", "nobody-token", http.StatusForbidden, nil},
		{"a reader of one namespace", "reader-token", http.StatusOK, map[string]int{secretdump.Namespace: 1}},
		{"an admin", "admin-token", http.StatusOK, map[string]int{secretdump.Namespace: 1, "dev-ingester": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := request(t, h, "/report", tt.token, "")
			if rec.Code != tt.code {
				t.Fatalf("/report: %d %q, want %d", rec.Code, rec.Body, tt.code)
			}
			if tt.code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if tt.code != http.StatusOK {
				if strings.Contains(rec.Body.String(), "workloads") {
					t.Errorf("a refusal carries the report: %q", rec.Body)
				}
				return
			}
			got := namespacesOf(t, rec.Body.String())
			if len(got) != len(tt.namespaces) {
				t.Errorf("namespaces %v, want %v", got, tt.namespaces)
			}
			for ns := range tt.namespaces {
				if got[ns] == 0 {
					t.Errorf("namespaces %v, want %v", got, tt.namespaces)
				}
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", rec.Header().Get("Cache-Control"))
			}
			for _, s := range secretdump.Secrets {
				if strings.Contains(rec.Body.String(), s) {
					t.Errorf("/report serves %q", s)
				}
			}
		})
	}

	// Answers are kept for a while: the same callers again cost the API server nothing.
	tokens, access := c.tokens.Load(), c.access.Load()
	for _, token := range []string{"forged", "nobody-token", "reader-token", "admin-token"} {
		request(t, h, "/report", token, "")
	}
	if c.tokens.Load() != tokens || c.access.Load() != access {
		t.Errorf("repeated callers cost %d token and %d access reviews", c.tokens.Load()-tokens, c.access.Load()-access)
	}
}

// On loopback the server answers only the loopback names (kubectl proxy's --accept-hosts), so
// a page whose own name resolves to 127.0.0.1 cannot read it from a browser.
func TestHostHeadersOnLoopback(t *testing.T) {
	p := &Picture{}
	r, _ := twoNamespaces(t)
	p.Update(r, time.Second)
	accept, err := ParseAcceptHosts(DefaultAcceptHosts)
	if err != nil {
		t.Fatal(err)
	}
	h := Handler(p, NewCollector(p, nil), io.Discard, Options{Report: true, AcceptHosts: accept})
	for host, want := range map[string]int{
		"127.0.0.1:8080":         http.StatusOK,
		"localhost:8080":         http.StatusOK,
		"[::1]:8080":             http.StatusOK,
		"localhost":              http.StatusOK,
		"attacker.example:8080":  http.StatusForbidden,
		"127.0.0.1.nip.io:8080":  http.StatusForbidden,
		"localhost.attacker.com": http.StatusForbidden,
	} {
		for _, path := range []string{"/report", "/metrics"} {
			if rec := request(t, h, path, "", host); rec.Code != want {
				t.Errorf("%s with Host %q: %d, want %d", path, host, rec.Code, want)
			}
		}
	}
	if _, err := ParseAcceptHosts("^ok$,(unclosed"); err == nil {
		t.Error("a bad regular expression in --accept-hosts was taken")
	}
}

// What /metrics carries is names and a closed vocabulary: no credential of the dump reaches a
// label.
func TestMetricsCarryNoCredential(t *testing.T) {
	p := &Picture{}
	r, _ := twoNamespaces(t)
	p.Update(r, time.Second)
	h := Handler(p, NewCollector(p, nil), io.Discard, Options{})
	body := request(t, h, "/metrics", "", "").Body.String()
	if !strings.Contains(body, `name="`+secretdump.Name+`"`) {
		t.Fatalf("/metrics lacks the workload:\n%s", body)
	}
	for _, s := range secretdump.Secrets {
		if strings.Contains(body, s) {
			t.Errorf("/metrics serves %q", s)
		}
	}
}

// The picture a Follower keeps is redacted, whether it was made from a fresh snapshot or the
// last one diagnosed again at a later time, though no Redactor was given: serve never shows a
// credential.
func TestFollowerKeepsARedactedPicture(t *testing.T) {
	_, s := twoNamespaces(t)
	p := &Picture{}
	f := &Follower{Picture: p, MinInterval: time.Millisecond, Refresh: 20 * time.Millisecond}
	snaps, errs := make(chan *snapshot.Snapshot, 1), make(chan error)
	snaps <- s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Follow(ctx, snaps, errs) }()
	waitFor(t, "a picture", func() bool { return p.Report() != nil })
	first := p.Report()
	waitFor(t, "a refreshed picture", func() bool { return p.Report() != first })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, r := range []*diagnose.Report{first, p.Report()} {
		var b strings.Builder
		if err := json.NewEncoder(&b).Encode(r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "[redacted:") {
			t.Error("the picture has no mark: is it the dump with the credentials?")
		}
		for _, secret := range secretdump.Secrets {
			if strings.Contains(b.String(), secret) {
				t.Errorf("the picture holds %q", secret)
			}
		}
	}
}
