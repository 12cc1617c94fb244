package rules

import "testing"

// The PV controller's and the scheduler's messages, copied from the sources of both supported
// versions (k8s.io/kubernetes v1.31.14 and v1.37.2: the same text in each).
const (
	// volumebinding's PreFilter reason (volume_binding.go ErrReasonUnboundImmediatePVC)
	unboundClaims = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	// pkg/controller/volume/persistentvolume/pv_controller.go syncUnboundClaim
	msgNoClass = "no persistent volumes available for this claim and no storage class is set"
	// pv_controller.go provisionClaim: err.Error() of the class lister's NotFound
	// (k8s.io/client-go/listers, errors.NewNotFound(storage.Resource("storageclass"), name))
	msgClassNotFound = `storageclass.storage.k8s.io "manual" not found`
	// pkg/volume/plugins.go FindProvisionablePluginByName, through provisionClaim
	msgNoPlugin = "no provisionable volume plugin matched"
	// pv_controller.go provisionClaimOperationExternal
	msgExternal = "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
	// pv_controller.go emitEventForUnboundDelayBindingClaim
	msgFirstConsumer = "waiting for first consumer to be created before binding"
	// pkg/scheduler/framework/plugins/volumebinding/binder.go ErrReasonBindConflict in a
	// FitError (pkg/scheduler/framework/types.go): v1.31.14 and v1.37.2
	bindConflict = "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	// binder.go ErrReasonNodeConflict: v1.31.14 and v1.37.2 word it differently, and it is
	// about bound volumes, not a claim no volume satisfies
	nodeConflict131 = "0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
	nodeConflict137 = "0/3 nodes are available: 3 node(s) didn't match PersistentVolume's node affinity. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)

func TestReadBindingEvent(t *testing.T) {
	tests := []struct {
		reason, message string
		note            bindingNote
		name            string
	}{
		{"FailedBinding", msgNoClass, noteNoClass, ""},
		{"ProvisioningFailed", msgClassNotFound, noteClassNotFound, "manual"},
		{"ProvisioningFailed", msgNoPlugin, noteNoPlugin, ""},
		{"ExternalProvisioning", msgExternal, noteExternal, "ebs.csi.aws.com"},
		{"WaitForFirstConsumer", msgFirstConsumer, noteFirstConsumer, ""},
		// pv_controller.go syncUnboundClaim, a claim asking for a volume bound elsewhere: not
		// a claim no volume satisfies
		{"FailedBinding", `volume "pv-7" already bound to a different claim.`, noteNone, ""},
		{"ProvisioningFailed", "failed to provision volume with StorageClass \"gp3\": rpc error: code = Internal", noteNone, ""},
	}
	for _, tt := range tests {
		note, name := readBindingEvent(tt.reason, tt.message)
		if note != tt.note || name != tt.name {
			t.Errorf("%s %q: note %d %q, want %d %q", tt.reason, tt.message, note, name, tt.note, tt.name)
		}
	}
}

func TestNoVolumeReason(t *testing.T) {
	for msg, want := range map[string]bool{
		unboundClaims:   true,
		bindConflict:    true,
		nodeConflict131: false,
		nodeConflict137: false,
		"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.": false,
	} {
		m := reFitError.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%q is no FitError", msg)
		}
		if got := noVolumeReason(m[2]); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
}
