package kubeletsim

import "testing"

func TestFitErrorMatchesTheSchedulerFormat(t *testing.T) {
	got := fitError(3, map[string]nodeVerdict{
		"a": {reasons: []string{reasonAffinity}},
		"b": {reasons: []string{reasonAffinity}},
		"c": {reasons: []string{reasonAffinity}},
	})
	// dev-search/dump/dev-search/events.json, written by kfx from the v1.37.2 source
	want := "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	got = fitError(2, map[string]nodeVerdict{
		"a": {reasons: []string{"Insufficient cpu", "Insufficient memory"}, resolvable: true},
		"b": {reasons: []string{"Insufficient memory"}, resolvable: true},
	})
	want = "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestImageRefsAreNormalizedLikeContainerd(t *testing.T) {
	tests := []struct{ in, norm, withTag string }{
		{"nginx", "docker.io/library/nginx:latest", "nginx:latest"},
		{"nginx:1.27", "docker.io/library/nginx:1.27", "nginx:1.27"},
		{"bitnami/redis:7", "docker.io/bitnami/redis:7", "bitnami/redis:7"},
		{"registry.internal/payments/api:v2.3.l", "registry.internal/payments/api:v2.3.l", "registry.internal/payments/api:v2.3.l"},
		{"localhost:5000/x", "localhost:5000/x:latest", "localhost:5000/x:latest"},
		{"r.example/a@sha256:abc", "r.example/a@sha256:abc", "r.example/a@sha256:abc"},
	}
	for _, tt := range tests {
		if got := parseImageRef(tt.in).String(); got != tt.norm {
			t.Errorf("parseImageRef(%q) = %q, want %q", tt.in, got, tt.norm)
		}
		if got := withDefaultTag(tt.in); got != tt.withTag {
			t.Errorf("withDefaultTag(%q) = %q, want %q", tt.in, got, tt.withTag)
		}
	}
}

func TestPullErrorsMatchContainerdWording(t *testing.T) {
	// dev-payments and dev-shipper pods.json
	ref := parseImageRef("registry.internal/payments/api:v2.3.l")
	if got, want := pullNotFound(ref), `rpc error: code = NotFound desc = failed to pull and unpack image "registry.internal/payments/api:v2.3.l": failed to resolve image: registry.internal/payments/api:v2.3.l: not found`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	ref = parseImageRef("registry.corp.example/obs/shipper:1.8.0")
	if got, want := pullAccessDenied(ref), `failed to pull and unpack image "registry.corp.example/obs/shipper:1.8.0": failed to resolve image: pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "1", "B": "two"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := map[string]string{
		"$(A)-$(B)":  "1-two",
		"$$(A)":      "$(A)",
		"$(MISSING)": "$(MISSING)",
		"$(A":        "$(A",
		"plain $":    "plain $",
	}
	for in, want := range tests {
		if got := expandVars(in, lookup); got != want {
			t.Errorf("expandVars(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHostPort(t *testing.T) {
	tests := map[string]string{
		"https://intake.example/v1":        "intake.example:443",
		"http://intake.example:8080/x":     "intake.example:8080",
		"intake.example:8443":              "intake.example:8443",
		"postgres://u:p@db.example:5432/x": "db.example:5432",
	}
	for in, want := range tests {
		if got := HostPort(in); got != want {
			t.Errorf("HostPort(%q) = %q, want %q", in, got, want)
		}
	}
}
