package rules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The probe protocol rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleProbeProtocol RuleID = "probe-protocol"
	RuleProbeScheme   RuleID = "probe-scheme"
)

// probeProtocolFamily reads probe failures that say the probe and the port speak different
// protocols: the kubelet's HTTP/1.1 client reading an HTTP/2 or TLS answer, or its gRPC client
// never connecting to a port the container declares as HTTP. The application is up and its
// logs are clean; only the probe is wrong, so it never becomes Ready.
var _ = register(family{
	order:  105,
	name:   "probe-protocol",
	detect: (*ranker).probeProtocolRules,
	rules: []RuleInfo{
		{
			RuleProbeProtocol, "A probe speaks another protocol than the port it asks",
			"`HTTP/1.x transport connection broken: malformed HTTP response` from an httpGet probe (an HTTP/2 or gRPC server); `timeout: failed to connect service` from a grpc probe on a port named http",
			"Use the probe handler the port speaks: grpc for a gRPC server (with grpc.health.v1), httpGet for HTTP/1.", false,
		},
		{
			RuleProbeScheme, "An HTTP probe asks a TLS port in plain HTTP",
			"`malformed HTTP response \"\\x15\\x03...` (a TLS alert) from an httpGet probe",
			"Set httpGet.scheme: HTTPS.", false,
		},
	},
})

// The kubelet's probers write these (v1.31 and v1.37 alike): pkg/probe/http/http.go returns
// net/http's error, whose `malformed HTTP response %q` quotes the first bytes the port sent;
// pkg/probe/grpc/grpc.go writes `timeout: failed to connect service %q within %v: %+v` and
// `error: failed to connect service at %q: %+v` when no gRPC connection is made.
const (
	malformedHTTP = "malformed HTTP response "
	// tlsAlert opens a TLS record of type alert (21), version 3.x, as %q writes it.
	tlsAlert = `"\x15\x03`
	// http2Frame opens an HTTP/2 frame header (a 24-bit length of a few bytes), as a server
	// speaking only HTTP/2 (gRPC) answers with its SETTINGS frame.
	http2Frame = `"\x00\x00`
)

func (r *ranker) probeProtocolRules() {
	for _, s := range r.in.Signals {
		if s.Reason != "Unhealthy" || !strings.Contains(s.Text, malformedHTTP) && !strings.Contains(s.Text, "failed to connect service") {
			continue
		}
		m := reProbe.FindStringSubmatch(s.Text)
		if m == nil {
			continue
		}
		r.read(s)
		kind, out := m[1], m[2]
		for _, c := range r.containersOf(s) {
			for _, p := range probesOf(c) {
				if p.kind == kind && r.probeProtocol(c, p, out) {
					s.Explained = true
				}
			}
		}
	}
}

func (r *ranker) probeProtocol(c containerRef, p probeRef, out string) bool {
	lower := strings.ToLower(p.kind)
	switch {
	case p.probe.HTTPGet != nil && strings.Contains(out, malformedHTTP):
		sent := out[strings.Index(out, malformedHTTP)+len(malformedHTTP):]
		if strings.HasPrefix(sent, tlsAlert) && p.probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			r.suspectTemplate(RuleProbeScheme, p.path.Child("httpGet", "scheme"), scoreCertain,
				fmt.Sprintf("the port answers the %s probe's plain HTTP with a TLS alert: it serves HTTPS", lower))
			return true
		}
		what := "something that is not HTTP/1.x"
		if strings.HasPrefix(sent, http2Frame) {
			what = "an HTTP/2 frame (a gRPC or HTTP/2-only server)"
		}
		r.suspectTemplate(RuleProbeProtocol, p.path.Child("httpGet"), scoreCertain,
			fmt.Sprintf("the port %s asks answers the HTTP/1.1 %s probe with %s%s", p.probe.HTTPGet.Port.String(), lower, what, portNamed(c.c, p.probe.HTTPGet.Port)))
		return true
	case p.probe.GRPC != nil:
		port := intstr.FromInt32(p.probe.GRPC.Port)
		if portProtocol(c.c, port) != "http" {
			// A gRPC client that cannot connect is as often a port nothing listens on, or a
			// slow start: the port and timeout rules read those.
			return false
		}
		r.suspectTemplate(RuleProbeProtocol, p.path.Child("grpc"), highThreshold,
			fmt.Sprintf("the %s probe speaks gRPC to port %d, which container %s declares as HTTP%s: %s",
				lower, p.probe.GRPC.Port, c.c.Name, portNamed(c.c, port), Clip(out, 120)))
		return true
	}
	return false
}

// portProtocol is the protocol a container port's name declares by the usual convention
// (`<protocol>[-<suffix>]`, as Istio's protocol selection reads it): "http" for http, https,
// http2 and h2c, "grpc" for grpc, "" otherwise.
func portProtocol(c *corev1.Container, port intstr.IntOrString) string {
	for _, p := range c.Ports {
		if port.Type == intstr.String && p.Name != port.StrVal || port.Type == intstr.Int && p.ContainerPort != port.IntVal {
			continue
		}
		proto, _, _ := strings.Cut(strings.ToLower(p.Name), "-")
		switch proto {
		case "http", "https", "http2", "h2c":
			return "http"
		case "grpc":
			return "grpc"
		}
	}
	return ""
}

// portNamed says the name the container gives the port, for the reason.
func portNamed(c *corev1.Container, port intstr.IntOrString) string {
	for _, p := range c.Ports {
		if port.Type == intstr.String && p.Name == port.StrVal || port.Type == intstr.Int && p.ContainerPort == port.IntVal {
			if p.Name != "" && port.Type == intstr.Int {
				return fmt.Sprintf(" (named %s)", p.Name)
			}
			if port.Type == intstr.String {
				return fmt.Sprintf(" (%d)", p.ContainerPort)
			}
		}
	}
	return ""
}
