package rules

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The lifecycle hook rules. IDs are stable: scripts and the documentation refer to them.
const (
	RulePostStartHook RuleID = "post-start-hook"
	RulePreStopHook   RuleID = "pre-stop-hook"
)

// hookFamily reads the kubelet's record of a failing lifecycle hook (Kubernetes v1.37,
// pkg/kubelet/kuberuntime/kuberuntime_container.go and pkg/kubelet/lifecycle/handlers.go): a
// postStart hook that fails makes the kubelet record Warning FailedPostStartHook "PostStartHook
// failed" (without the hook's output, "so that secrets won't leak"), kill the container
// (Normal Killing "FailedPostStartHook") and report it waiting as PostStartHookError with the
// handler's message, "Exec lifecycle hook ([cmd]) for Container "c" in Pod "p" failed - error:
// ..., message: ..." or "HTTP lifecycle hook (/path) for Container ... failed - error: Get ...";
// the container then starts and dies like any crash loop. A preStop hook that fails records
// Warning FailedPreStopHook "PreStopHook failed"; the container is stopped all the same.
var _ = register(family{
	order:  75,
	name:   "hook",
	detect: (*ranker).lifecycleHooks,
	rules: []RuleInfo{
		{
			RulePostStartHook, "The container's postStart hook fails, so the kubelet kills the container at every start",
			"FailedPostStartHook events, a PostStartHookError state and its handler message",
			"Fix the hook: an exec hook's command must exist in the image and exit 0, an httpGet hook must reach a port the container listens on; or remove the hook.", false,
		},
		{
			RulePreStopHook, "The container's preStop hook fails, so the container stops without its shutdown step",
			"FailedPreStopHook events",
			"Fix the hook: an exec hook's command must exist in the image and exit 0, an httpGet hook must reach a port the container listens on; or remove the hook.", false,
		},
	},
})

// lifecycleHooks names the failing hook of each container whose hook the kubelet says failed.
func (r *ranker) lifecycleHooks() {
	spec := &r.in.Template.Spec
	for ci := range spec.Containers {
		c := &spec.Containers[ci]
		if c.Lifecycle == nil {
			continue
		}
		base := r.specPath.Child("containers").Index(ci).Child("lifecycle")
		if h := c.Lifecycle.PostStart; h != nil {
			if sigs, msg := r.hookSignals(c.Name, "FailedPostStartHook", "PostStartHookError"); len(sigs) > 0 {
				r.readAll(sigs)
				path, why := hookField(base.Child("postStart"), h, msg)
				r.suspectTemplate(RulePostStartHook, path, scoreCertain,
					"the postStart hook of container "+c.Name+" fails and the kubelet kills the container"+r.copiesOf(sigs)+why)
				markExplained(sigs)
			}
		}
		if h := c.Lifecycle.PreStop; h != nil {
			if sigs, msg := r.hookSignals(c.Name, "FailedPreStopHook", ""); len(sigs) > 0 {
				r.readAll(sigs)
				path, why := hookField(base.Child("preStop"), h, msg)
				r.suspectTemplate(RulePreStopHook, path, scoreLikely,
					"the preStop hook of container "+c.Name+" fails, so it stops without its shutdown step"+r.copiesOf(sigs)+why)
				markExplained(sigs)
			}
		}
	}
}

// hookSignals returns the signals of container's failing hook (its event reason, the kill that
// follows it, its waiting reason) and the handler's message, when a state carries one.
func (r *ranker) hookSignals(container, eventReason, stateReason string) ([]*Signal, string) {
	var sigs []*Signal
	msg := ""
	for _, s := range r.in.Signals {
		if s.Container != "" && s.Container != container {
			continue
		}
		switch {
		case s.Reason == eventReason, s.Reason == "Killing" && s.Text == eventReason:
			sigs = append(sigs, s)
		case stateReason != "" && s.Reason == stateReason:
			sigs = append(sigs, s)
			if msg == "" {
				msg = s.Text
			}
		}
	}
	return sigs, msg
}

// hookField is the field of a failing hook the handler's message implicates: an exec hook's
// command; an httpGet hook's port when the kubelet could not connect (a hook's HTTP status does
// not fail it: only the request does), else the handler; and what the message adds.
func hookField(p *field.Path, h *corev1.LifecycleHandler, msg string) (*field.Path, string) {
	detail := ""
	if i := strings.Index(msg, " failed - error: "); i >= 0 {
		detail = ": " + Clip(msg[i+len(" failed - error: "):], 160)
	}
	switch {
	case h.Exec != nil:
		return p.Child("exec", "command"), detail
	case h.HTTPGet != nil:
		if connectionFailure(msg) || msg == "" {
			return p.Child("httpGet", "port"), detail
		}
		return p.Child("httpGet"), detail
	case h.Sleep != nil:
		return p.Child("sleep", "seconds"), detail
	}
	return p, detail
}

// connectionFailure reports a message that says a connection could not be made.
func connectionFailure(msg string) bool {
	for _, s := range []string{"connection refused", "no route to host", "i/o timeout", "connection reset"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// explain marks signals as accounted for, so the general rule does not turn them into weaker
// suspects too.
func markExplained(sigs []*Signal) {
	for _, s := range sigs {
		s.Explained = true
	}
}
