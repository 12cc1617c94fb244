package diagnose

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TestReadyCopiesWhoseTrafficIsBroken covers Ready copies that the Service meant for them does
// not reach: its selector matches none of them while another Service selects them, or its port
// speaks another protocol than the container port it targets. Each is not healthy.
func TestReadyCopiesWhoseTrafficIsBroken(t *testing.T) {
	tests := []struct {
		name string
		// svcs adds the Services and their slices for the two copies a and b.
		svcs      func(c *cluster, a, b *corev1.Pod)
		tmpl      func(t *corev1.PodTemplateSpec)
		wantShape Shape
		// wantObject and wantPath are the top suspect's, when broken.
		wantRule             RuleID
		wantObject, wantPath string
	}{
		{
			name: "the Service named for the workload selects nothing; a NodePort selects the copies",
			svcs: func(c *cluster, a, b *corev1.Pod) {
				c.endpointSlice(c.service("web", "web-frontend"), 8080, nil)
				ext := c.service("web-external", "web")
				ext.Spec.Type = corev1.ServiceTypeNodePort
				c.endpointSlice(ext, 8080, map[*corev1.Pod]bool{a: true, b: true})
			},
			wantShape: ShapeLiveButIdle,
			wantRule:  rules.RuleServiceSelector, wantObject: "Service/web", wantPath: "spec.selector",
		},
		{
			name: "the Service named for the workload asks for another role; a headless Service selects the copies",
			svcs: func(c *cluster, a, b *corev1.Pod) {
				own := c.service("web", "web")
				own.Spec.Selector["role"] = "query"
				c.endpointSlice(own, 8080, nil)
				gov := c.service("web-headless", "web")
				gov.Spec.ClusterIP = corev1.ClusterIPNone
				c.endpointSlice(gov, 8080, map[*corev1.Pod]bool{a: true, b: true})
			},
			wantShape: ShapeLiveButIdle,
			wantRule:  rules.RuleServiceSelector, wantObject: "Service/web", wantPath: "spec.selector",
		},
		{
			name: "an empty Service of another name does not stop the workload's own from serving",
			svcs: func(c *cluster, a, b *corev1.Pod) {
				c.endpointSlice(c.service("web-admin", "web-admin"), 8080, nil)
				c.endpointSlice(c.service("web", "web"), 8080, map[*corev1.Pod]bool{a: true, b: true})
			},
			wantShape: ShapeHealthy,
		},
		{
			name: "a Service port left TCP by default in front of a UDP container port",
			tmpl: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "statsd", ContainerPort: 8125, Protocol: corev1.ProtocolUDP}}
			},
			svcs: func(c *cluster, a, b *corev1.Pod) {
				svc := c.service("web", "web")
				svc.Spec.Ports = []corev1.ServicePort{{Name: "statsd", Port: 8125, TargetPort: intstr.FromInt32(8125)}}
				c.endpointSlice(svc, 8125, map[*corev1.Pod]bool{a: true, b: true})
				svc.Spec.Ports[0].Protocol = corev1.ProtocolTCP
				c.s.EndpointSlices[len(c.s.EndpointSlices)-1].Ports[0].Protocol = &svc.Spec.Ports[0].Protocol
			},
			wantShape: ShapeLiveButIdle,
			wantRule:  rules.RuleServiceProtocol, wantObject: "Service/web", wantPath: "spec.ports[0].protocol",
		},
		{
			name: "a UDP Service port in front of a TCP container port named by the targetPort",
			svcs: func(c *cluster, a, b *corev1.Pod) {
				svc := c.service("web", "web")
				svc.Spec.Ports[0].Protocol = corev1.ProtocolUDP
				c.endpointSlice(svc, 8080, map[*corev1.Pod]bool{a: true, b: true})
				c.s.EndpointSlices[len(c.s.EndpointSlices)-1].Ports[0].Protocol = &svc.Spec.Ports[0].Protocol
			},
			wantShape: ShapeLiveButIdle,
			wantRule:  rules.RuleServiceProtocol, wantObject: "Service/web", wantPath: "spec.ports[0].protocol",
		},
		{
			name: "a UDP Service port in front of a port the container declares for TCP and UDP",
			tmpl: func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Ports = []corev1.ContainerPort{
					{Name: "dns-tcp", ContainerPort: 5353, Protocol: corev1.ProtocolTCP},
					{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP},
				}
			},
			svcs: func(c *cluster, a, b *corev1.Pod) {
				svc := c.service("web", "web")
				svc.Spec.Ports = []corev1.ServicePort{{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(5353), Protocol: corev1.ProtocolUDP}}
				c.endpointSlice(svc, 5353, map[*corev1.Pod]bool{a: true, b: true})
				c.s.EndpointSlices[len(c.s.EndpointSlices)-1].Ports[0].Protocol = &svc.Spec.Ports[0].Protocol
			},
			wantShape: ShapeHealthy,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 1, reasonNewRSAvailable, 6*24*time.Hour)
			if tt.tmpl != nil {
				tt.tmpl(&d.Spec.Template)
			}
			rs := c.replicaSet(d, 1, 2, 6*24*time.Hour, nil)
			a, b := c.pod(rs, "a", 6*24*time.Hour, running(true)), c.pod(rs, "b", 6*24*time.Hour, running(true))
			tt.svcs(c, a, b)
			got := c.diagnoseOne("web")
			if got == nil {
				t.Fatal("no diagnosis for Deployment web")
			}
			if got.Shape != tt.wantShape {
				t.Fatalf("shape = %s, want %s; headline %q", got.Shape, tt.wantShape, got.Headline)
			}
			if !tt.wantShape.Broken() {
				return
			}
			rule, object, path := stTop(got.Suspects)
			if rule != tt.wantRule || object != tt.wantObject || path != tt.wantPath {
				t.Errorf("top suspect = %s %s %s, want %s %s %s", rule, object, path, tt.wantRule, tt.wantObject, tt.wantPath)
			}
		})
	}
}
