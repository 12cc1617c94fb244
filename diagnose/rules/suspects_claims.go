package rules

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/storage/volume"
)

// The unbound-claim rules. IDs are stable: scripts and the documentation refer to them.
const (
	RuleClaimSelector    RuleID = "storage-claim-selector"
	RuleClaimRequest     RuleID = "storage-claim-request"
	RuleClaimAccessModes RuleID = "storage-claim-access-modes"
	RuleClaimVolumeMode  RuleID = "storage-claim-volume-mode"
	RuleClaimClass       RuleID = "storage-claim-class"
	RuleClaimUnbound     RuleID = "storage-claim-unbound"
)

// claimsFamily reads a Pending claim against the PersistentVolumes and names the claim's field
// that no volume satisfies.
var _ = register(family{
	order:  61,
	name:   "claims",
	detect: (*ranker).claimRules,
	rules: []RuleInfo{
		{
			RuleClaimSelector, "A claim's selector matches no volume",
			"FailedScheduling `pod has unbound immediate PersistentVolumeClaims` with the pod's claim (or its volumeClaimTemplate) Pending and carrying spec.selector that no available volume's labels match (without the volumes in the snapshot: any selector, which only pre-made volumes can satisfy)",
			"Make the claim's selector match a volume's labels (kubectl get pv --show-labels), or drop it and let a StorageClass provision.", false,
		},
		{
			RuleClaimRequest, "A claim asks more storage than any volume of its class has",
			"A Pending claim (FailedBinding `no persistent volumes available for this claim ...`, FailedScheduling `pod has unbound immediate PersistentVolumeClaims` or `didn't find available persistent volumes to bind`) whose spec.resources.requests[storage] exceeds the capacity of every available volume of its class",
			"Ask for no more than the volumes have (kubectl get pv), or make a volume that large.", false,
		},
		{
			RuleClaimAccessModes, "No volume of the claim's class offers its access modes",
			"A Pending claim whose spec.accessModes no available volume of its class offers (volumes with room for it exist)",
			"Ask for a mode the volumes offer (ReadWriteOnce for most block storage), or make a volume that offers it.", false,
		},
		{
			RuleClaimVolumeMode, "No volume of the claim's class has its volume mode",
			"A Pending claim whose spec.volumeMode (Filesystem or Block) no available volume of its class has",
			"Ask for the volume mode the volumes have, or make a volume of that mode.", false,
		},
		{
			RuleClaimClass, "No volume has the claim's storage class and nothing provisions it",
			"A Pending claim whose spec.storageClassName no available volume carries, with no provisioner for it: FailedBinding `... no storage class is set`, ProvisioningFailed `storageclass.storage.k8s.io \"x\" not found` or `no provisionable volume plugin matched`",
			"Name the class the volumes carry (kubectl get pv), or a StorageClass that provisions (kubectl get storageclass).", false,
		},
		{
			RuleClaimUnbound, "A claim is unbound and the volumes were not read",
			"A Pending claim the pods wait for, with the PersistentVolumes not in the snapshot (forbidden, or a dump without them): which field no volume satisfies is unknown",
			"Compare the claim with the volumes (kubectl get pv; kubectl describe pvc), or read them: they need get, list and watch on persistentvolumes.", false,
		},
	},
})

// What the scheduler's VolumeBinding plugin writes when a pod's claims find no volume
// (pkg/scheduler/framework/plugins/volumebinding, the same in v1.31.14 and v1.37.2):
// volume_binding.go PreFilter `pod has unbound immediate PersistentVolumeClaims` for a claim of
// an Immediate class the PV controller has not bound, and binder.go ErrReasonBindConflict
// `node(s) didn't find available persistent volumes to bind` per node for a WaitForFirstConsumer
// claim no volume matches there. Its other reasons (not enough free storage, a volume's node
// affinity, a bound volume that does not exist) are about volumes that exist or are bound.
const (
	reasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	reasonBindConflict     = "node(s) didn't find available persistent volumes to bind"
)

// bindingNote is the PV controller's word on an unbound claim, read from the claim's events
// (pkg/controller/volume/persistentvolume/pv_controller.go, the same in v1.31.14 and v1.37.2).
type bindingNote int

const (
	noteNone bindingNote = iota
	// noteNoClass: syncUnboundClaim found no volume for a claim without a class:
	// FailedBinding "no persistent volumes available for this claim and no storage class is set".
	noteNoClass
	// noteClassNotFound: provisionClaim's findProvisionablePlugin could not get the class from
	// its lister: ProvisioningFailed `storageclass.storage.k8s.io "NAME" not found`.
	noteClassNotFound
	// noteNoPlugin: the class names an in-tree provisioner (kubernetes.io/...) that has no
	// plugin, kubernetes.io/no-provisioner among them: ProvisioningFailed
	// "no provisionable volume plugin matched" (pkg/volume/plugins.go FindProvisionablePluginByName).
	noteNoPlugin
	// noteExternal: provisionClaimOperationExternal hands the claim to an external provisioner:
	// ExternalProvisioning "Waiting for a volume to be created either by the external
	// provisioner 'NAME' or manually by the system administrator. ...".
	noteExternal
	// noteFirstConsumer: a WaitForFirstConsumer claim no pod uses yet: WaitForFirstConsumer
	// "waiting for first consumer to be created before binding".
	noteFirstConsumer
)

const externalProvisionerPrefix = "Waiting for a volume to be created either by the external provisioner '"

// readBindingEvent reads one event of a claim: the PV controller's note and the name it
// carries (the class or the provisioner), or noteNone.
func readBindingEvent(reason, message string) (bindingNote, string) {
	switch reason {
	case "FailedBinding":
		if message == "no persistent volumes available for this claim and no storage class is set" {
			return noteNoClass, ""
		}
	case "ProvisioningFailed":
		if m := reStorageClass.FindStringSubmatch(message); m != nil {
			return noteClassNotFound, m[1]
		}
		if message == "no provisionable volume plugin matched" {
			return noteNoPlugin, ""
		}
	case "ExternalProvisioning":
		if rest, ok := strings.CutPrefix(message, externalProvisionerPrefix); ok {
			name, _, _ := strings.Cut(rest, "'")
			return noteExternal, name
		}
	case "WaitForFirstConsumer":
		return noteFirstConsumer, ""
	}
	return noteNone, ""
}

// noVolumeReason reports whether a FitError's reason list holds one of VolumeBinding's
// no-volume reasons, with or without its node count.
func noVolumeReason(list string) bool {
	for _, part := range strings.Split(list, ", ") {
		if rm := reFitReason.FindStringSubmatch(part); rm != nil {
			part = rm[2]
		}
		if part == reasonUnboundImmediate || part == reasonBindConflict {
			return true
		}
	}
	return false
}

// claimRules names, for each Pending claim the pods wait for, the field no volume satisfies.
// The pods' FailedScheduling or the claim's own binding events start it.
func (r *ranker) claimRules() {
	if len(r.in.Claims) == 0 {
		return
	}
	msg := ""
	for _, s := range r.in.Signals {
		if !strings.HasPrefix(s.Text, "0/") {
			continue
		}
		if m := reFitError.FindStringSubmatch(s.Text); m != nil && noVolumeReason(m[2]) {
			r.read(s)
			msg = s.Text
			break
		}
	}
	seen, why := r.volumesSeen()
	for _, pvc := range r.in.Claims {
		if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" {
			continue
		}
		note, name, text := r.bindingNote(pvc)
		if msg == "" && note != noteNoClass && note != noteClassNotFound && note != noteNoPlugin {
			continue
		}
		evidence := msg
		if text != "" {
			evidence = joinEvidence(text, msg)
		}
		c := r.claimTarget(pvc)
		if !seen {
			r.claimUnseen(c, note, why, msg, evidence)
			continue
		}
		r.claimUnmet(c, note, name, evidence)
	}
}

func joinEvidence(a, b string) string {
	if b == "" || a == b {
		return a
	}
	return a + "; " + b
}

// claimTarget is where a claim's fields are changed: the StatefulSet's volumeClaimTemplate it
// was made from, else the claim itself.
type claimTarget struct {
	pvc    *corev1.PersistentVolumeClaim
	object string
	obj    any
	spec   *field.Path
}

func (r *ranker) claimTarget(pvc *corev1.PersistentVolumeClaim) claimTarget {
	if i := r.claimTemplateOf(pvc.Name); i >= 0 {
		// The workload's own field: obj nil.
		return claimTarget{pvc, r.in.Object, nil, field.NewPath("spec", "volumeClaimTemplates").Index(i).Child("spec")}
	}
	return claimTarget{pvc, "PersistentVolumeClaim/" + pvc.Name, pvc, field.NewPath("spec")}
}

func (r *ranker) claimSuspect(c claimTarget, rule RuleID, p *field.Path, score int, reason string) {
	if c.obj == nil {
		r.suspectWorkload(rule, p, score, reason)
		return
	}
	r.suspectObject(rule, c.object, c.obj, p, score, reason)
}

// volumesSeen reports whether the PersistentVolumes were read, and why not.
func (r *ranker) volumesSeen() (bool, string) {
	return r.in.VolumesUnread == "", r.in.VolumesUnread
}

// bindingNote is the newest PV controller note among the claim's events, with its message.
func (r *ranker) bindingNote(pvc *corev1.PersistentVolumeClaim) (bindingNote, string, string) {
	note, name, text := noteNone, "", ""
	for _, e := range r.in.ClaimEvents {
		if e.InvolvedObject.Name != pvc.Name {
			continue
		}
		if n, nm := readBindingEvent(e.Reason, e.Message); n != noteNone {
			note, name, text = n, nm, e.Reason+" "+e.Message
		}
	}
	return note, name, text
}

// claimUnseen says a claim is unbound when the volumes were not read. A selector asks for a
// pre-made volume carrying those labels, and of a claim's asks (class, access modes, size,
// labels) the labels are the narrowest, so it is named; a class the PV controller could not
// find is the storage-class rule's. Otherwise the claim is named as a whole.
func (r *ranker) claimUnseen(c claimTarget, note bindingNote, why, sched, msg string) {
	if c.pvc.Spec.Selector != nil {
		if sched == "" {
			sched = msg
		}
		r.claimSuspect(c, RuleClaimSelector, c.spec.Child("selector"), scoreCertain,
			"claim "+c.pvc.Name+" is Pending and only a volume with the labels its selector asks can bind it: "+sched)
		return
	}
	if note == noteClassNotFound && c.object == r.in.Object {
		return
	}
	r.claimSuspect(c, RuleClaimUnbound, c.spec, scorePossible,
		"claim "+c.pvc.Name+" is Pending; the PersistentVolumes were not read ("+why+"), so which of its fields no volume satisfies is unknown: "+msg)
}

// claimField is one of a claim's asks that a volume must meet, in the order claimUnmet tells them.
type claimField int

const (
	askVolumeMode claimField = iota
	askSelector
	askAccessModes
	askRequest
	askCount
)

// claimUnmet decides, as the PV controller matches (index.go findByClaim: the volumes whose
// access modes include the claim's, then component-helpers FindMatchingVolume: capacity,
// volume mode, class, selector, phase), which field of the claim no available volume
// satisfies. The class picks the pool: without a volume of the class (and nothing to provision
// one) the class is at fault; within the pool, a field no volume meets is certain, and where
// each is met by some volume, a field whose change alone would let a volume bind is likely.
func (r *ranker) claimUnmet(c claimTarget, note bindingNote, name, msg string) {
	pvc := c.pvc
	avail := availableVolumes(r.in.Volumes, pvc)
	if len(avail) == 0 && pvc.Spec.Selector != nil {
		// No volume at all meets any ask; of them the labels are the narrowest: only a
		// pre-made volume carrying them can bind the claim.
		r.claimSuspect(c, RuleClaimSelector, c.spec.Child("selector"), scoreCertain,
			"claim "+pvc.Name+" is Pending, no volume is available, and only one with the labels its selector asks can bind it: "+msg)
		return
	}
	var modes []*corev1.PersistentVolume
	for _, pv := range avail {
		if volume.CheckAccessModes(pvc, pv) {
			modes = append(modes, pv)
		}
	}
	if m, err := volume.FindMatchingVolume(pvc, modes, nil, nil, false, true); err != nil || m != nil {
		// A volume matches (the claim binds at the next sync, or waits for its first
		// consumer), or the claim cannot be read as the controller reads it.
		return
	}
	class := volume.GetPersistentVolumeClaimClass(pvc)
	var pool []*corev1.PersistentVolume
	for _, pv := range avail {
		if volume.GetPersistentVolumeClass(pv) == class {
			pool = append(pool, pv)
		}
	}
	if len(pool) == 0 {
		r.claimClass(c, avail, class, note, name, msg)
		return
	}
	var sel labels.Selector
	if pvc.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil {
			return
		}
		sel = s
	}
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	meets := func(pv *corev1.PersistentVolume, f claimField) bool {
		switch f {
		case askVolumeMode:
			return !volume.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec)
		case askSelector:
			return sel == nil || sel.Matches(labels.Set(pv.Labels))
		case askAccessModes:
			return volume.CheckAccessModes(pvc, pv)
		default:
			q := pv.Spec.Capacity[corev1.ResourceStorage]
			return q.Cmp(want) >= 0
		}
	}
	var none, alone, some []claimField
	// near[f] are the volumes that meet every ask but f.
	var near [askCount][]*corev1.PersistentVolume
	for f := claimField(0); f < askCount; f++ {
		met := 0
		for _, pv := range pool {
			if meets(pv, f) {
				met++
				continue
			}
			allElse := true
			for g := claimField(0); g < askCount && allElse; g++ {
				allElse = g == f || meets(pv, g)
			}
			if allElse {
				near[f] = append(near[f], pv)
			}
		}
		switch {
		case met == 0:
			none = append(none, f)
		case len(near[f]) > 0:
			alone = append(alone, f)
		case met < len(pool):
			some = append(some, f)
		}
	}
	in := countVolumes(len(pool)) + " of class " + quoteClass(class)
	switch {
	case len(none) > 0:
		for _, f := range none {
			r.claimAsk(c, f, scoreCertain, "the "+in, pool, msg)
		}
	case len(alone) > 0:
		// Each ask is met by some volume, none meets all: the asks whose change alone would
		// let a volume bind.
		for _, f := range alone {
			r.claimAsk(c, f, scoreLikely, "the "+countVolumes(len(near[f]))+" of class "+quoteClass(class)+" that meet its other asks", near[f], msg)
		}
	default:
		for _, f := range some {
			r.claimAsk(c, f, scorePossible, "some of the "+in, pool, msg)
		}
	}
}

// claimAsk records the suspect of one unmet field, its reason naming what the volumes have.
func (r *ranker) claimAsk(c claimTarget, f claimField, score int, in string, pool []*corev1.PersistentVolume, msg string) {
	pvc := c.pvc
	head := "claim " + pvc.Name + " is Pending: "
	switch f {
	case askVolumeMode:
		mode := corev1.PersistentVolumeFilesystem
		if pvc.Spec.VolumeMode != nil {
			mode = *pvc.Spec.VolumeMode
		}
		r.claimSuspect(c, RuleClaimVolumeMode, c.spec.Child("volumeMode"), score,
			head+"it asks volumeMode "+string(mode)+"; "+in+" do not have it: "+msg)
	case askSelector:
		r.claimSuspect(c, RuleClaimSelector, c.spec.Child("selector"), score,
			head+in+" do not carry the labels its selector asks ("+metav1.FormatLabelSelector(pvc.Spec.Selector)+"): "+msg)
	case askAccessModes:
		asked := make([]string, 0, len(pvc.Spec.AccessModes))
		for _, m := range pvc.Spec.AccessModes {
			asked = append(asked, string(m))
		}
		r.claimSuspect(c, RuleClaimAccessModes, c.spec.Child("accessModes"), score,
			head+"it asks "+strings.Join(asked, ", ")+"; "+in+" offer "+offeredModes(pool)+": "+msg)
	case askRequest:
		want, most := pvc.Spec.Resources.Requests[corev1.ResourceStorage], largest(pool)
		r.claimSuspect(c, RuleClaimRequest, c.spec.Child("resources", "requests").Key("storage"), score,
			head+"it asks "+want.String()+"; "+in+" have at most "+most.String()+": "+msg)
	}
}

// claimClass names the class when no available volume carries it. Nothing provisions a claim
// without a class, nor one whose class the controller could not find or has no in-tree plugin
// for: then the class is certain. A class handed to an external provisioner waits for it: only
// possible. Without a word from the controller, likely.
func (r *ranker) claimClass(c claimTarget, avail []*corev1.PersistentVolume, class string, note bindingNote, name, msg string) {
	if note == noteClassNotFound && c.object == r.in.Object && name == class {
		// A volumeClaimTemplate's missing class is the storage-class rule's.
		return
	}
	score := scoreLikely
	switch {
	case class == "" || note == noteNoClass || note == noteClassNotFound || note == noteNoPlugin:
		score = scoreCertain
	case note == noteExternal:
		score = scorePossible
	}
	have := "no volume is available"
	if len(avail) > 0 {
		have = "the available volumes have class " + volumeClasses(avail)
	}
	r.claimSuspect(c, RuleClaimClass, c.spec.Child("storageClassName"), score,
		"claim "+c.pvc.Name+" is Pending: no available volume has class "+quoteClass(class)+" ("+have+") and nothing provisions one: "+msg)
}

// availableVolumes are the volumes the claim could bind: not being deleted, and either free
// (Available) or already bound to this claim.
func availableVolumes(pvs []*corev1.PersistentVolume, pvc *corev1.PersistentVolumeClaim) []*corev1.PersistentVolume {
	var out []*corev1.PersistentVolume
	for _, pv := range pvs {
		if pv.DeletionTimestamp != nil {
			continue
		}
		if pv.Spec.ClaimRef != nil {
			if volume.IsVolumeBoundToClaim(pv, pvc) {
				out = append(out, pv)
			}
			continue
		}
		if pv.Status.Phase == corev1.VolumeAvailable {
			out = append(out, pv)
		}
	}
	return out
}

// classHasVolumes reports whether the snapshot's volumes are read and one carries the class:
// then the class names a pool of pre-made volumes, which a missing StorageClass does not fault.
func (r *ranker) classHasVolumes(class string) bool {
	if seen, _ := r.volumesSeen(); !seen {
		return false
	}
	for _, pv := range r.in.Volumes {
		if volume.GetPersistentVolumeClass(pv) == class {
			return true
		}
	}
	return false
}

func largest(pvs []*corev1.PersistentVolume) resource.Quantity {
	var most resource.Quantity
	for _, pv := range pvs {
		if q := pv.Spec.Capacity[corev1.ResourceStorage]; q.Cmp(most) > 0 {
			most = q
		}
	}
	return most
}

func offeredModes(pvs []*corev1.PersistentVolume) string {
	set := map[string]bool{}
	for _, pv := range pvs {
		ms := make([]string, 0, len(pv.Spec.AccessModes))
		for _, m := range pv.Spec.AccessModes {
			ms = append(ms, string(m))
		}
		sort.Strings(ms)
		set[strings.Join(ms, "+")] = true
	}
	return sortedJoin(set, " or ")
}

func volumeClasses(pvs []*corev1.PersistentVolume) string {
	set := map[string]bool{}
	for _, pv := range pvs {
		set[quoteClass(volume.GetPersistentVolumeClass(pv))] = true
	}
	return sortedJoin(set, ", ")
}

func sortedJoin(set map[string]bool, sep string) string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, sep)
}

func quoteClass(class string) string {
	if class == "" {
		return `""`
	}
	return class
}

func countVolumes(n int) string { return strconv.Itoa(n) + " available volume(s)" }

// claimTemplateOf is the index of the volumeClaimTemplate a StatefulSet's claim was made from
// (named <template>-<statefulset>-<ordinal>), or -1.
func (r *ranker) claimTemplateOf(claim string) int {
	for i := range r.in.ClaimTemplates {
		prefix := r.in.ClaimTemplates[i].Name + "-" + r.in.Name + "-"
		if rest, ok := strings.CutPrefix(claim, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return i
		}
	}
	return -1
}
