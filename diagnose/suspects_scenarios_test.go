package diagnose

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// TestScenarioSuspectLists pins the whole ranked suspect list of each shared scenario and
// fixture, not only the top one the verdict table checks: a rule that starts adding noise to a real dump fails here.
func TestScenarioSuspectLists(t *testing.T) {
	type want struct {
		rule         RuleID
		object, path string
		confidence   Confidence
	}
	tests := []struct {
		scenario, kind, name string
		want                 []want
	}{
		{"dev-ingester", "Deployment", "telemetry-ingester", []want{
			{rules.RuleNamedInFailure, "Deployment/telemetry-ingester", "spec.template.spec.containers[0].env[0].value", ConfidenceHigh},
		}},
		{"dev-ingester-upstream", "Deployment", "telemetry-ingester", []want{
			{rules.RuleNamedInFailure, "Deployment/telemetry-ingester", "spec.template.spec.containers[0].env[0].value", ConfidenceMedium},
		}},
		{"dev-payments", "Deployment", "payments-api", []want{
			{rules.RuleImageNotFound, "Deployment/payments-api", "spec.template.spec.containers[0].image", ConfidenceHigh},
		}},
		{"dev-reports", "Deployment", "report-worker", []want{
			{rules.RuleEnvKeyNotFound, "Deployment/report-worker", "spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.key", ConfidenceHigh},
			{rules.RuleChangedField, "Deployment/report-worker", "spec.template.spec.containers[0].image", ConfidenceLow},
		}},
		{"dev-rollout", "Deployment", "orders", []want{
			{rules.RuleEnvRefNotFound, "Deployment/orders", "spec.template.spec.containers[0].envFrom[0].configMapRef.name", ConfidenceHigh},
		}},
		{"dev-thumbs", "Deployment", "thumbnailer", []want{
			{rules.RuleMemoryLimit, "Deployment/thumbnailer", "spec.template.spec.containers[0].resources.limits.memory", ConfidenceHigh},
		}},
		{"dev-web", "Deployment", "web-frontend", []want{
			{rules.RuleProbePath, "Deployment/web-frontend", "spec.template.spec.containers[0].readinessProbe.httpGet.path", ConfidenceHigh},
		}},
		{"dev-search", "StatefulSet", "search-indexer", []want{
			{rules.RuleNodeSelector, "StatefulSet/search-indexer", "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", ConfidenceHigh},
		}},
		{"dev-gateway", "Deployment", "api-gateway", []want{
			{rules.RuleServiceSelector, "Service/api-gateway", "spec.selector", ConfidenceHigh},
		}},
		{"dev-shipper", "DaemonSet", "log-shipper", []want{
			{rules.RuleImagePullAuth, "DaemonSet/log-shipper", "spec.template.spec.imagePullSecrets", ConfidenceHigh},
			{rules.RuleImagePullAuth, "DaemonSet/log-shipper", "spec.template.spec.serviceAccountName", ConfidenceLow},
		}},
		{"dev-mixed", "Deployment", "recommender", nil},
		{"dev-mixed", "Deployment", "checkout", nil},
		{"fixtures/failed-mount", "Deployment", "billing-api", []want{
			{rules.RuleVolumeRefNotFound, "Deployment/billing-api", "spec.template.spec.volumes[1].secret.secretName", ConfidenceHigh},
		}},
		{"fixtures/insufficient-cpu", "Deployment", "video-transcoder", []want{
			{rules.RuleInsufficientResource, "Deployment/video-transcoder", "spec.template.spec.containers[0].resources.requests.cpu", ConfidenceHigh},
		}},
		{"fixtures/liveness", "Deployment", "session-cache", []want{
			{rules.RuleProbePort, "Deployment/session-cache", "spec.template.spec.containers[0].livenessProbe.httpGet.port", ConfidenceHigh},
		}},
		{"fixtures/quota", "Deployment", "report-builder", []want{
			{rules.RuleQuotaExceeded, "Deployment/report-builder", "spec.template.spec.containers[0].resources.requests.memory", ConfidenceHigh},
		}},
		{"fixtures/registry-down", "Deployment", "notifier", []want{
			{rules.RuleImageRegistryDown, "Deployment/notifier", "spec.template.spec.containers[0].image", ConfidenceMedium},
		}},
		{"fixtures/service-port", "Deployment", "search-api", []want{
			{rules.RuleServiceTargetPort, "Service/search-api", "spec.ports[0].targetPort", ConfidenceHigh},
		}},
		{"fixtures/serviceaccount", "Deployment", "audit-exporter", []want{
			{rules.RuleServiceAccountNotFound, "Deployment/audit-exporter", "spec.template.spec.serviceAccountName", ConfidenceHigh},
		}},
		{"fixtures/start-error", "Deployment", "pdf-renderer", []want{
			{rules.RuleCommandNotFound, "Deployment/pdf-renderer", "spec.template.spec.containers[0].command[0]", ConfidenceHigh},
		}},
		{"fixtures/storageclass", "StatefulSet", "metrics-db", []want{
			{rules.RuleStorageClass, "StatefulSet/metrics-db", "spec.volumeClaimTemplates[0].spec.storageClassName", ConfidenceHigh},
		}},
		{"fixtures/old-restarts", "Deployment", "pricing", nil},
		{"fixtures/invalid-image", "Deployment", "storefront", []want{
			{rules.RuleImageInvalidName, "Deployment/storefront", "spec.template.spec.containers[0].image", ConfidenceHigh},
		}},
		{"fixtures/readiness-port", "Deployment", "inventory", []want{
			{rules.RuleProbePort, "Deployment/inventory", "spec.template.spec.containers[0].readinessProbe.httpGet.port", ConfidenceHigh},
		}},
		{"fixtures/run-as-non-root", "Deployment", "metrics-proxy", []want{
			{rules.RuleRunAsNonRoot, "Deployment/metrics-proxy", "spec.template.spec.containers[0].securityContext.runAsNonRoot", ConfidenceHigh},
			{rules.RuleRunAsNonRoot, "Deployment/metrics-proxy", "spec.template.spec.containers[0].securityContext.runAsUser", ConfidenceMedium},
		}},
		{"fixtures/bare-replicaset", "ReplicaSet", "legacy-importer", []want{
			{rules.RuleMemoryBelowHeap, "ReplicaSet/legacy-importer", "spec.template.spec.containers[0].resources.limits.memory", ConfidenceHigh},
			{rules.RuleMemoryBelowHeap, "ReplicaSet/legacy-importer", "spec.template.spec.containers[0].env[0].value", ConfidenceMedium},
		}},
		{"fixtures/liveness-timeout", "Deployment", "geo-lookup", []want{
			{rules.RuleLivenessStartup, "Deployment/geo-lookup", "spec.template.spec.containers[0].livenessProbe.timeoutSeconds", ConfidenceMedium},
		}},
		{"fixtures/node-selector", "Deployment", "image-resizer", []want{
			{rules.RuleNodeSelector, "Deployment/image-resizer", "spec.template.spec.nodeSelector[kubernetes.io/arch]", ConfidenceHigh},
		}},
		{"fixtures/configmap-key", "Deployment", "docs-site", []want{
			{rules.RuleVolumeKeyNotFound, "Deployment/docs-site", "spec.template.spec.volumes[0].configMap.items[0].key", ConfidenceHigh},
		}},
		{"fixtures/untolerated-taint", "Deployment", "batch-scorer", []want{
			{rules.RuleUntoleratedTaint, "Deployment/batch-scorer", "spec.template.spec.tolerations", ConfidenceHigh},
		}},
		{"fixtures/job-image-pull", "Job", "report-export", []want{
			{rules.RuleImageNotFound, "Job/report-export", "spec.template.spec.containers[0].image", ConfidenceHigh},
		}},
		{"fixtures/job-backoff", "Job", "ledger-reconcile", []want{
			{rules.RuleNamedInFailure, "Job/ledger-reconcile", "spec.template.spec.containers[0].env[0].value", ConfidenceMedium},
		}},
		{"fixtures/job-deadline", "Job", "index-compact", nil},
		{"fixtures/cronjob-template-change", "CronJob", "nightly-billing", []want{
			{rules.RuleNamedInFailure, "CronJob/nightly-billing", "spec.jobTemplate.spec.template.spec.containers[0].args[0]", ConfidenceHigh},
			{rules.RuleChangedField, "CronJob/nightly-billing", "spec.jobTemplate.spec.template.spec.containers[0].image", ConfidenceLow},
		}},
		{"fixtures/cronjob-suspended", "CronJob", "cache-warmer", []want{
			{rules.RuleCronJobSuspended, "CronJob/cache-warmer", "spec.suspend", ConfidenceHigh},
		}},
		{"demo", "Deployment", "telemetry-api", []want{
			{rules.RuleRejectedArgument, "Deployment/telemetry-api", "spec.template.spec.containers[0].args[2]", ConfidenceHigh},
			{rules.RuleChangedField, "Deployment/telemetry-api", "spec.template.spec.containers[0].image", ConfidenceLow},
		}},
		{"demo", "Deployment", "telemetry-worker", []want{
			{rules.RuleNamedInFailure, "Deployment/telemetry-worker", "spec.template.spec.containers[0].env[3].valueFrom.secretKeyRef.key", ConfidenceHigh},
			{rules.RuleChangedField, "Deployment/telemetry-worker", "spec.template.spec.containers[0].env[2]", ConfidenceLow},
			{rules.RuleChangedField, "Deployment/telemetry-worker", "spec.template.spec.containers[0].image", ConfidenceLow},
		}},
		{"demo", "Deployment", "telemetry-collector", []want{
			{rules.RuleImageNotFound, "Deployment/telemetry-collector", "spec.template.spec.containers[0].image", ConfidenceHigh},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.name, func(t *testing.T) {
			// Shared scenarios live in testdata/scenarios/<ns>; our fixtures in
			// testdata/fixtures/<id>, namespace fixture-<id>.
			dir, ns := filepath.Join("..", "testdata", "scenarios", tt.scenario), tt.scenario
			if id, ok := strings.CutPrefix(tt.scenario, "fixtures/"); ok {
				dir, ns = filepath.Join("..", "testdata", "fixtures", id), "fixture-"+id
			}
			if tt.scenario == "demo" {
				dir, ns = filepath.Join("..", "internal", "demo"), "telemetry"
			}
			s, err := dump.Read(filepath.Join(dir, "dump"), nil)
			if err != nil {
				t.Fatalf("read dump: %v", err)
			}
			d := Diagnose(s).Find(tt.kind, ns, tt.name)
			if d == nil {
				t.Fatalf("no diagnosis of %s %s", tt.kind, tt.name)
			}
			if len(d.Suspects) != len(tt.want) {
				for _, s := range d.Suspects {
					t.Logf("  %d %s %s %s", s.Score, s.Rule, s.Object, s.Path)
				}
				t.Fatalf("%d suspects, want %d", len(d.Suspects), len(tt.want))
			}
			for i, w := range tt.want {
				s := d.Suspects[i]
				if s.Rule != w.rule || s.Object != w.object || s.Path.String() != w.path || s.Confidence != w.confidence {
					t.Errorf("suspect %d = %s %s %s %s, want %s %s %s %s", i, s.Rule, s.Object, s.Path, s.Confidence,
						w.rule, w.object, w.path, w.confidence)
				}
			}
		})
	}
}
