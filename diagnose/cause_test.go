package diagnose

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubediagnose/kubectl-diagnose/diagnose/rules"
)

// TestDecideCause covers the cause rule: spec when the failing revision changed the implicated
// field or the fault is intrinsic to the spec or lies in another object's spec; dependency when
// an outside failure hits a spec unchanged since it served; unknown when nothing is attributable.
func TestDecideCause(t *testing.T) {
	cur := &revision{Number: 2}
	old := &revision{Number: 1}
	envPath := "spec.template.spec.containers[0].env[0].value"
	tests := []struct {
		name        string
		shape       Shape
		lastServing *revision
		changes     []string
		top         *Suspect
		want        Cause
	}{
		{name: "healthy has nothing to attribute", shape: ShapeHealthy, lastServing: cur, want: CauseUnknown},
		{
			name: "progressing has nothing to attribute", shape: ShapeProgressing, lastServing: old,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: rules.RuleNamedInFailure}, want: CauseUnknown,
		},
		{
			name: "changed field named by the failure is spec", shape: ShapeLiveButIdle, lastServing: old, changes: []string{envPath},
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: rules.RuleNamedInFailure}, want: CauseSpec,
		},
		{
			name: "same outside failure on a spec unchanged since it served is dependency", shape: ShapeLiveButIdle, lastServing: cur,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: rules.RuleNamedInFailure}, want: CauseDependency,
		},
		{
			name: "outside failure on a field the new revision did not change is dependency", shape: ShapeLiveButIdle, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].image"},
			top:     &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: rules.RuleNamedInFailure}, want: CauseDependency,
		},
		{
			name: "outside failure on a workload that never served is unknown", shape: ShapeLiveButIdle,
			top: &Suspect{Object: "Deployment/web", Path: p(envPath), Rule: rules.RuleNamedInFailure}, want: CauseUnknown,
		},
		{
			name: "a name that does not exist is spec even without history", shape: ShapeNeverStarts,
			top: &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].envFrom[0].configMapRef.name"), Rule: rules.RuleEnvRefNotFound}, want: CauseSpec,
		},
		{
			name: "another object's spec is spec", shape: ShapeLiveButIdle, lastServing: cur,
			top: &Suspect{Object: "Service/web", Path: p("spec.selector"), Rule: rules.RuleServiceSelector}, want: CauseSpec,
		},
		{
			name: "OOM at a limit unchanged since it served is dependency", shape: ShapeStartsAndDies, lastServing: cur,
			top: &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].resources.limits.memory"), Rule: rules.RuleMemoryLimit}, want: CauseDependency,
		},
		{
			name: "OOM at a limit the new revision lowered is spec", shape: ShapeStartsAndDies, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].resources.limits[memory]"},
			top:     &Suspect{Object: "Deployment/web", Path: p("spec.template.spec.containers[0].resources.limits.memory"), Rule: rules.RuleMemoryLimit}, want: CauseSpec,
		},
		{
			name: "unreachable registry after a tag change on the same host is dependency", shape: ShapeNeverStarts, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].image"},
			top: &Suspect{
				Object: "Deployment/web", Path: p("spec.template.spec.containers[0].image"), Rule: rules.RuleImageRegistryDown,
				Value: "registry.internal/web:1.5.0", PreviousValue: "registry.internal/web:1.4.2",
			}, want: CauseDependency,
		},
		{
			name: "unreachable registry after a move to another host is spec", shape: ShapeNeverStarts, lastServing: old,
			changes: []string{"spec.template.spec.containers[0].image"},
			top: &Suspect{
				Object: "Deployment/web", Path: p("spec.template.spec.containers[0].image"), Rule: rules.RuleImageRegistryDown,
				Value: "registry.example.com/web:1.5.0", PreviousValue: "registry.internal/web:1.4.2",
			}, want: CauseSpec,
		},
		{name: "no suspect on a spec unchanged since it served is dependency", shape: ShapeStartsAndDies, lastServing: cur, want: CauseDependency},
		{name: "no suspect and no history is unknown", shape: ShapeStartsAndDies, want: CauseUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workload{Kind: "Deployment", Name: "web"}
			c, o := *cur, *old
			w.cls.Current = &c
			switch tt.lastServing {
			case cur:
				c.Served = "copy web-1 is Ready"
				w.cls.LastServing = &c
			case old:
				o.Served = "copy web-0 was Ready"
				w.cls.LastServing = &o
			}
			for _, c := range tt.changes {
				w.Changes = append(w.Changes, Change{Path: p(c)})
			}
			got, arg := argueCause(w, tt.shape, tt.top, onset{})
			if got != tt.want {
				t.Errorf("cause = %s, want %s (%+v)", got, tt.want, arg)
			}
			if tt.shape.Broken() != (arg != nil) || arg != nil && (arg.For == "" || arg.Against == "" || !strings.HasPrefix(arg.For, string(got)) && !strings.HasPrefix(arg.For, "spec of ")) {
				t.Errorf("argument %+v for cause %s", arg, got)
			}
		})
	}
}

// TestRegistryUnreachableAfterTagChange runs the whole engine on a rollout whose new tag cannot
// be pulled because the registry cannot be reached: on the registry the serving revision used,
// the registry is at fault (dependency); on a registry the new revision moved to, the spec is.
func TestRegistryUnreachableAfterTagChange(t *testing.T) {
	const day, minute = 24 * time.Hour, time.Minute
	for _, tt := range []struct {
		name, image string
		want        Cause
	}{
		{"new tag on the same registry", "registry.example/web:1.1.0", CauseDependency},
		{"new tag on another registry", "mirror.example/web:1.1.0", CauseSpec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster()
			d := c.deployment("web", 2, 2, reasonReplicaSetUpdated, 5*day)
			d.Spec.Template.Spec.Containers[0].Image = tt.image
			old := c.replicaSet(d, 1, 2, 5*day, func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "registry.example/web:1.0.0" })
			cur := c.replicaSet(d, 2, 1, 4*minute, nil)
			c.pod(old, "a", 5*day, running(true))
			c.pod(old, "b", 5*day, running(true))
			host, _, _ := strings.Cut(tt.image, "/")
			c.pod(cur, "c", 4*minute, waiting("ErrImagePull", `failed to pull and unpack image "`+tt.image+`": failed to resolve reference "`+tt.image+
				`": failed to do request: Head "https://`+host+`/v2/web/manifests/1.1.0": dial tcp: lookup `+host+` on 10.96.0.10:53: no such host`))
			dg := c.diagnoseOne("web")
			if dg == nil || len(dg.Suspects) == 0 {
				t.Fatalf("no diagnosis or no suspects: %+v", dg)
			}
			if top := dg.Suspects[0]; top.Rule != rules.RuleImageRegistryDown || top.Path.String() != "spec.template.spec.containers[0].image" {
				t.Fatalf("top suspect = %s %s, want %s on the image", top.Rule, top.Path, rules.RuleImageRegistryDown)
			}
			if dg.Cause != tt.want {
				t.Errorf("cause = %s, want %s (suspect %+v)", dg.Cause, tt.want, dg.Suspects[0])
			}
			// The fix must not call a changed image unchanged.
			if strings.Contains(dg.Fix, "unchanged") {
				t.Errorf("fix = %q, but the image changed", dg.Fix)
			}
		})
	}
}

// TestRegistryUnreachableOnAFreshWorkload: a workload whose only revision never served cannot
// pull because its registry host does not answer. Nothing shows that host ever answered, so the
// reference may be mistyped as well as the registry down: the cause is unknown, and the
// suspect's reason says the same, never "the registry or the network is at fault" (issue 35,
// item 10). Two kinds and two network failures.
func TestRegistryUnreachableOnAFreshWorkload(t *testing.T) {
	const minute = time.Minute
	pull := func(image, why string) string {
		host, _, _ := strings.Cut(image, "/")
		return `failed to pull and unpack image "` + image + `": failed to resolve reference "` + image +
			`": failed to do request: Head "https://` + host + `/v2/web/manifests/1.1.0": ` + why
	}
	for _, tt := range []struct {
		name  string
		build func(c *cluster) *Diagnosis
	}{
		{"a Deployment whose registry host does not resolve", func(c *cluster) *Diagnosis {
			d := c.deployment("web", 2, 1, reasonReplicaSetUpdated, 6*minute)
			d.Spec.Template.Spec.Containers[0].Image = "registy.example/web:1.1.0"
			rs := c.replicaSet(d, 1, 2, 6*minute, nil)
			msg := pull("registy.example/web:1.1.0", "dial tcp: lookup registy.example on 10.96.0.10:53: no such host")
			c.pod(rs, "a", 6*minute, waiting("ErrImagePull", msg))
			c.pod(rs, "b", 6*minute, waiting("ImagePullBackOff", msg))
			return c.diagnoseOne("web")
		}},
		{"a Deployment whose registry times out", func(c *cluster) *Diagnosis {
			d := c.deployment("api", 1, 1, reasonReplicaSetUpdated, 9*minute)
			d.Spec.Template.Spec.Containers[0].Image = "10.20.0.5:5000/web:1.1.0"
			rs := c.replicaSet(d, 1, 1, 9*minute, nil)
			c.pod(rs, "a", 9*minute, waiting("ErrImagePull",
				pull("10.20.0.5:5000/web:1.1.0", "dial tcp 10.20.0.5:5000: i/o timeout")))
			return c.diagnoseOne("api")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dg := tt.build(newCluster())
			if dg == nil || len(dg.Suspects) == 0 {
				t.Fatalf("no diagnosis or no suspects: %+v", dg)
			}
			top := dg.Suspects[0]
			if top.Rule != rules.RuleImageRegistryDown {
				t.Fatalf("top suspect = %s %s, want %s", top.Rule, top.Path, rules.RuleImageRegistryDown)
			}
			if dg.Cause != CauseUnknown {
				t.Errorf("cause = %s, want unknown", dg.Cause)
			}
			if strings.Contains(top.Reason, "is at fault") || !strings.Contains(top.Reason, "mistyped") {
				t.Errorf("reason %q tells another story than cause %s", top.Reason, dg.Cause)
			}
		})
	}
}
