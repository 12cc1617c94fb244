package report

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kubediagnose/kubectl-diagnose/diagnose"
	"github.com/kubediagnose/kubectl-diagnose/internal/snapshot"
)

// The fixtures are built by hand so the printers are tested whatever the engine currently
// produces; values follow the shared scenarios (dev-ingester, dev-payments, dev-gateway, ...).

var refTime = time.Date(2026, 11, 24, 14, 32, 10, 0, time.UTC)

func secs(s int64) *int64 { return &s }

func at(d time.Duration) *time.Time { t := refTime.Add(-d); return &t }

var podSpec = field.NewPath("spec", "template", "spec")

func ingester() diagnose.Diagnosis {
	return diagnose.Diagnosis{
		Kind: "Deployment", Namespace: "dev-ingester", Name: "telemetry-ingester",
		Shape:               diagnose.ShapeLiveButIdle,
		Counts:              diagnose.Counts{Declared: 5, Existing: 5, Serving: 0, Restarts: 0},
		YoungestCopySeconds: secs(1260), OldestCopySeconds: secs(1320),
		Headline: "5 of 5 copies exist · 0 serving — the loop has converged; nothing is serving",
		Cause:    diagnose.CauseSpec,
		Argument: &diagnose.Argument{
			Object:  "Deployment/telemetry-ingester",
			For:     `spec of Deployment/telemetry-ingester: revision 2 changed spec.template.spec.containers[0].env[0].value ("telemetry-intake.internal:8443" → "telemetry-intake.internal:9443")`,
			Against: "not dependency: revision 2 never served without this failure",
		},
		Suspects: []diagnose.Suspect{{
			Rule: diagnose.RuleNamedInFailure, Object: "Deployment/telemetry-ingester",
			Path: podSpec.Child("containers").Index(0).Child("env").Index(0).Child("value"), Element: "INGEST_ENDPOINT",
			Value: "telemetry-intake.internal:9443", PreviousValue: "telemetry-intake.internal:8443",
			Confidence: diagnose.ConfidenceHigh,
			Reason:     "changed in revision 2; logs say dial tcp 10.96.14.7:9443: connect: connection refused",
		}, {
			Rule: diagnose.RuleProbePath, Object: "Deployment/telemetry-ingester",
			Path:  podSpec.Child("containers").Index(0).Child("readinessProbe", "httpGet", "path"),
			Value: "/ready", PreviousValue: "/ready", Confidence: diagnose.ConfidenceLow,
			Reason: "readiness probe fails with 503",
		}},
		Evidence: []diagnose.Evidence{{
			Kind: "Unhealthy", Source: diagnose.SourceEvent,
			Message: "Readiness probe failed: HTTP probe failed with statuscode: 503",
			Objects: []string{"telemetry-ingester-7d9f8b6c5-2xkqp", "telemetry-ingester-7d9f8b6c5-8wz4d", "telemetry-ingester-7d9f8b6c5-bn6tq", "telemetry-ingester-7d9f8b6c5-hk2lm", "telemetry-ingester-7d9f8b6c5-x7r9v"},
			Count:   212, LastSeen: at(4 * time.Second),
		}, {
			Kind: "log", Source: diagnose.SourceLog,
			Message: "ingest: upstream telemetry-intake.internal:9443: dial tcp 10.96.14.7:9443: connect: connection refused\x1b[31m",
			Objects: []string{"telemetry-ingester-7d9f8b6c5-2xkqp"}, Count: 1,
		}},
		Revisions: &diagnose.Revisions{
			Current: "2", LastServing: "1",
			ChangedPaths: []string{"spec.template.spec.containers[0].env[0].value"},
		},
		SignalGaps: []diagnose.SignalGap{{
			Object: "Deployment/telemetry-ingester", Path: "spec.strategy.type",
			Message: "Recreate lets every copy go unready at once",
		}},
		Fix: "kubectl rollout undo deployment/telemetry-ingester --to-revision=1 -n dev-ingester",
		Detail: (&diagnose.Detail{
			CurrentRevision: "2", LastServingRevision: "1",
			Changes: []diagnose.Change{{
				Path:     podSpec.Child("containers").Index(0).Child("env").Index(0).Child("value"),
				Previous: "telemetry-intake.internal:8443", Current: "telemetry-intake.internal:9443",
			}},
		}).WithCopies([]diagnose.Copy{
			{Name: "telemetry-ingester-7d9f8b6c5-2xkqp", Revision: "2", Phase: "Running", AgeSeconds: ptr.To[int64](1260), Reason: "ReadinessProbeFailed", Node: "kind-worker"},
			{Name: "telemetry-ingester-7d9f8b6c5-8wz4d", Revision: "2", Phase: "Running", AgeSeconds: ptr.To[int64](1320), Reason: "ReadinessProbeFailed", Node: "kind-worker2"},
		}),
	}
}

func payments() diagnose.Diagnosis {
	return diagnose.Diagnosis{
		Kind: "Deployment", Namespace: "dev-payments", Name: "payments-api",
		Shape:               diagnose.ShapeNeverStarts,
		Counts:              diagnose.Counts{Declared: 3, Existing: 4, Serving: 3},
		YoungestCopySeconds: secs(190), OldestCopySeconds: secs(259200),
		Headline: "the new revision never started; 3 of 3 old copies still serve",
		Cause:    diagnose.CauseSpec,
		Argument: &diagnose.Argument{
			Object:  "Deployment/payments-api",
			For:     `spec of Deployment/payments-api: revision 2 changed spec.template.spec.containers[0].image ("registry.example.com/payments-api:v2.3.1" → "registry.example.com/payments-api:v2.3.l")`,
			Against: "not dependency: revision 2 never served without this failure",
		},
		Suspects: []diagnose.Suspect{{
			Rule: diagnose.RuleImageNotFound, Object: "Deployment/payments-api", Path: podSpec.Child("containers").Index(0).Child("image"),
			Value: "registry.example.com/payments-api:v2.3.l", PreviousValue: "registry.example.com/payments-api:v2.3.1",
			Confidence: diagnose.ConfidenceHigh, Reason: "the registry has no such tag",
		}},
		Evidence: []diagnose.Evidence{{
			Kind: "ErrImagePull", Source: diagnose.SourcePodStatus,
			Message: `failed to pull and unpack image "registry.example.com/payments-api:v2.3.l": not found`,
			Objects: []string{"payments-api-5c7f9d8b4-q2w8e"}, Count: 1,
		}},
		Revisions: &diagnose.Revisions{Current: "2", LastServing: "1", ChangedPaths: []string{"spec.template.spec.containers[0].image"}},
		Fix:       "kubectl rollout undo deployment/payments-api --to-revision=1 -n dev-payments",
	}
}

func gateway() diagnose.Diagnosis {
	return diagnose.Diagnosis{
		Kind: "Deployment", Namespace: "dev-gateway", Name: "api-gateway",
		Shape:               diagnose.ShapeLiveButIdle,
		Counts:              diagnose.Counts{Declared: 2, Existing: 2, Serving: 0},
		YoungestCopySeconds: secs(7200), OldestCopySeconds: secs(7260),
		Cause: diagnose.CauseSpec,
		Argument: &diagnose.Argument{
			Object:  "Service/api-gateway",
			For:     "spec of Service/api-gateway: spec.selector: the Service selects no pod of the workload",
			Against: "not dependency: Deployment/api-gateway never served through Service/api-gateway",
		},
		Suspects: []diagnose.Suspect{{
			Rule: diagnose.RuleServiceSelector, Object: "Service/api-gateway", Path: field.NewPath("spec", "selector"),
			Value: "app=api-gw", PreviousValue: "app=api-gateway", Confidence: diagnose.ConfidenceHigh,
			Reason: "the Service selects no pod of the workload",
		}},
		Fix: "set Service/api-gateway spec.selector back to app=api-gateway",
	}
}

func thumbnailer() diagnose.Diagnosis {
	return diagnose.Diagnosis{
		Kind: "Deployment", Namespace: "dev-thumbs", Name: "thumbnailer",
		Shape:               diagnose.ShapeStartsAndDies,
		Counts:              diagnose.Counts{Declared: 2, Existing: 2, Serving: 0, Restarts: 12},
		YoungestCopySeconds: secs(259200), OldestCopySeconds: secs(259260),
		Cause: diagnose.CauseDependency,
		Suspects: []diagnose.Suspect{{
			Rule: diagnose.RuleMemoryLimit, Object: "Deployment/thumbnailer",
			Path:  podSpec.Child("containers").Index(0).Child("resources", "limits").Key("memory"),
			Value: "64Mi", PreviousValue: "64Mi", Confidence: diagnose.ConfidenceMedium,
			Reason: "OOMKilled (exit code 137)",
		}},
		Revisions: &diagnose.Revisions{Current: "1", LastServing: "1"},
	}
}

func healthy() []diagnose.Diagnosis {
	return []diagnose.Diagnosis{
		{
			Kind: "Deployment", Namespace: "dev-mixed", Name: "checkout", Shape: diagnose.ShapeHealthy,
			Counts: diagnose.Counts{Declared: 3, Existing: 3, Serving: 3, Restarts: 1}, YoungestCopySeconds: secs(691200), OldestCopySeconds: secs(691260), Cause: diagnose.CauseUnknown,
		},
		{
			Kind: "Deployment", Namespace: "dev-mixed", Name: "recommender", Shape: diagnose.ShapeProgressing,
			Counts: diagnose.Counts{Declared: 4, Existing: 5, Serving: 3}, YoungestCopySeconds: secs(45), OldestCopySeconds: secs(86400), Cause: diagnose.CauseUnknown,
		},
		{Kind: "Deployment", Namespace: "dev-mixed", Name: "batch-exporter", Shape: diagnose.ShapeHealthy, Cause: diagnose.CauseUnknown},
	}
}

// sampleReport mixes shapes and namespaces, deliberately not in worst-first order.
func sampleReport() *diagnose.Report {
	ws := append(healthy(), ingester(), thumbnailer(), payments(), gateway())
	r := &diagnose.Report{
		APIVersion: diagnose.APIVersion, Kind: diagnose.ReportKind, ReferenceTime: refTime,
		Source:             snapshot.SourceInfo{Type: snapshot.SourceDump, Path: "testdata/scenarios"},
		Visibility:         []snapshot.Visibility{{Kind: "Node", Reason: "nodes is forbidden: User \"audit\" cannot list resource \"nodes\""}},
		Summary:            map[diagnose.Shape]int{},
		SharedDependencies: []diagnose.SharedDependency{},
		Workloads:          ws,
	}
	for _, w := range ws {
		r.Summary[w.Shape]++
	}
	return r
}
