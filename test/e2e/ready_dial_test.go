package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/test/internal/kubeletsim"
)

// TestReadyCopiesDialingTheirOwnEndpointOnALiveCluster: copies whose readiness probe answers
// from a thread of its own stay Ready while every probe logs a refused dial to the endpoint
// their env names. The live read takes a Ready copy's log when its env names an endpoint, so
// the audit says live-but-idle with that env value as the suspect, in two log styles; the same
// program with a reachable endpoint stays healthy.
func TestReadyCopiesDialingTheirOwnEndpointOnALiveCluster(t *testing.T) {
	t.Parallel()
	const (
		sweeperImage    = "registry.example.com/identity/session-sweeper:1.3.0"
		dispatcherImage = "registry.example.com/comms/mail-dispatcher:2.0.1"
		reachable       = "smtp-relay.comms.svc:2525"
	)
	program := func(env, line string) kubeletsim.Program {
		return kubeletsim.Program{
			Ports: []int32{8080}, HealthPaths: []string{"/healthz"}, UpstreamEnv: env,
			ProbeIgnoresUpstream: true, UpstreamErrorLog: line,
		}
	}
	w := kubeletsim.NewWorld().
		SetImage(sweeperImage, kubeletsim.Image{Program: program("REDIS_ADDR",
			`redis.exceptions.ConnectionError: Error 111 connecting to $(UPSTREAM). Connection refused.`)}).
		SetImage(dispatcherImage, kubeletsim.Image{Program: program("AMQP_ADDR",
			`{"level":"WARN","msg":"amqp dial failed, retrying","addr":"$(UPSTREAM)","err":"$(ERROR)"}`)}).
		SetReachable(reachable, true)
	e := newEnv(t, w)
	for _, d := range []struct{ name, image, variable, value string }{
		{"session-sweeper", sweeperImage, "REDIS_ADDR", "sessions-redis.identity.svc:6380"},
		{"mail-dispatcher", dispatcherImage, "AMQP_ADDR", "rabbitmq.messaging.svc:5672"},
		{"relay-client", dispatcherImage, "AMQP_ADDR", reachable},
	} {
		e.create(t, deployment(d.name, d.image, 2, func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: d.variable, Value: d.value}}
			c.ReadinessProbe.PeriodSeconds = 1
		}), false)
	}
	for _, name := range []string{"session-sweeper", "mail-dispatcher", "relay-client"} {
		e.waitPods(t, name, 2, "ready", func(p corev1.Pod) bool {
			return running(p) && p.Status.ContainerStatuses[0].Ready
		})
	}
	const env = "spec.template.spec.containers[0].env[1].value"
	r := eventuallyAudit(t, 90*time.Second, cp.AdminKubeconfig(), []string{"-n", e.ns},
		verdict{name: "session-sweeper", shape: "live-but-idle", suspect: env},
		verdict{name: "mail-dispatcher", shape: "live-but-idle", suspect: env},
		verdict{name: "relay-client", shape: "healthy"},
	)
	for _, name := range []string{"session-sweeper", "mail-dispatcher"} {
		d := r.find("Deployment", name)
		if d.Counts.Serving != 0 || !strings.Contains(d.Headline, "keeps failing to connect to") {
			t.Errorf("%s: %d serving, headline %q; want 0 serving and the failing endpoint named", name, d.Counts.Serving, d.Headline)
		}
		found := false
		for _, ev := range d.Evidence {
			found = found || ev.Kind == "ConnectFailing"
		}
		if !found {
			t.Errorf("%s: no ConnectFailing evidence: %+v", name, d.Evidence)
		}
	}
}
