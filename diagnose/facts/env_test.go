package facts

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestEnvEndpoints is the one reading of "an env value names an endpoint", which the engine's
// dial loops and the live source's choice of Ready copies to read both ask. The cases marked
// "differed" are those where the live source's own parse (the whole value as a URL or
// host:port) and the engine's (the value's words) used to disagree.
func TestEnvEndpoints(t *testing.T) {
	secret := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "url"}}
	config := &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "upstream"}}
	cases := []struct {
		name string
		env  corev1.EnvVar
		want []string // Variable=host:port
	}{
		{"a bare host:port", corev1.EnvVar{Name: "DB_ADDR", Value: "db:5432"}, []string{"DB_ADDR=db:5432"}},
		{"an IP and port", corev1.EnvVar{Name: "DB_ADDR", Value: "10.0.0.7:5432"}, []string{"DB_ADDR=10.0.0.7:5432"}},
		{"a URL with scheme, user info and upper case", corev1.EnvVar{Name: "DATABASE_URL", Value: "postgres://app:s3cret@DB.internal:5432/orders?sslmode=disable"}, []string{"DATABASE_URL=db.internal:5432"}},
		{"differed: host:ports inside a longer value", corev1.EnvVar{Name: "PEERS", Value: "cache-0:6379,cache-1:6379"}, []string{"PEERS=cache-0:6379", "PEERS=cache-1:6379"}},
		{"differed: a flag's host:port", corev1.EnvVar{Name: "ARGS", Value: "--upstream=billing:8080 --timeout=3s"}, []string{"ARGS=billing:8080"}},
		{"differed: a file and line", corev1.EnvVar{Name: "BREAK", Value: "main.go:71"}, nil},
		// An IPv6 literal is not read: the words of a log line never name it either, so no dial
		// loop could be matched to it.
		{"differed: a bracketed IPv6 address", corev1.EnvVar{Name: "ADDR", Value: "[fd00::1]:8080"}, nil},
		{"differed: an IPv6 URL", corev1.EnvVar{Name: "API", Value: "http://[fd00::1]:8080/v1"}, nil},
		{"a URL without a port", corev1.EnvVar{Name: "API", Value: "https://api.example.com/v1"}, nil},
		{"an image tag", corev1.EnvVar{Name: "IMAGE", Value: "redis:7.2"}, nil},
		{"a time of day", corev1.EnvVar{Name: "BACKUP_AT", Value: "02:30"}, nil},
		{"a port alone", corev1.EnvVar{Name: "LISTEN", Value: ":8080"}, nil},
		{"localhost", corev1.EnvVar{Name: "SIDECAR", Value: "localhost:15000"}, nil},
		{"a loopback URL", corev1.EnvVar{Name: "SIDECAR", Value: "http://127.0.0.1:9901/ready"}, nil},
		{"the unspecified address", corev1.EnvVar{Name: "BIND", Value: "0.0.0.0:8080"}, nil},
		{"an IPv6 loopback URL", corev1.EnvVar{Name: "SIDECAR", Value: "http://[::1]:9901"}, nil},
		{"a Secret's value is never read", corev1.EnvVar{Name: "DATABASE_URL", Value: "db:5432", ValueFrom: secret}, nil},
		{"a ConfigMap's value is never read", corev1.EnvVar{Name: "UPSTREAM", ValueFrom: config}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{tc.env}}}}
			var got []string
			for _, ep := range EnvEndpoints(spec) {
				got = append(got, ep.Variable+"="+ep.Host+":"+ep.Port)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("EnvEndpoints(%q) = %q, want %q", tc.env.Value, got, tc.want)
			}
		})
	}
}

// TestEnvEndpointsReadsTheRunningContainers: an init container's env names what it waits on
// before the copy runs, not what the copy's own process dials.
func TestEnvEndpointsReadsTheRunningContainers(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "wait", Env: []corev1.EnvVar{{Name: "WAIT_FOR", Value: "db:5432"}}}},
		Containers: []corev1.Container{
			{Name: "app", Env: []corev1.EnvVar{{Name: "CACHE", Value: "cache:6379"}}},
			{Name: "proxy", Env: []corev1.EnvVar{{Name: "UPSTREAM", Value: "http://billing:8080"}}},
		},
	}
	got := EnvEndpoints(spec)
	want := []EnvEndpoint{{"CACHE", "cache", "6379"}, {"UPSTREAM", "billing", "8080"}}
	if !slices.Equal(got, want) {
		t.Errorf("EnvEndpoints = %v, want %v", got, want)
	}
}
