package rules

import (
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RuleVolumeMultiAttach is the attach family's rule. IDs are stable: scripts and the
// documentation refer to them.
const RuleVolumeMultiAttach RuleID = "volume-multi-attach"

// attachFamily reads the attach/detach controller's refusal to attach a volume to a second node.
var _ = register(family{
	order:  100,
	name:   "attach",
	detect: (*ranker).attachRules,
	rules: []RuleInfo{
		{
			RuleVolumeMultiAttach, "Copies on several nodes share a volume that attaches to one node at a time (ReadWriteOnce)",
			"FailedAttachVolume `Waiting for detach for volume \"pvc-…\" Volume is already used by pod(s) …` (or `exclusively attached to one node`)",
			"Run one copy of a workload that writes a ReadWriteOnce claim (or give each its own, as a StatefulSet's volumeClaimTemplates do); roll it out with the Recreate strategy.", false,
		},
	},
})

// The attach/detach controller's event (pkg/controller/volume/attachdetach/reconciler:
// reportMultiAttachError, through VolumeToAttach.GenerateMsg): `Waiting for detach for volume
// "PV" Volume is already used by pod(s) P1, P2` when copies elsewhere use it, or `... Volume is
// already exclusively attached to one node, waiting on detach before it can be attached to
// another node` when none is left that does.
var (
	reAttachUsedBy    = regexp.MustCompile(`for volume "([^"]+)" Volume is already used by pod\(s\) ([^ ]+(?:, [^ ]+)*)`)
	reAttachExclusive = regexp.MustCompile(`for volume "([^"]+)" Volume is already exclusively attached to one node`)
)

// attachRules names what makes copies on two nodes want one volume: more than one copy, or a
// rollout that starts the new copy before the old one let go.
func (r *ranker) attachRules() {
	for _, s := range r.in.Signals {
		if s.Reason != "FailedAttachVolume" || s.Explained {
			continue
		}
		used := reAttachUsedBy.FindStringSubmatch(s.Text)
		exclusive := reAttachExclusive.FindStringSubmatch(s.Text)
		if used == nil && exclusive == nil {
			continue
		}
		r.read(s)
		s.Explained = true
		volume := ""
		var holders []string
		if used != nil {
			volume, holders = used[1], strings.Split(used[2], ", ")
		} else {
			volume = exclusive[1]
		}
		// Whose copies hold it: this revision's (too many copies), an older one's (a rollout
		// that overlaps them), or none left (an old copy's node has not let go yet).
		var current, older, others []string
		for _, h := range holders {
			switch f := r.copyNamed(h); {
			case f == nil:
				others = append(others, h)
			case f.Current:
				current = append(current, h)
			default:
				older = append(older, h)
			}
		}
		said := "volume " + volume + " attaches to one node at a time"
		rolling := r.in.RollingUpdate
		claim := scorePossible
		switch {
		case len(current) > 0:
			r.suspectWorkload(RuleVolumeMultiAttach, field.NewPath("spec", "replicas"), scoreCertain,
				said+", and "+strconv.Itoa(int(r.in.Declared))+" copies share it: "+strings.Join(current, ", ")+" already uses it")
			if rolling {
				r.suspectWorkload(RuleVolumeMultiAttach, field.NewPath("spec", "strategy", "type"), scorePossible,
					said+": with one copy, a rolling update still overlaps the old and new copy; Recreate stops the old one first")
			}
		case len(older) > 0 || len(holders) == 0:
			// An older revision's copy holds it, or none is left and its node has not let go.
			if rolling {
				r.suspectWorkload(RuleVolumeMultiAttach, field.NewPath("spec", "strategy", "type"), scoreCertain,
					said+": the rolling update starts the new copy while the old one still holds it"+heldBy(older)+"; Recreate stops the old copy first")
			}
		default:
			// Pods of another workload hold it: the claim is shared between workloads.
			claim = scoreCertain
			said += ", and pods of another workload use it: " + strings.Join(others, ", ")
		}
		for j, v := range r.in.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				r.suspectTemplate(RuleVolumeMultiAttach, r.specPath.Child("volumes").Index(j).Child("persistentVolumeClaim", "claimName"), claim,
					said+"; every copy mounts claim "+v.PersistentVolumeClaim.ClaimName)
			}
		}
	}
}

// copyNamed is the workload's copy of that name, nil when it has none.
func (r *ranker) copyNamed(name string) *Copy {
	for i := range r.in.Copies {
		if f := &r.in.Copies[i]; f.Name == name {
			return f
		}
	}
	return nil
}

func heldBy(holders []string) string {
	if len(holders) == 0 {
		return ""
	}
	return " (" + strings.Join(holders, ", ") + ")"
}
