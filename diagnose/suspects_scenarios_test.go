package diagnose

import (
	"path/filepath"
	"testing"

	"github.com/kubediagnose/kubectl-diagnose/internal/dump"
)

// TestScenarioSuspectLists pins the whole ranked suspect list of each shared scenario, not only
// the top one the verdict table checks: a rule that starts adding noise to a real dump fails here.
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
			{RuleNamedInFailure, "Deployment/telemetry-ingester", "spec.template.spec.containers[0].env[0].value", ConfidenceHigh},
		}},
		{"dev-ingester-upstream", "Deployment", "telemetry-ingester", []want{
			{RuleNamedInFailure, "Deployment/telemetry-ingester", "spec.template.spec.containers[0].env[0].value", ConfidenceMedium},
		}},
		{"dev-payments", "Deployment", "payments-api", []want{
			{RuleImageNotFound, "Deployment/payments-api", "spec.template.spec.containers[0].image", ConfidenceHigh},
		}},
		{"dev-reports", "Deployment", "report-worker", []want{
			{RuleEnvKeyNotFound, "Deployment/report-worker", "spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef.key", ConfidenceHigh},
			{RuleChangedField, "Deployment/report-worker", "spec.template.spec.containers[0].image", ConfidenceLow},
		}},
		{"dev-rollout", "Deployment", "orders", []want{
			{RuleEnvRefNotFound, "Deployment/orders", "spec.template.spec.containers[0].envFrom[0].configMapRef.name", ConfidenceHigh},
		}},
		{"dev-thumbs", "Deployment", "thumbnailer", []want{
			{RuleMemoryLimit, "Deployment/thumbnailer", "spec.template.spec.containers[0].resources.limits.memory", ConfidenceHigh},
		}},
		{"dev-web", "Deployment", "web-frontend", []want{
			{RuleProbePath, "Deployment/web-frontend", "spec.template.spec.containers[0].readinessProbe.httpGet.path", ConfidenceHigh},
		}},
		{"dev-search", "StatefulSet", "search-indexer", []want{
			{RuleNodeSelector, "StatefulSet/search-indexer", "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]", ConfidenceHigh},
		}},
		{"dev-gateway", "Deployment", "api-gateway", []want{
			{RuleServiceSelector, "Service/api-gateway", "spec.selector", ConfidenceHigh},
		}},
		{"dev-shipper", "DaemonSet", "log-shipper", []want{
			{RuleImagePullAuth, "DaemonSet/log-shipper", "spec.template.spec.imagePullSecrets", ConfidenceHigh},
			{RuleImagePullAuth, "DaemonSet/log-shipper", "spec.template.spec.serviceAccountName", ConfidenceLow},
		}},
		{"dev-mixed", "Deployment", "recommender", nil},
		{"dev-mixed", "Deployment", "checkout", nil},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.name, func(t *testing.T) {
			s, err := dump.Read(filepath.Join("..", "testdata", "scenarios", tt.scenario, "dump"), nil)
			if err != nil {
				t.Fatalf("read dump: %v", err)
			}
			d := Diagnose(s).Find(tt.kind, tt.scenario, tt.name)
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
