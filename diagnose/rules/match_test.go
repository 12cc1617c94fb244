package rules

import (
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/facts"
)

func TestMatchValue(t *testing.T) {
	own := map[string]bool{"10.244.3.2": true}
	tests := []struct {
		name, failure, value string
		want                 int
	}{
		{"whole host:port", `"endpoint":"telemetry-intake.internal:9443"`, "telemetry-intake.internal:9443", strengthExact},
		{"port of a resolved host", "dial tcp 10.96.14.7:9443: connect: connection refused", "telemetry-intake.internal:9443", strengthPort},
		{"port of another named host", "dial tcp intake-b.internal:9443: i/o timeout", "intake-a.internal:9443", 0},
		{"different port", "dial tcp 10.96.14.7:8443: connect: connection refused", "telemetry-intake.internal:9443", 0},
		{"host in a URL value", "lookup orders-db.shop.svc on 10.96.0.10:53: no such host", "postgres://orders-db.shop.svc:5432/orders", strengthHost},
		{"URL path", `"GET /healthz HTTP/1.1" 404 153`, "/healthz", strengthHost},
		{"similar path", `"GET /healthz HTTP/1.1" 404 153`, "/health", 0},
		{"file under a directory", "open /etc/api/config.yaml: no such file or directory", "/etc/api", strengthSubpath},
		{"flag with a value", "flag provided but not defined: -listen-address", "--listen-address=:8080", strengthExact},
		{"the pod's own address", `host: "10.244.3.2:8080"`, "0.0.0.0:8080", 0},
		{"short value", `secret "db" not found`, "db", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchValue(facts.Values(tt.failure), tt.value, own); got.Strength != tt.want {
				t.Errorf("strength = %d (%s), want %d", got.Strength, got.What, tt.want)
			}
		})
	}
}

// The fast paths of the hot loops must decide exactly as the regular expressions and parsers
// they stand in front of; these fuzz targets (with their seeds run by go test) hold them to it.

// FuzzIsNotConfig holds the suffix test in front of notConfig to the expression alone.
func FuzzIsNotConfig(f *testing.F) {
	for _, p := range []string{
		"spec.template.spec.containers[0].name",
		"spec.template.spec.containers[0].image",
		"spec.template.spec.initContainers[1].env[2].name",
		"spec.template.spec.containers[0].env[2].value",
		"spec.template.metadata.labels[app]",
		"spec.template.metadata.annotations[a]",
		"spec.template.spec.containers[0].terminationMessagePath",
		"spec.template.spec.containers[0].imagePullPolicy",
		"spec.template.spec.restartPolicy",
		"spec.template.spec.volumes[0].configMap.name",
		"spec.template.spec.containers[0].volumeMounts[0].mountPath",
		"x.ports[3].name\n",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := isNotConfig(p), notConfig.MatchString(p); got != want {
			t.Errorf("isNotConfig(%q) = %v, the expression says %v", p, got, want)
		}
	})
}

// matchValue finds the strongest link between failure tokens ev and the spec value val.
// ownHosts are the workload's own pod and node IPs: a port on them is the pod itself (a probe
// or a peer), not an endpoint the spec names.
func matchValue(ev []facts.Value, val string, ownHosts map[string]bool) match {
	return matchTokens(ev, val, valueTokens(val), ownHosts)
}
