package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestElementIn(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "migrate", Env: []corev1.EnvVar{{Name: "MIGRATE_DSN"}}}},
		Containers: []corev1.Container{{
			Name: "app",
			Env:  []corev1.EnvVar{{Name: "LEDGER_DB_ADDR"}, {Name: "API_TOKEN"}},
			EnvFrom: []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ledger-settings"}}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ledger-creds"}}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "spool", MountPath: "/var/spool"}},
		}},
		Volumes: []corev1.Volume{{Name: "spool"}, {Name: "tls"}},
	}
	tests := map[string]string{
		"containers[0].env[0].value":                          "LEDGER_DB_ADDR",
		"containers[0].env[1].valueFrom.secretKeyRef.key":     "API_TOKEN",
		"containers[0].env[2].value":                          "",
		"containers[0].envFrom[0].configMapRef.name":          "ledger-settings",
		"containers[0].envFrom[1].secretRef.name":             "ledger-creds",
		"containers[0].volumeMounts[0].mountPath":             "spool",
		"initContainers[0].env[0].value":                      "MIGRATE_DSN",
		"volumes[1].secret.secretName":                        "tls",
		"volumes[7].secret.secretName":                        "",
		"containers[1].env[0].value":                          "",
		"containers[0].image":                                 "",
		"containers[0].resources.limits[memory]":              "",
		"nodeSelector[topology.kubernetes.io/zone]":           "",
		"containers[0].ports[0].containerPort":                "",
		"affinity.nodeAffinity.requiredDuringScheduling.x[0]": "",
	}
	for path, want := range tests {
		if got := elementIn(spec, path); got != want {
			t.Errorf("elementIn(%s) = %q, want %q", path, got, want)
		}
	}
}

// TestSuspectsNameTheirElement: the engine names the env var a Job's and a Deployment's top
// suspect indexes, once, for every front end; a suspect outside the template names none.
func TestSuspectsNameTheirElement(t *testing.T) {
	tests := []struct {
		dir, kind, ns, name, element string
	}{
		{"../testdata/fixtures/job-backoff", "Job", "fixture-job-backoff", "ledger-reconcile", "LEDGER_DB_ADDR"},
		{"../testdata/fixtures/ready-then-fails", "Deployment", "fixture-ready-then-fails", "telemetry-ingester", "INGEST_ENDPOINT"},
		{"../testdata/fixtures/failed-mount", "Deployment", "fixture-failed-mount", "billing-api", "tls"},
		{"../testdata/fixtures/service-port", "Deployment", "fixture-service-port", "search-api", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loadExpected(t, tt.dir)
			d := Diagnose(loadDump(t, tt.dir, e)).Find(tt.kind, tt.ns, tt.name)
			if d == nil || len(d.Suspects) == 0 {
				t.Fatalf("no suspect for %s/%s", tt.kind, tt.name)
			}
			if got := d.Suspects[0].Element; got != tt.element {
				t.Errorf("top suspect %s %s names element %q, want %q", d.Suspects[0].Object, d.Suspects[0].Path, got, tt.element)
			}
		})
	}
}
