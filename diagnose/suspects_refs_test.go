package diagnose

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

func configMapKey(name, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

func secretKey(name, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}
}

// A failing value that lives in a Secret or ConfigMap is named by its reference, ranked by what
// the failure says: rejected credentials point at the Secret, a connection that fails at where
// the address comes from. The data itself is never read.
func TestFailingValueFromAReference(t *testing.T) {
	runSuspectCases(t, []suspectCase{
		{
			name: "MySQL rejects credentials that come whole from an envFrom Secret",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				c := &w.Template.Spec.Containers[0]
				c.Env = []corev1.EnvVar{{Name: "DB_HOST", ValueFrom: configMapKey("payments-config", "db.host")}}
				c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "payments-db"}}}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `java.sql.SQLException: Access denied for user 'payments'@'10.244.1.7' (using password: YES)`)
			},
			rule: rules.RuleCredentialsRejected, path: c0 + ".envFrom[0].secretRef",
			absent: []string{c0 + ".env[0].valueFrom.configMapKeyRef.key"},
		},
		{
			name: "PostgreSQL rejects a password from an envFrom Secret beside an envFrom ConfigMap",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				c := &w.Template.Spec.Containers[0]
				c.EnvFrom = []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ledger-config"}}},
					{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ledger-pg"}}},
				}
				stTerminated(w, "Error", 1, "")
				stLog(w, `time=2026-11-15T18:38:43Z level=ERROR msg="connect" err="FATAL: password authentication failed for user \"ledger\" (SQLSTATE 28P01)"`)
			},
			rule: rules.RuleCredentialsRejected, path: c0 + ".envFrom[1].secretRef",
			absent: []string{c0 + ".envFrom[0].configMapRef"},
		},
		{
			name: "a refused JDBC URL takes its host from a ConfigMap key",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "DB_HOST", ValueFrom: configMapKey("catalog-config", "db-host")},
					{Name: "DB_PASSWORD", ValueFrom: secretKey("catalog-db", "password")},
					{Name: "SPRING_DATASOURCE_URL", Value: "jdbc:mysql://$(DB_HOST):3306/catalog"},
				}
				stTerminated(w, "Error", 1, "")
				stLog(w, `com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure`,
					`Caused by: java.net.ConnectException: Connection refused`)
			},
			rule: rules.RuleEndpointOfFailedConnection, path: c0 + ".env[0].valueFrom.configMapKeyRef.key",
			below:  []string{c0 + ".env[2].value"},
			absent: []string{c0 + ".env[1].valueFrom.secretKeyRef.key"},
		},
		{
			name: "a timed-out DSN takes its host from a variable of another name",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Containers[0].Env = []corev1.EnvVar{
					{Name: "QUEUE_TARGET", ValueFrom: secretKey("queue", "target")},
					{Name: "AMQP_URL", Value: "amqp://worker@$(QUEUE_TARGET):5672/jobs"},
				}
				stTerminated(w, "Error", 1, "")
				stLog(w, `{"level":"error","msg":"amqp dial failed","err":"dial tcp: i/o timeout"}`)
			},
			rule: rules.RuleEndpointOfFailedConnection, path: c0 + ".env[0].valueFrom.secretKeyRef.key",
			below: []string{c0 + ".env[1].value"},
		},
		{
			name: "a refused address no field holds, the config file mounted from a ConfigMap",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "report-config"}}}}}
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/report"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `{"level":60,"time":1794950017255,"pid":1,"msg":"failed to start","err":{"type":"Error","message":"connect ECONNREFUSED 10.96.122.40:5433","code":"ECONNREFUSED","address":"10.96.122.40","port":5433}}`)
			},
			rule: rules.RuleEndpointOfFailedConnection, path: "spec.template.spec.volumes[0].configMap",
		},
		{
			name: "a host that does not resolve, the settings mounted from a Secret",
			setup: func(w *workload) {
				w.Shape = ShapeStartsAndDies
				w.Template.Spec.Volumes = []corev1.Volume{
					{Name: "unused", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "not-mounted"}}}},
					{Name: "settings", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-settings"}}},
				}
				w.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "settings", MountPath: "/run/secrets/app"}}
				stTerminated(w, "Error", 1, "")
				stLog(w, `2026-11-17 21:15:56 ERROR could not connect: dial tcp: lookup cache-primary.internal on 10.96.0.10:53: no such host`)
			},
			rule: rules.RuleEndpointOfFailedConnection, path: "spec.template.spec.volumes[1].secret",
			absent: []string{"spec.template.spec.volumes[0].configMap"},
		},
	})
}
