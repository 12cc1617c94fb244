package facts

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EnvEndpoint is an endpoint a plain env value of a container names: the variable, and the
// host (lower case) and port.
type EnvEndpoint struct {
	Variable, Host, Port string
}

// EnvEndpoints lists the endpoints off the copy itself that the plain env values of spec's
// containers name, in the order written: a host:port alone (db:5432), in a URL with a port
// (postgres://db:5432/app) or among other words (db:5432,cache:6379). A URL without a port, a
// time of day ("02:30"), a file and line ("main.go:71"), an IPv6 literal (which the words of a
// log line never name either) and a host on the copy itself (Loopback) name none. Values from
// Secrets and ConfigMaps are never read: a ValueFrom counts for nothing. The engine (a copy's dial loop to its dependency) and the live source
// (which Ready copies' logs are worth reading) both ask this, so they cannot disagree.
func EnvEndpoints(spec *corev1.PodSpec) []EnvEndpoint {
	var out []EnvEndpoint
	for ci := range spec.Containers {
		for _, e := range spec.Containers[ci].Env {
			if e.ValueFrom != nil || !strings.Contains(e.Value, ":") {
				continue
			}
			for _, t := range Values(e.Value) {
				// Values writes a URL's host:port as a token of its own too.
				if t.Kind == ValueHostPort && t.Host != "" && t.Port != "" && !Loopback(t.Host) {
					out = append(out, EnvEndpoint{Variable: e.Name, Host: t.Host, Port: t.Port})
				}
			}
		}
	}
	return out
}

// Loopback reports a host that is the copy itself (lower case): a dependency there is in the
// pod.
func Loopback(h string) bool {
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1" || h == "0.0.0.0" || h == "::"
}
